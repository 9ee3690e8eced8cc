#!/usr/bin/env bash
# Installs, from Debian's packages, whatever agentware's build, tests and
# benchmarks need and this machine lacks. Safe to run again: it asks apt only
# for missing packages.
set -euo pipefail

packages=(
  g++ cmake ninja-build          # toolchain
  clang-16                       # second compiler (clang 14 lacks parts of C++20)
  libclang-rt-16-dev             # its sanitizer runtimes (CI's ASan, UBSan and TSan builds)
  clang-format-16                # the formatter CI checks every C++ file with (cmake/check-format.sh)
  libboost1.81-dev               # Hana, JSON, Beast, Asio (all used header-only)
  libfmt-dev                     # fmt 9
  libssl-dev                     # HTTPS for the model clients
  libyaml-cpp-dev                # config.yaml and SKILL.md front matter (yaml-cpp 0.7)
  catch2                         # tests (Catch2 v2)
  libbenchmark-dev               # Google Benchmark
  nodejs npm                     # the MCP reference servers mcp_test runs (tests/mcp)
  bubblewrap                     # the isolated sandbox (bash in namespaces, without Docker)
  python3-venv                   # the virtual environment of CI's pinned Conan 2 (cmake/conan-test.sh)
  libpq-dev                      # libpq 15, the PostgreSQL client (postgres/, the optional component `postgres`)
  postgresql-15                  # the server the PostgreSQL tests start in a temporary folder
  redis-server                   # the server the Redis tests start on a socket in a temporary folder
)

missing=()
for p in "${packages[@]}"; do
  [[ "$p" == \#* ]] && continue
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

# A machine with node and npm from elsewhere (nodesource, nvm) needs no Debian ones.
if command -v node >/dev/null && command -v npm >/dev/null; then
  kept=()
  for p in "${missing[@]}"; do [[ "$p" == nodejs || "$p" == npm ]] || kept+=("$p"); done
  missing=("${kept[@]}")
fi

if ((${#missing[@]} == 0)); then
  echo "install-deps: every Debian package is installed"
else
  echo "install-deps: installing ${missing[*]}"
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "install-deps: run as root or install sudo" >&2; exit 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The MCP servers mcp_test runs, at the versions tests/mcp/package-lock.json pins
# (the only step that needs the network; the tests themselves do not).
mcp_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../tests/mcp" && pwd)"
if [[ ! -d "$mcp_dir/node_modules" || "$mcp_dir/package-lock.json" -nt "$mcp_dir/node_modules" ]]; then
  echo "install-deps: npm ci in tests/mcp"
  (cd "$mcp_dir" && npm ci --no-audit --no-fund && touch node_modules)
fi

#!/usr/bin/env bash
# CI: the Conan 2 recipe creates its package and passes its own test_package,
# with the option with_yaml on and off. Conan comes from PyPI at a pinned
# version, into a virtual environment under build-conan/, with its cache
# (CONAN_HOME) there too: nothing outside build-conan/ changes but Debian's
# packages (cmake/install-deps.sh). No Conan remote is used: Boost, fmt,
# OpenSSL and yaml-cpp are Debian's, named in the profile's [platform_requires]
# at the versions dpkg reports. Safe to run again.
#
# Environment: AGENTWARE_CONAN_JOBS, the compile jobs (default 2, as CI's other stages).
set -euo pipefail
cd "$(dirname "$0")/.."

# Pinned, with everything it pulls in (cmake/conan-requirements.txt): a new
# Conan, or a new version of one of its dependencies, is a change to review,
# not a surprise in CI.
conan_version=$(sed -n 's/^conan==//p' cmake/conan-requirements.txt)
jobs=${AGENTWARE_CONAN_JOBS:-2}
build_dir="$PWD/build-conan"
venv="$build_dir/venv"
export CONAN_HOME="$build_dir/home"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

# The compiler, CMake, Ninja, Debian's libraries and python3-venv.
./cmake/install-deps.sh </dev/null

if [[ "$("$venv/bin/conan" --version 2>/dev/null)" != "Conan version $conan_version" ]]; then
  echo "conan-test: installing Conan $conan_version into $venv"
  python3 -m venv --clear "$venv"
  "$venv/bin/pip" install --quiet --no-deps --requirement cmake/conan-requirements.txt </dev/null
  "$venv/bin/pip" check
fi
conan="$venv/bin/conan"

# The profile of this machine (compiler, its version, standard library, arch),
# detected again each time so that a changed compiler is seen.
"$conan" profile detect --force </dev/null >/dev/null

# The version of a Debian package as Conan spells it: 1:3.0.19-1~deb12u2 -> 3.0.19.
debian_version() {
  local version
  version=$(dpkg-query -W -f='${Version}' "$1") || { echo "conan-test: $1 is not installed" >&2; exit 1; }
  version=${version#*:}
  echo "${version%%[-+~]*}"
}

# The host profile's additions: C++20 (the recipe's minimum; g++ 12 defaults
# to gnu17), the dependencies Debian provides, and the recipe's mode for them
# (find_package loads agentware's own CMake config, which finds Debian's
# libraries; CMakeDeps generates nothing for platform requirements).
cat >"$CONAN_HOME/profiles/debian12" <<EOF
[settings]
compiler.cppstd=20
[platform_requires]
boost/$(debian_version libboost1.81-dev)
fmt/$(debian_version libfmt-dev)
openssl/$(debian_version libssl-dev)
yaml-cpp/$(debian_version libyaml-cpp-dev)
[conf]
user.agentware:use_installed_config=True
tools.build:jobs=$jobs
tools.cmake.cmaketoolchain:generator=Ninja
# test_package builds under build-conan/, and writes no CMakeUserPresets.json into the sources.
tools.cmake.cmake_layout:test_folder=$build_dir/test_package
tools.cmake.cmaketoolchain:user_presets=
EOF

for with_yaml in True False; do
  echo "conan-test: conan create, with_yaml=$with_yaml"
  "$conan" create . --no-remote -pr:b default -pr:h default -pr:h debian12 \
    -o "agentware/*:with_yaml=$with_yaml" </dev/null
done
echo "conan-test: conan create passed its test_package with and without yaml"

#!/usr/bin/env bash
# Installs what server_bench needs for its JS side: the LangGraph JS dev server
# (@langchain/langgraph-cli and -api) and the createAgent graph of agent.mjs,
# pinned by package-lock.json, into BUILD_DIR/benchmarks/server-js (npm ci:
# needs the npm registry once). Without it server_bench skips the JS side.
#   benchmarks/server/install.sh [BUILD_DIR]     (default: build-bench)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build-bench}
dest="$build/benchmarks/server-js"
mkdir -p "$dest"
cp "$here/package.json" "$here/package-lock.json" "$here/agent.mjs" "$here/langgraph.json" "$dest/"
cd "$dest"
npm ci --no-audit --no-fund
echo "installed the LangGraph JS server into $(pwd)"

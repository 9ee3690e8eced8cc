#!/usr/bin/env bash
# Sets up the JavaScript side of two benchmarks in BUILD_DIR/benchmarks/server-js:
#  - server_bench: the LangGraph JS dev server (@langchain/langgraph-cli and
#    -api) serving the createAgent graph of agent.mjs;
#  - the checkpoint comparison: checkpoint_postgres.mjs, which times
#    LangGraph's PostgresSaver (@langchain/langgraph-checkpoint-postgres).
# Versions come from package-lock.json (npm ci, which needs the npm registry
# the first time). A benchmark that finds nothing there skips its JS side.
#   benchmarks/server/install.sh [BUILD_DIR]     (default: build-bench)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build-bench}
dest="$build/benchmarks/server-js"
mkdir -p "$dest"
cp "$here/package.json" "$here/package-lock.json" "$here/agent.mjs" \
  "$here/langgraph.json" "$here/checkpoint_postgres.mjs" "$dest/"
cd "$dest"
npm ci --no-audit --no-fund
echo "installed the LangGraph JS server and checkpoint script into $(pwd)"

#!/usr/bin/env bash
# CTest (server_sdk.js, server_sdk.python): drives `agentware serve` with an
# official LangGraph client, the JS SDK (@langchain/langgraph-sdk) or the Python
# one (langgraph-sdk), each pinned with everything it pulls in
# (tests/server/sdk/package-lock.json, requirements.txt).
#
#   server-sdk-test.sh js|python AGENTWARE_CLI BUILD_DIR
#
# Installs the client once into BUILD_DIR/server-sdk/ (npm ci; a virtual
# environment with pip install --no-deps, then pip check; again only when the
# pins change), starts the server on 127.0.0.1 with a free port and a fresh
# data directory, and runs the client's phases against it:
#   restart-1  a thread stopped on a human review (its id is kept),
#   main       every other scenario (tests/server/sdk/*_client.*),
# then stops the server (SIGTERM), starts it again on the same data directory
# with restart_script.json (a new process starts its script from the first
# answer), and runs
#   restart-2  the review answered after the restart.
# The server is always stopped on exit. Exit status: the first failing
# client's, or 1 when the server misbehaves (does not start, does not stop).
#
# Environment: AGENTWARE_SDK_TEST_AUTH=1 serves with --auth-token-file and has
# the client send the token; AGENTWARE_SDK_KEEP_GOING=1 has the client run every
# scenario after a failure.
set -euo pipefail

if [[ $# -ne 3 || ( $1 != js && $1 != python ) ]]; then
  echo "usage: $0 js|python AGENTWARE_CLI BUILD_DIR" >&2
  exit 2
fi
client=$1
cli=$(realpath "$2")
build_dir=$(realpath "$3")
sdk_src="$(cd "$(dirname "$0")/.." && pwd)/tests/server/sdk"
install_dir="$build_dir/server-sdk"
run_dir="$install_dir/run-$client"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

say() { echo "server-sdk-test ($client): $*"; }

# ---- the pinned client, installed once

install_js() {
  local dir="$install_dir/js"
  if [[ -d "$dir/node_modules/@langchain/langgraph-sdk" ]] && cmp -s "$sdk_src/package-lock.json" "$dir/package-lock.json" &&
    cmp -s "$sdk_src/package.json" "$dir/package.json"; then
    return
  fi
  say "installing the JS SDK into $dir (npm ci)"
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$sdk_src/package.json" "$sdk_src/package-lock.json" "$dir/"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error </dev/null)
}

install_python() {
  local venv="$install_dir/venv"
  if [[ -x "$venv/bin/python" ]] && cmp -s "$sdk_src/requirements.txt" "$venv/requirements.txt"; then
    return
  fi
  say "installing the Python SDK into $venv (pip --no-deps)"
  python3 -m venv --clear "$venv"
  "$venv/bin/pip" install --quiet --no-deps --requirement "$sdk_src/requirements.txt" </dev/null
  "$venv/bin/pip" check
  cp "$sdk_src/requirements.txt" "$venv/requirements.txt"
}

mkdir -p "$install_dir"
if [[ $client == js ]]; then
  install_js
  # Node resolves the SDK from the script's own folder: the driver runs from beside node_modules.
  cp "$sdk_src/js_client.mjs" "$install_dir/js/js_client.mjs"
  run_client() { node "$install_dir/js/js_client.mjs" "$@"; }
else
  install_python
  run_client() { "$install_dir/venv/bin/python" "$sdk_src/python_client.py" "$@"; }
fi

# ---- the server

rm -rf "$run_dir"
mkdir -p "$run_dir/data"
server_pid=""
server_count=0
auth_args=()
if [[ ${AGENTWARE_SDK_TEST_AUTH:-0} == 1 ]]; then
  token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
  printf '%s\n' "$token" >"$run_dir/token"
  auth_args=(--auth-token-file "$run_dir/token")
  export AGENTWARE_SERVER_TOKEN=$token
fi

show_server_log() {
  local log="$run_dir/server-$server_count.err"
  [[ -s $log ]] || return 0
  say "the server's stderr ($log), last 40 lines:"
  tail -n 40 "$log" | sed 's/^/    /'
}

cleanup() {
  if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_server SCRIPT: starts the server, sets server_pid and url.
start_server() {
  server_count=$((server_count + 1))
  local out="$run_dir/server-$server_count.out" err="$run_dir/server-$server_count.err"
  (cd "$run_dir" && exec "$cli" serve --script "$1" --config "$sdk_src/config.json" --host 127.0.0.1 --port 0 \
    --data "$run_dir/data" "${auth_args[@]}" >"$out" 2>"$err") &
  server_pid=$!
  local line="" deadline=$((SECONDS + 30))
  while :; do
    line=$(grep -m1 '^agentware serve: listening on http://127\.0\.0\.1:[0-9]*$' "$out" 2>/dev/null || true)
    [[ -n $line ]] && break
    if ! kill -0 "$server_pid" 2>/dev/null; then
      wait "$server_pid" && status=0 || status=$?
      say "the server exited ($status) before it listened; its stdout: $(head -c 500 "$out")"
      show_server_log
      server_pid=""
      exit 1
    fi
    if ((SECONDS > deadline)); then
      say "the server did not print 'agentware serve: listening on http://127.0.0.1:PORT' within 30 s; its stdout: $(head -c 500 "$out")"
      show_server_log
      exit 1
    fi
    sleep 0.1
  done
  url=${line#agentware serve: listening on }
  say "server $server_count listening on $url (data: $run_dir/data)"
}

# stop_server: SIGTERM, then the server must exit 0 within 15 s.
stop_server() {
  kill -TERM "$server_pid"
  local deadline=$((SECONDS + 15))
  while kill -0 "$server_pid" 2>/dev/null; do
    if ((SECONDS > deadline)); then
      say "the server did not exit within 15 s of SIGTERM"
      show_server_log
      exit 1
    fi
    sleep 0.1
  done
  local status=0
  wait "$server_pid" || status=$?
  server_pid=""
  if ((status != 0)); then
    say "the server exited with status $status after SIGTERM (expected 0)"
    show_server_log
    exit 1
  fi
}

# ---- the phases

result=0
fail() { ((result != 0)) || result=$1; }

start_server "$sdk_src/script.json"

phase1_out="$run_dir/restart-1.out"
status=0
run_client "$url" restart-1 | tee "$phase1_out" || status=$? # pipefail: the client's status
thread_id=$(sed -n 's/^RESTART_THREAD_ID //p' "$phase1_out")
if ((status != 0)); then fail "$status"; fi

status=0
run_client "$url" main || status=$?
if ((status != 0)); then
  fail "$status"
  show_server_log
fi

stop_server

if [[ -n $thread_id ]]; then
  start_server "$sdk_src/restart_script.json"
  status=0
  run_client "$url" restart-2 "$thread_id" || status=$?
  if ((status != 0)); then
    fail "$status"
    show_server_log
  fi
  stop_server
else
  say "restart-1 gave no thread id: the restart is not tested"
  fail 1
fi

if ((result == 0)); then say "passed"; else say "failed ($result)"; fi
exit "$result"

#!/usr/bin/env bash
# Checks the library's one-way layers (docs/architecture.md): a header of a
# folder includes only headers of its own folder and of the folders listed
# before it below. An include that runs up the table fails CI, naming the file,
# the line and both layers. A new folder must be added here (the check fails
# on a folder it does not know).
set -euo pipefail
cd "$(dirname "$0")/.."

# Bottom to top. Folders on one line are peers: they may not include each other.
layers=(
  "detail"
  "json"
  "config postgres redis"
  "core"
  "message"
  "state"
  "thread"
  "model"
  "tool"
  "agent"
  "filesystem memory"
  "skills mcp"
  "subagents"
  "middleware"
  "presets"
  "server"
)
# The top-level headers: each at the layer of what it gathers.
declare -A file_layer=([core.hpp]=core [message.hpp]=message [src.hpp]=top [agentware.hpp]=top)

declare -A level
for i in "${!layers[@]}"; do
  for folder in ${layers[$i]}; do level[$folder]=$i; done
done
level[top]=${#layers[@]}

# The layer of a path relative to include/agentware/ (or "agentware.hpp").
layer_of() {
  local rel=$1
  if [[ $rel != */* ]]; then echo "${file_layer[$rel]:-unknown}"; else echo "${rel%%/*}"; fi
}

status=0
while IFS= read -r -d '' file; do
  rel=${file#include/agentware/}
  [[ $file == include/agentware.hpp ]] && rel=agentware.hpp
  from=$(layer_of "$rel")
  if [[ -z ${level[$from]:-} ]]; then
    echo "check-layers: $file: folder \"$from\" is not in the layer table (cmake/check-layers.sh)"
    status=1
    continue
  fi
  while IFS=: read -r line target; do
    to=$(layer_of "$target")
    if [[ -z ${level[$to]:-} ]]; then
      echo "check-layers: $file:$line: includes <agentware/$target>, whose folder \"$to\" is not in the layer table"
      status=1
    elif [[ $from != "$to" ]] && (( level[$to] >= level[$from] )); then
      echo "check-layers: $file:$line: <agentware/$target> is in layer \"$to\", not below \"$from\""
      status=1
    fi
  done < <(grep -n -o '^[[:space:]]*#[[:space:]]*include[[:space:]]*<agentware/[^>]*>' "$file" |
           sed -E 's|^([0-9]+):.*<agentware/([^>]*)>|\1:\2|')
done < <(find include -type f \( -name '*.hpp' -o -name '*.ipp' \) -print0 | sort -z)
if (( status == 0 )); then echo "check-layers: every include runs down the layer table"; fi
exit $status

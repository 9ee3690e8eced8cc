#!/usr/bin/env bash
# Checks that every C++ file of the repository is formatted by clang-format-16
# with the repository's .clang-format (CI runs it); with --fix, formats them.
# Only clang-format 16: other versions format some constructs differently.
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=${CLANG_FORMAT:-clang-format-16}
if [[ "${1:-}" == "--fix" ]]; then mode=(-i); else mode=(--dry-run --Werror); fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files -z -- '*.cpp' '*.hpp' '*.h' '*.ipp' | xargs -0 -r "$clang_format" "${mode[@]}"
else
  find include tests examples benchmarks test_package \( -name '*.[ch]pp' -o -name '*.ipp' \) -print0 | xargs -0 -r "$clang_format" "${mode[@]}"
fi
echo "check-format: every C++ file is formatted"

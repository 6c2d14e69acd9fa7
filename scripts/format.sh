#!/usr/bin/env bash
# clang-format over every C++ source in the repository (tracked or new, never ignored files).
# Usage: scripts/format.sh check|fix
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-check}
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.cc' '*.h' | sort -u)
[ "${#files[@]}" -gt 0 ] || exit 0
if [ "$mode" = fix ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
if ! clang-format --dry-run --Werror "${files[@]}"; then
  echo "format-check: the files above are not clang-formatted; run 'make format'." >&2
  exit 1
fi
echo "format-check: ${#files[@]} files formatted"

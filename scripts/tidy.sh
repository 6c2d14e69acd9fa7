#!/usr/bin/env bash
# clang-tidy (checks in .clang-tidy) over our C++ sources, with the build's compile commands.
# Exits non-zero if any check fires.
# Usage: scripts/tidy.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
# Generated headers (protobuf stubs, build_config.h) must exist before sources that include them.
cmake --build "$build_dir" --target alsim_proto alsim_engine > /dev/null
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.cc' | sort -u)
report=$(mktemp)
trap 'rm -f "$report"' EXIT
printf '%s\n' "${files[@]}" |
  xargs -P "$(nproc)" -n 1 clang-tidy -p "$build_dir" --quiet > "$report" 2>&1 || true
if grep -qE '(warning|error): ' "$report"; then
  grep -v -E '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$' "$report"
  echo "tidy: clang-tidy found problems (above)" >&2
  exit 1
fi
echo "tidy: ${#files[@]} files clean"

#!/usr/bin/env bash
# Soak test: clients create, step, stream, save/restore and destroy instances against a fresh
# alsim-server for a set time while its resident memory is sampled; prints the slope of RSS after
# warm-up (goal: flat). Builds nothing: run `make build` first.
#
# Usage: scripts/soak.sh [SECONDS (default 3600)] [CLIENTS (default 4)] [CSV (default soak.csv)]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-3600}"
clients="${2:-4}"
out="${3:-soak.csv}"
PYTHONPATH="$PWD/client/python" exec /usr/bin/python3 scripts/soak.py \
  --bin-dir "${BUILD_DIR:-build}/bin" --seconds "$seconds" --clients "$clients" --out "$out"

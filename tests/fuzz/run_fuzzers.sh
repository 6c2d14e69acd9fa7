#!/usr/bin/env bash
# Runs the libFuzzer targets of tests/fuzz (`make fuzz`, `make fuzz-ci`; docs/fuzzing.md).
#
# Usage: tests/fuzz/run_fuzzers.sh BUILD_DIR SECONDS [TARGET...]
#
# The targets are BUILD_DIR/bin/fuzz/<target> (the build tree of everything else, built with
# clang). Each target (all of them when none is named) runs for SECONDS on
# BUILD_DIR/fuzz/corpus/<target>, a working copy of its seeds (tests/fuzz/corpus/<target>, never
# written to) that keeps what earlier runs found, plus the reproducers of past findings
# (tests/fuzz/regressions/<target>), which run first. SECONDS=0 only replays the seeds, the working
# corpus and the reproducers. A crash, leak, timeout, out-of-memory or sanitizer report fails the
# target and leaves the input in BUILD_DIR/fuzz/artifacts/<target>/; the whole log is
# BUILD_DIR/fuzz/logs/<target>.log. Prints executions and coverage per target; exits non-zero when
# any target failed.
#
# FUZZ_JOBS=N (default 1) runs N targets at a time, each for its own SECONDS (make passes its JOBS).
# The RPC targets keep a client and a server thread busy, so N at a time on N cores run fewer
# executions each (docs/fuzzing.md: 61 % of them in all, the same coverage, in 55 % of the time).
#
# FUZZ_SEED=N seeds libFuzzer's mutations (make fuzz-ci sets it, so that a CI run follows the same
# mutations for the same code and a red run reproduces); unset, libFuzzer picks a new seed each run
# and prints it in the log ("INFO: Seed:").
set -uo pipefail
cd "$(dirname "$0")/../.."
fuzz_dir=tests/fuzz

if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR SECONDS [TARGET...]" >&2
  exit 2
fi
build_dir=$1
seconds=$2
shift 2
jobs=${FUZZ_JOBS:-1}
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
bin_dir=$build_dir/bin/fuzz
out_dir=$build_dir/fuzz
all_targets=(scene_import_fuzzer state_snapshot_fuzzer create_fuzzer step_fuzzer reset_fuzzer
             get_state_fuzzer set_state_fuzzer destroy_fuzzer stream_states_fuzzer
             step_stream_fuzzer info_list_fuzzer)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")

# Sanitizer settings: every report is fatal; known leaks (lsan.supp) are suppressed.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-}${UBSAN_OPTIONS:+:}print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="${LSAN_OPTIONS:-}${LSAN_OPTIONS:+:}suppressions=$PWD/$fuzz_dir/lsan.supp:print_suppressions=0"

# One target: its result line goes to OUT_DIR/logs/<target>.result (the first word: ok or failed),
# what a failure left to read to stderr.
run_target() {
  local target=$1
  local binary=$bin_dir/$target
  local corpus=$out_dir/corpus/$target
  local artifacts=$out_dir/artifacts/$target
  local log=$out_dir/logs/$target.log
  local result=$out_dir/logs/$target.result
  if [ ! -x "$binary" ]; then
    echo "fuzz: $binary is not built (make fuzz builds it)" >&2
    printf 'failed %-22s not built\n' "$target" > "$result"
    return
  fi
  mkdir -p "$corpus" "$artifacts"
  cp -n "$fuzz_dir/corpus/$target"/* "$corpus"/ 2>/dev/null || true
  local args=(-rss_limit_mb=2048 -timeout=25 -print_final_stats=1 -artifact_prefix="$artifacts/")
  [ -f "$fuzz_dir/$target.dict" ] && args+=(-dict="$fuzz_dir/$target.dict")
  [ -n "${FUZZ_SEED:-}" ] && args+=(-seed="$FUZZ_SEED")
  if [ "$seconds" -gt 0 ]; then
    args+=(-max_total_time="$seconds")
  else
    args+=(-runs=0)
  fi
  local dirs=("$corpus")
  [ -d "$fuzz_dir/regressions/$target" ] && dirs+=("$fuzz_dir/regressions/$target")
  echo "== $target: ${seconds}s on $corpus ($(ls "$corpus" | wc -l) inputs)"
  local before
  before=$(ls "$artifacts" | wc -l)
  "$binary" "${args[@]}" "${dirs[@]}" > "$log" 2>&1
  local status=$?
  local done_line runs speed line
  done_line=$(grep -E '^#[0-9]+[[:space:]]+[A-Z]+[[:space:]]+cov:' "$log" | tail -1 | sed -E 's/^#[0-9]+[[:space:]]+//')
  runs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
  speed=$(grep -E '^stat::average_exec_per_sec' "$log" | awk '{print $2}')
  line=$(printf '%-22s %s executions (%s/s) %s' "$target" "${runs:-?}" "${speed:-?}" "$done_line")
  if [ $status -ne 0 ]; then
    local seed
    seed=$(grep -m1 -E '^INFO: Seed: ' "$log" | awk '{print $3}')
    line="$line  FAILED (exit $status, seed ${seed:-?})"
    {
      echo "fuzz: $target failed; the end of $log:"
      tail -n 60 "$log"
      if [ "$(ls "$artifacts" | wc -l)" -gt "$before" ]; then
        echo "fuzz: reproducer(s) in $artifacts/: $(ls -t "$artifacts" | head -n 3 | tr '\n' ' ')"
        echo "fuzz: replay with $binary ${artifacts}/<file>"
      fi
    } >&2
    echo "failed $line" > "$result"
  else
    echo "ok $line" > "$result"
  fi
  echo "$line"
}

mkdir -p "$out_dir/logs"
for target in "${targets[@]}"; do
  rm -f "$out_dir/logs/$target.result"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  run_target "$target" &
done
wait

failed=()
summary=()
for target in "${targets[@]}"; do
  result=$out_dir/logs/$target.result
  if [ ! -f "$result" ]; then
    printf 'failed %-22s no result\n' "$target" > "$result"
  fi
  read -r state line < "$result"
  [ "$state" = ok ] || failed+=("$target")
  summary+=("$line")
done

echo
echo "fuzz summary ($seconds s per target, $jobs at a time; logs in $out_dir/logs/):"
printf '  %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  # Last, so that a CI log cut to its tail still says what failed and on which input: each failed
  # target's first report line and libFuzzer's Base64 of the input (printed for small inputs;
  # decode with `base64 -d > input` and replay with the target).
  for target in "${failed[@]}"; do
    log=$out_dir/logs/$target.log
    [ -f "$log" ] || continue
    report=$(grep -m1 -E '(==[0-9]+==ERROR|^ERROR|ALARM|out-of-memory|deadly signal|runtime error|^[a-z_]+_fuzzer: )' "$log")
    input=$(grep -m1 -E '^Base64: ' "$log")
    echo "fuzz: $target: ${report:-no report line (see $log)}" >&2
    [ -n "$input" ] && echo "fuzz: $target: input ${input}" >&2
  done
  echo "fuzz: FAILED: ${failed[*]} (artifacts in $out_dir/artifacts/)" >&2
  exit 1
fi
echo "fuzz: all ${#targets[@]} targets passed"

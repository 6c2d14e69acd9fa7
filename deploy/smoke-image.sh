#!/usr/bin/env bash
# Smoke test of the image deploy/build-image.sh built: start it, wait for its health check, create
# and step instances with the CLI inside the container, scrape its metrics, stop it with SIGTERM
# and check that it drained and exited 0. Then start it REPEAT more times to time start-ups.
#
#   deploy/smoke-image.sh [--tag NAME] [--repeat N]
#
# NAME: the image (default alsim); N: extra start-ups timed (default 3). The container runs
# without a network (--network=none): every call is made inside it, through `podman exec`.
# Start-up time: from `podman run` to the first passing health check (the image's HEALTHCHECK,
# `alsim health`, run by `podman healthcheck run` every 50 ms). Containers this script started are
# removed on exit, whatever happens.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TAG=alsim
REPEAT=3

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }
die() {
  echo "smoke-image: FAILED: $*" >&2
  exit 1
}
log() { echo "smoke-image: $*" >&2; }

while [ $# -gt 0 ]; do
  case "$1" in
    --tag) [ $# -ge 2 ] || die "--tag needs a name"; TAG="$2"; shift 2 ;;
    --repeat)
      [[ $# -ge 2 && "$2" =~ ^[0-9]+$ ]] || die "--repeat needs a count (0 or more)"
      REPEAT="$2"
      shift 2
      ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

PODMAN_LOG_PREFIX=smoke-image
# shellcheck source=deploy/podman-options.sh
. "$ROOT/deploy/podman-options.sh"
# shellcheck disable=SC2119 # it takes no arguments
podman_choose_global || die "podman does not work on this machine (messages above)"
"${PODMAN[@]}" image exists "$TAG" || die "no image $TAG: build it with deploy/build-image.sh"
podman_choose_run "$TAG" || die "podman cannot run containers here (messages above)"

STARTED=()
cleanup() {
  local name
  for name in "${STARTED[@]}"; do
    "${PODMAN[@]}" rm -f -t 0 "$name" >/dev/null 2>&1 || true
  done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s.%N; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# Starts a container `name` (extra `podman run` options after it) and waits until its health check
# passes; prints the seconds that took. Run in $(...), it cannot add to STARTED: the caller does,
# before calling it.
start() {
  local name="$1" t0 state out
  shift
  t0=$(now)
  # Without systemd, podman cannot make the timer that would run the health check periodically
  # and logs so: that is expected here (this script runs the check itself), other errors are not.
  if ! out=$("${PODMAN[@]}" run -d --name "$name" "${PODMAN_RUN[@]}" "$@" "$TAG" 2>&1); then
    echo "$out" >&2
    die "podman run $TAG failed"
  fi
  grep -v 'unable to get systemd connection' <<<"$out" | grep -i 'level=error' >&2 || true
  for _ in $(seq 1 1200); do
    if "${PODMAN[@]}" healthcheck run "$name" >/dev/null 2>&1; then
      seconds "$t0" "$(now)"
      return 0
    fi
    state=$("${PODMAN[@]}" inspect --format '{{.State.Status}}' "$name")
    if [ "$state" = exited ]; then
      "${PODMAN[@]}" logs "$name" >&2 || true
      die "$name exited before its health check passed (its log is above)"
    fi
    sleep 0.05
  done
  "${PODMAN[@]}" logs "$name" >&2 || true
  die "$name: no passing health check in 60 s (podman healthcheck run; its log is above)"
}

# `alsim ARGS` inside the container `name`; its output on stdout.
cli() {
  local name="$1"
  shift
  "${PODMAN[@]}" exec "$name" alsim "$@" || die "'alsim $*' in the container failed"
}

# The /metrics page of the container's server, fetched inside it with bash alone (the image has
# no HTTP client, and the container no network to reach from outside).
scrape() {
  "${PODMAN[@]}" exec "$1" bash -c 'exec 3<>/dev/tcp/127.0.0.1/9464 &&
    printf "GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n" >&3 && cat <&3' ||
    die "scraping http://127.0.0.1:9464/metrics in the container failed"
}

# The value of the unlabelled series `name` in the scrape on stdin.
series() { awk -v name="$1" '$1 == name { print $2; found = 1 } END { exit !found }'; }

# Stops `name` with SIGTERM (the image's STOPSIGNAL; SIGKILL only after `grace` s) and checks its
# exit code; prints the seconds the stop took.
stop() {
  local name="$1" grace="$2" t0 code out
  t0=$(now)
  out=$("${PODMAN[@]}" stop -t "$grace" "$name" 2>&1) || {
    echo "$out" >&2
    die "podman stop $name failed"
  }
  grep -v 'unable to get systemd connection' <<<"$out" | grep -i 'level=error' >&2 || true
  code=$("${PODMAN[@]}" inspect --format '{{.State.ExitCode}}' "$name")
  [ "$code" = 0 ] || {
    "${PODMAN[@]}" logs "$name" >&2 || true
    die "$name exited with code $code after SIGTERM, not 0 (137: killed after the grace)"
  }
  seconds "$t0" "$(now)"
}

size=$("${PODMAN[@]}" image inspect --format '{{.Size}}' "$TAG")
log "image $TAG: $((size / 1000000)) MB ($size bytes)"
"${PODMAN[@]}" image inspect --format '{{.Config.Healthcheck}}' "$TAG" | grep -q 'alsim health' ||
  die "$TAG has no HEALTHCHECK running 'alsim health' (build it with --format docker)"

name="alsim-smoke-$$"
STARTED+=("$name")
# A state directory, so that the drain has instances to save and says so; a short call grace.
startup=$(start "$name" -e ALSIM_STATE_DIR=/tmp/alsim-state -e ALSIM_SHUTDOWN_GRACE=5)
log "healthy $startup s after podman run"
"${PODMAN[@]}" logs "$name" 2>&1 | grep -q 'serving gRPC on 0.0.0.0:50051, metrics on' ||
  die "the server's log has no 'serving gRPC on 0.0.0.0:50051' line"

cli "$name" server-info | sed 's/^/  server-info: /' >&2
boxes=$(cli "$name" create box_stack --count 4 --seed 7 --json)
robots=$(cli "$name" create quadruped_drop_8 --count 2 --json)
group() { python3 -c 'import json, sys; print(json.load(sys.stdin)["group_id"])'; }
box_group=$(group <<<"$boxes")
robot_group=$(group <<<"$robots")
log "created box_stack x4 (group $box_group) and quadruped_drop_8 x2 (group $robot_group)"
for g in "$box_group" "$robot_group"; do
  report=$(cli "$name" step --group "$g" --steps 20 --substeps 5 --random-actions --json)
  python3 - "$g" "$report" <<'EOF' || die "stepping group $g did not give 2 or 4 instances, all OK"
import json, sys
report = json.loads(sys.argv[2])
statuses = [i["status"] for i in report["instances"]]
times = [i["time"] for i in report["instances"]]
assert report["steps"] == 20 and report["substeps"] == 5, report
assert len(statuses) in (2, 4) and all(s == "OK" for s in statuses), statuses
assert all(t > 0 for t in times), times
print("smoke-image: group %s: %d instances stepped 100 times each, t = %.3f s, %.1f ms per call"
      % (sys.argv[1], len(statuses), times[0], 1000 * report["wall_seconds"] / report["steps"]),
      file=sys.stderr)
EOF
done
cli "$name" list | sed 's/^/  list: /' >&2
count='import json, sys; print(len(json.load(sys.stdin)["instances"]))'
[ "$(cli "$name" list --json | python3 -c "$count")" = 6 ] ||
  die "alsim list does not show the 6 instances"

metrics=$(scrape "$name")
steps=$(series alsim_steps_total <<<"$metrics") || die "no alsim_steps_total in /metrics"
awk -v s="$steps" 'BEGIN { exit !(s >= 600) }' || die "alsim_steps_total $steps < 6 x 100"
for s in process_cpu_seconds_total process_resident_memory_bytes process_start_time_seconds \
  alsim_instances alsim_instances_limit alsim_instances_diverged_total; do
  v=$(series "$s" <<<"$metrics") || die "no $s in /metrics"
  log "metric $s $v"
done
[ "$(series alsim_instances <<<"$metrics")" = 6 ] || die "alsim_instances is not 6"

stopped=$(stop "$name" 60)
logs=$("${PODMAN[@]}" logs "$name" 2>&1)
for line in "alsim-server: SIGTERM, shutting down (grace 5 s)" \
  "alsim-server: saved 6 instance(s) in /tmp/alsim-state" "alsim-server: stopped"; do
  grep -qF "$line" <<<"$logs" || {
    echo "$logs" >&2
    die "the server's log has no '$line' line (the log is above)"
  }
done
log "SIGTERM: drained (saved 6 instances), exit code 0, $stopped s after podman stop"

startups=("$startup")
for k in $(seq 1 "$REPEAT"); do
  STARTED+=("$name-$k")
  t=$(start "$name-$k")
  stop "$name-$k" 60 >/dev/null
  startups+=("$t")
done
log "start-up (podman run to first passing health check), s: ${startups[*]}"
echo "smoke-image: PASSED: image $TAG $((size / 1000000)) MB; start-up ${startups[*]} s;" \
  "stop (SIGTERM to exit 0) $stopped s"

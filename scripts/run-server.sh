#!/usr/bin/env bash
# `make run`: starts alsim-server, proves it serves with a real gRPC call (ServerInfo), runs a
# demo client (16 humanoid instances stepped with random actions under a progress bar, then the
# throughput), then leaves 16 humanoids stepping in real time and starts the browser viewer
# (`alsim view`, when its page is built) on VIEWER_ADDR, prints its URL and the metrics URL, and
# keeps serving until Ctrl-C or SIGTERM, which it forwards to the server for a graceful stop (and
# to the viewer and the stepping demo). DEMO=0 skips both demos; VIEWER=none skips the viewer.
# Usage: scripts/run-server.sh BIN_DIR LISTEN_ADDR METRICS_ADDR [VIEWER_ADDR]
set -euo pipefail
bin_dir=${1:?bin dir}
listen=${2:-127.0.0.1:50051}
metrics=${3:-127.0.0.1:9464}
viewer=${4:-127.0.0.1:8080}

"$bin_dir/alsim-server" --listen "$listen" --metrics "$metrics" &
server_pid=$!
helper_pids=()
stop() {
  for pid in "${helper_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  kill -TERM "$server_pid" 2>/dev/null || true
}
trap stop INT TERM

if ! "$bin_dir/alsim" --address "$listen" --wait 15 server-info; then
  echo "run: the server did not answer; stopping it" >&2
  stop
  wait "$server_pid" || true
  exit 1
fi
if [ "${DEMO:-1}" != "0" ]; then
  echo "demo: 16 humanoid instances, 300 batched steps with random actions"
  "$bin_dir/alsim" --address "$listen" --timeout 60 bench humanoid --instances 16 --steps 300 ||
    echo "run: the demo client failed (the server keeps serving)" >&2
  # Humanoids to look at: 16 instances stepped in real time (50 calls/s of 4 steps of 5 ms) with
  # random controls, until the server stops.
  if group=$("$bin_dir/alsim" --address "$listen" --timeout 60 create humanoid --count 16 |
             sed -n 's/^group \([0-9]*\).*/\1/p') && [ -n "$group" ]; then
    "$bin_dir/alsim" --address "$listen" step --group "$group" --steps 1000000000 --substeps 4 \
      --rate 50 --random-actions >/dev/null 2>&1 &
    helper_pids+=($!)
    echo "demo: 16 humanoids (group $group) stepping in real time with random controls"
  fi
fi
if [ "$viewer" != "none" ] && [ -f "$bin_dir/viewer/index.html" ]; then
  "$bin_dir/alsim" --address "$listen" view --listen "$viewer" &
  helper_pids+=($!)
  sleep 0.5  # its URL line comes before ours
elif [ "$viewer" != "none" ]; then
  echo "viewer: not built (its page needs npm: scripts/install-deps.sh)" >&2
fi
if [ "$metrics" != "none" ] && command -v curl >/dev/null; then
  echo "metrics: http://$metrics/metrics"
  curl -s --max-time 5 "http://$metrics/metrics" |
    grep -E '^(alsim_build_info|alsim_instances|alsim_steps_total)' | sed 's/^/  /' || true
fi
echo "alsim-server is serving on $listen (pid $server_pid). Press Ctrl-C to stop."

# `wait` returns early when a trapped signal arrives; keep waiting until the server has exited.
status=0
while kill -0 "$server_pid" 2>/dev/null; do
  wait "$server_pid" && status=0 || status=$?
done
# The viewer and the stepping demo outlive no server.
for pid in "${helper_pids[@]}"; do
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
done
exit "$status"

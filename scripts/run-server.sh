#!/usr/bin/env bash
# `make run`: starts alsim-server, proves it serves with a real gRPC call (ServerInfo), runs a
# demo client (16 humanoid instances stepped with random actions under a progress bar, then the
# throughput), prints the metrics URL, and keeps serving until Ctrl-C or SIGTERM, which it
# forwards to the server for a graceful stop. DEMO=0 skips the demo.
# Usage: scripts/run-server.sh BIN_DIR LISTEN_ADDR METRICS_ADDR
set -euo pipefail
bin_dir=${1:?bin dir}
listen=${2:-127.0.0.1:50051}
metrics=${3:-127.0.0.1:9464}

"$bin_dir/alsim-server" --listen "$listen" --metrics "$metrics" &
server_pid=$!
stop() { kill -TERM "$server_pid" 2>/dev/null || true; }
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
exit "$status"

# shellcheck shell=bash
# Sourced by deploy/build-image.sh and deploy/smoke-image.sh: finds the podman options that work on
# this machine, by trying them, and says which it chose and why.
#
# Development machines are often containers themselves, where podman's defaults fail in one of a
# few known ways: no overlay filesystem inside the container (storage driver vfs then), no systemd
# (cgroup manager cgroupfs), no CAP_SYS_RESOURCE to set the container's rlimits to podman's
# defaults (runc: "error setting rlimits ... operation not permitted"; explicit limits no higher
# than this shell's then), or no way to start an OCI runtime for build steps (isolation chroot).
#
# Sets (arrays): PODMAN (the command and its global options), PODMAN_RUN (options for `run`),
# PODMAN_BUILD (options for `build`). Needs a local image to try runs with: call
# podman_choose_global first, then podman_choose_run IMAGE and podman_choose_build IMAGE.

podman_log() { echo "${PODMAN_LOG_PREFIX:-podman}: $*" >&2; }

# The line of a failure that says why, for the messages.
podman_first_error() { grep -m1 '^Error:' <<<"$1" || tail -n1 <<<"$1"; }

# Global options: storage driver and cgroup manager. `podman info` fails outright when the
# storage driver cannot work here.
podman_choose_global() {
  if ! command -v podman >/dev/null 2>&1; then
    podman_log "podman is not installed: apt-get install -y podman runc (Debian 12)"
    return 1
  fi
  local tried out
  for tried in "" "--storage-driver vfs" "--storage-driver vfs --cgroup-manager cgroupfs"; do
    # shellcheck disable=SC2206
    PODMAN=(podman --runtime runc ${tried})
    if out=$("${PODMAN[@]}" info 2>&1); then
      if grep -q 'cgroupManager: systemd' <<<"$out" && [ ! -d /run/systemd/system ]; then
        PODMAN+=(--cgroup-manager cgroupfs)
        tried="$tried --cgroup-manager cgroupfs (systemd is not running)"
      fi
      podman_log "global options: ${PODMAN[*]:1};" \
        "storage driver $(grep -m1 'graphDriverName' <<<"$out" | awk '{print $2}')"
      return 0
    fi
    podman_log "'${PODMAN[*]} info' failed: $(podman_first_error "$out")"
  done
  podman_log "no working podman configuration found"
  return 1
}

# Options for `podman run`, tried on `image` with `true`.
podman_choose_run() {
  local image="$1" nofile out
  nofile=$(ulimit -Hn)
  [ "$nofile" = unlimited ] && nofile=1048576
  local -a candidates=(
    "--network=none"
    "--network=none --ulimit nofile=${nofile}:${nofile} --ulimit nproc=4096:4096"
    "--network=none --ulimit nofile=${nofile}:${nofile} --ulimit nproc=4096:4096 --cgroups=disabled"
  )
  local tried
  for tried in "${candidates[@]}"; do
    # shellcheck disable=SC2206
    PODMAN_RUN=(${tried})
    if out=$("${PODMAN[@]}" run --rm "${PODMAN_RUN[@]}" --entrypoint true "$image" 2>&1); then
      podman_log "run options: ${tried}"
      return 0
    fi
    podman_log "'podman run ${tried}' failed: $(podman_first_error "$out")"
  done
  podman_log "no working 'podman run' options found"
  return 1
}

# Options for `podman build`, tried with a one-step build on `image`.
podman_choose_build() {
  local image="$1" out dir tried nofile
  nofile=$(ulimit -Hn)
  [ "$nofile" = unlimited ] && nofile=1048576
  dir=$(mktemp -d)
  printf 'FROM %s\nRUN true\n' "$image" >"$dir/Containerfile"
  # --format docker keeps HEALTHCHECK (the OCI image format has no health check).
  local -a candidates=(
    "--format docker"
    "--format docker --ulimit nofile=${nofile}:${nofile} --ulimit nproc=4096:4096"
    "--format docker --isolation chroot"
  )
  for tried in "${candidates[@]}"; do
    # shellcheck disable=SC2206
    PODMAN_BUILD=(${tried})
    if out=$("${PODMAN[@]}" build --pull=never "${PODMAN_BUILD[@]}" --iidfile "$dir/iid" \
      -f "$dir/Containerfile" "$dir" 2>&1); then
      podman_log "build options: ${tried}"
      "${PODMAN[@]}" rmi "$(cat "$dir/iid")" >/dev/null 2>&1 || true
      rm -rf "$dir"
      return 0
    fi
    podman_log "'podman build ${tried}' failed: $(podman_first_error "$out")"
  done
  rm -rf "$dir"
  podman_log "no working 'podman build' options found"
  return 1
}

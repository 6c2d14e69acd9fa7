#!/usr/bin/env bash
# Builds the alsim-server image with podman, offline from any container registry.
#
#   deploy/build-image.sh [--build-dir DIR] [--from-source] [--tag NAME] [--rebuild-base]
#
# 1. The base: a debian:bookworm-slim equivalent made here with debootstrap (minbase, from the
#    Debian mirror apt is configured with; $ALSIM_DEBIAN_MIRROR overrides), trimmed as the
#    official slim image is (no documentation, manual pages, locales or apt lists; dpkg told to
#    keep leaving them out) and imported as localhost/alsim-base:bookworm-slim. Made once; reused
#    until --rebuild-base.
# 2. deploy/Dockerfile, built on that base. By default with the binaries of the Release build in
#    DIR (default build/, inside the repository: it is the build context), which must be current
#    (this script builds the three targets first); --from-source compiles them inside the image
#    build instead (minutes, not seconds: build dependencies and a full compile). Both fetch
#    Debian packages from the mirror during the build.
# Needs root (debootstrap), podman, debootstrap and runc: apt-get install -y podman debootstrap
# runc. The podman options that work here are found by trying them (deploy/podman-options.sh).
# Tags the image NAME (default alsim) and NAME:GIT_REVISION, and prints its size.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=build
BINARIES=prebuilt
TAG=alsim
REBUILD_BASE=0
BASE_IMAGE=localhost/alsim-base:bookworm-slim
SUITE=bookworm

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }
die() {
  echo "build-image: $*" >&2
  exit 1
}
log() { echo "build-image: $*" >&2; }

while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) [ $# -ge 2 ] || die "--build-dir needs a directory"; BUILD_DIR="$2"; shift 2 ;;
    --from-source) BINARIES=source; shift ;;
    --tag) [ $# -ge 2 ] || die "--tag needs a name"; TAG="$2"; shift 2 ;;
    --rebuild-base) REBUILD_BASE=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, and podman's system storage)"
for tool in podman debootstrap runc; do
  command -v "$tool" >/dev/null 2>&1 ||
    die "$tool is not installed: apt-get install -y podman debootstrap runc"
done
PODMAN_LOG_PREFIX=build-image
# shellcheck source=deploy/podman-options.sh
. "$ROOT/deploy/podman-options.sh"
# shellcheck disable=SC2119 # it takes no arguments
podman_choose_global || die "podman does not work on this machine (messages above)"

# The Debian mirror URIs apt uses here, for `suite` (bookworm or bookworm-security): from
# deb822 .sources paragraphs and one-line .list entries.
apt_mirror() {
  local suite="$1" file
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$file" ] || continue
    awk -v suite="$suite" '$1 == "deb" {
        i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
        if ($(i + 1) == suite) { print $i; exit } }' "$file"
  done
  for file in /etc/apt/sources.list.d/*.sources; do
    [ -f "$file" ] || continue
    awk -v suite="$suite" 'BEGIN { RS = ""; FS = "\n" } {
        uri = ""; ok = 0; deb = 0
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^URIs:/) { split($i, w, " "); uri = w[2] }
          if ($i ~ /^Types:/ && $i ~ /(^|[ \t])deb([ \t]|$)/) deb = 1
          if ($i ~ /^Suites:/) {
            n = split($i, w, " ")
            for (j = 2; j <= n; j++) if (w[j] == suite) ok = 1
          }
        }
        if (ok && deb && uri != "") { print uri; exit } }' "$file"
  done
}

make_base() {
  local mirror security rootfs
  mirror=${ALSIM_DEBIAN_MIRROR:-$(apt_mirror "$SUITE" | head -n1)}
  security=${ALSIM_DEBIAN_SECURITY_MIRROR:-$(apt_mirror "$SUITE-security" | head -n1)}
  [ -n "$mirror" ] ||
    die "no Debian $SUITE mirror in /etc/apt/sources.list*: set ALSIM_DEBIAN_MIRROR=URL"
  local start=$SECONDS
  rootfs=$(mktemp -d /var/tmp/alsim-base.XXXXXX)
  trap 'rm -rf "$rootfs"' EXIT
  log "debootstrap --variant=minbase $SUITE from $mirror (a minute or less)"
  if ! debootstrap --variant=minbase "$SUITE" "$rootfs" "$mirror" >"$rootfs.log" 2>&1; then
    tail -n 20 "$rootfs.log" >&2
    die "debootstrap failed (log: $rootfs.log)"
  fi
  rm -f "$rootfs.log"
  # What debian:bookworm-slim leaves out, and dpkg told to leave it out of later installs too.
  cat >"$rootfs/etc/dpkg/dpkg.cfg.d/slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/lintian/*
EOF
  find "$rootfs/usr/share/doc" -mindepth 1 ! -name copyright ! -type d -delete
  find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$rootfs/usr/share/man/"* "$rootfs/usr/share/groff/"* "$rootfs/usr/share/info/"* \
    "$rootfs/usr/share/lintian/"*
  find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias \
    -exec rm -rf {} +
  # apt in a container: no package cache kept, no services started by package scripts.
  cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'EOF'
APT::Keep-Downloaded-Packages "false";
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
Acquire::Languages "none";
EOF
  printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d"
  chmod 755 "$rootfs/usr/sbin/policy-rc.d"
  rm -f "$rootfs/etc/apt/sources.list"
  {
    printf 'Types: deb\nURIs: %s\nSuites: %s %s-updates\nComponents: main\n' \
      "$mirror" "$SUITE" "$SUITE"
    printf 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
    if [ -n "$security" ]; then
      printf '\nTypes: deb\nURIs: %s\nSuites: %s-security\nComponents: main\n' \
        "$security" "$SUITE"
      printf 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
    fi
  } >"$rootfs/etc/apt/sources.list.d/debian.sources"
  rm -rf "$rootfs/var/lib/apt/lists/"* "$rootfs/var/cache/apt/"*.bin \
    "$rootfs/var/cache/apt/archives/"*.deb "$rootfs/var/log/"*.log "$rootfs/tmp/"*
  rm -f "$rootfs/etc/hostname" "$rootfs/etc/resolv.conf"
  : >"$rootfs/etc/machine-id"
  log "importing $BASE_IMAGE ($(du -sh "$rootfs" | cut -f1))"
  tar --numeric-owner -C "$rootfs" -c . |
    "${PODMAN[@]}" import \
      --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'CMD ["bash"]' - "$BASE_IMAGE" >/dev/null
  rm -rf "$rootfs"
  trap - EXIT
  log "made $BASE_IMAGE in $((SECONDS - start)) s"
}

if [ "$REBUILD_BASE" = 1 ] || ! "${PODMAN[@]}" image exists "$BASE_IMAGE"; then
  make_base
else
  log "base $BASE_IMAGE exists (--rebuild-base makes it again)"
fi
podman_choose_build "$BASE_IMAGE" || die "podman cannot build here (messages above)"

cd "$ROOT"
build_args=(--build-arg "BASE_IMAGE=$BASE_IMAGE" --build-arg "ALSIM_BINARIES=$BINARIES")
if [ "$BINARIES" = prebuilt ]; then
  # The binaries link this machine's libraries by soname: only a Debian 12 host's match the
  # image's packages.
  grep -q '^VERSION_CODENAME=bookworm$' /etc/os-release 2>/dev/null ||
    die "prebuilt binaries need a Debian 12 (bookworm) build machine; use --from-source"
  BUILD_DIR=$(realpath -m "$BUILD_DIR")
  case "$BUILD_DIR/" in
    "$ROOT"/build*/*) ;;
    *) die "--build-dir must be a build*/ directory of $ROOT, the build context" \
      "(.dockerignore lets only build*/bin/ binaries through): $BUILD_DIR" ;;
  esac
  [ -f "$BUILD_DIR/CMakeCache.txt" ] ||
    die "$BUILD_DIR is not configured: cmake -S . -B $BUILD_DIR -G Ninja -DCMAKE_BUILD_TYPE=Release"
  grep -q '^CMAKE_BUILD_TYPE:STRING=Release$' "$BUILD_DIR/CMakeCache.txt" ||
    die "$BUILD_DIR is not a Release build (the image ships optimised binaries)"
  ! grep -q '^ALSIM_SANITIZE:STRING=.' "$BUILD_DIR/CMakeCache.txt" ||
    die "$BUILD_DIR is a sanitizer build (its runtime libraries are not in the image)"
  log "building alsim-server alsim-scene-compiler alsim in $BUILD_DIR"
  cmake --build "$BUILD_DIR" --target alsim-server alsim-scene-compiler alsim >/dev/null ||
    die "the build in $BUILD_DIR failed: cmake --build $BUILD_DIR --target alsim-server"
  build_args+=(--build-arg "ALSIM_PREBUILT_DIR=${BUILD_DIR#"$ROOT"/}/bin")
fi
revision=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)
log "podman build ($BINARIES binaries) -t $TAG -t $TAG:$revision"
start=$SECONDS
"${PODMAN[@]}" build --pull=never "${PODMAN_BUILD[@]}" "${build_args[@]}" \
  -f deploy/Dockerfile -t "$TAG" -t "$TAG:$revision" . ||
  die "podman build failed (output above)"
size=$("${PODMAN[@]}" image inspect --format '{{.Size}}' "$TAG")
log "built $TAG ($TAG:$revision) in $((SECONDS - start)) s: $((size / 1000000)) MB" \
  "($size bytes); run it with deploy/smoke-image.sh"

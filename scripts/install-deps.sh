#!/usr/bin/env bash
# Installs alsim's build, test and client dependencies from Debian 12 packages.
#
# Idempotent: only packages that are missing are installed, with --no-install-recommends
# (recommends would pull ~170 MB of GraphBLAS in with SuiteSparse), and `apt-get update` runs
# at most once, only when something is missing. Safe to run on every `make`.
#
# Usage: scripts/install-deps.sh [--check]   (--check: list what is missing, exit 1 if anything is)
set -euo pipefail

packages=(
  # build tools: g++ and clang (make's COMPILER; the fuzz targets are clang's: docs/fuzzing.md)
  cmake ninja-build ccache g++ clang pkg-config clang-format clang-tidy curl
  # fuzzing (make fuzz, make test): libFuzzer and the sanitizer runtimes, llvm-symbolizer
  libclang-rt-14-dev llvm
  # RPC and serialization (with protoc and the gRPC C++ plugin)
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  # numerics and parallelism
  libeigen3-dev libtbb-dev libsuitesparse-dev
  # tests and benchmarks: Boost.Odeint (the foundation's reference integrators,
  # bench/drumwright_foundation.h) and SUNDIALS CVODE (BDF baseline of
  # bench/drumwright_foundation_bench.cc)
  libboost-dev libsundials-dev
  # metrics
  prometheus-cpp-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # MuJoCo 2.2.2: MJCF/URDF importer, test oracle, benchmark peer and sample scenes
  libmujoco-dev libmujoco-samples
  # MuJoCo's XML parser: the importer checks scene text with it before MuJoCo compiles
  libtinyxml2-dev
  # convex narrowphase: GJK/MPR from libccd 2.1 (the build libmujoco itself links)
  libccd-dev
  # Python client (Debian's interpreter, /usr/bin/python3, sees these)
  python3 python3-grpcio python3-grpc-tools python3-protobuf python3-numpy
  # ... and its package: pip install --no-build-isolation ./client/python, offline, into a
  # virtual environment (python_package_test)
  python3-pip python3-setuptools python3-wheel python3-venv
  # benchmark plots (bench/plot_*.py, PNG next to their CSV)
  python3-matplotlib
  # tests: throwaway CA and certificates for the TLS clients (client_auth_test)
  openssl
  # tests: the Kubernetes manifests (k8s_manifests_test) are parsed and checked against the
  # Kubernetes API models
  python3-yaml python3-kubernetes
  # tests: a real Prometheus and promtool run the deploy/ rules and dashboard queries
  # (prometheus_test); python3-yaml (above) reads the scrape config and compose file
  prometheus
  # tests: readelf for the runtime package list of deploy/Dockerfile (image_packages_test)
  binutils
  # tests: the viewer's page in headless Chromium (WebGL through SwiftShader), driven over the
  # DevTools protocol (python3-websocket) and its screenshots read with python3-pil
  chromium python3-websocket python3-pil
)
# ... and rendered with `kubectl kustomize`: Debian's kubectl (kubernetes-client), unless a kubectl
# is installed already (the Google Cloud SDK's `kubectl` package owns the same /usr/bin/kubectl).
command -v kubectl >/dev/null 2>&1 || packages+=(kubernetes-client)
# The browser viewer (`alsim view`): npm fetches three.js at build time
# (client/viewer/CMakeLists.txt).
# Debian's npm, unless an npm is installed already (NodeSource's nodejs ships its own and
# conflicts with Debian's).
command -v npm >/dev/null 2>&1 || packages+=(npm)

is_installed() {
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = "installed" ]
}

missing=()
for p in "${packages[@]}"; do
  is_installed "$p" || missing+=("$p")
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "install-deps: missing: ${missing[*]}"
  exit 1
fi

echo "install-deps: installing ${#missing[@]} missing package(s): ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: done"

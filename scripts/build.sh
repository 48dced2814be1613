#!/usr/bin/env bash
# Configures and builds (Release) into ${BUILD_DIR:-build}. Extra arguments go to cmake,
# e.g. -DCMAKE_CUDA_ARCHITECTURES=80.
# RB_SKIP_BUILD=1 uses the binaries already in BUILD_DIR as they are: for a build made on
# one machine and carried to a GPU machine that lacks the -dev packages.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
if [ "${RB_SKIP_BUILD:-0}" = 1 ]; then
  [ -x "$BUILD_DIR/rmsnorm-bench" ] || { echo "build: RB_SKIP_BUILD=1 but $BUILD_DIR/rmsnorm-bench is missing" >&2; exit 2; }
  exit 0
fi
scripts/setup.sh
if [ ! -f "$BUILD_DIR/build.ninja" ] || [ $# -gt 0 ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
fi
cmake --build "$BUILD_DIR"

#!/usr/bin/env bash
# Builds (installing what is missing) and runs every test through CTest. GPU tests skip
# themselves, naming the CUDA error, on a machine without a usable GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "$(nproc)"

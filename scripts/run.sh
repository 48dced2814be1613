#!/usr/bin/env bash
# Builds (installing what is missing) and runs rmsnorm-bench with the given options.
# With no options: the default sweep. Example: scripts/run.sh --H 4096 --dtype bf16
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >&2
exec "${BUILD_DIR:-build}/rmsnorm-bench" "$@"

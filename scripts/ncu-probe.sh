#!/usr/bin/env bash
# Profiles one launch of a kernel the tool runs, with Nsight Compute (clocks left as they are):
# speed of light, occupancy, warp stall reasons and memory tables, as text in OUTDIR/NAME.txt.
#
#   scripts/ncu-probe.sh OUTDIR NAME KERNEL_REGEX -- TOOL_OPTIONS...
#
# e.g. scripts/ncu-probe.sh /tmp/ncu staged4096 bwd_staged -- --op bwd --kernel staged --H 4096 --M 16384 --dtype bf16
# The tool runs the case with --no-check and a few samples; the profiled launch is the
# KERNEL_REGEX kernel's fourth (after the copy ceiling and warm-up launches).
# NCU_EXTRA adds options to ncu, e.g. NCU_EXTRA="--section SourceCounters" for the stall
# reasons by instruction (the hottest lines of the kernel's SASS). NCU_SKIP and NCU_COUNT
# (default 3 and 1) choose the launches: a vendor's op of several kernels (a main kernel and a
# dw reduction, say) needs a count that covers each.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/ncu-probe.sh OUTDIR NAME KERNEL_REGEX -- TOOL_OPTIONS...}
NAME=${2:?}
REGEX=${3:?}
shift 3
[ "${1:-}" = "--" ] && shift
BIN=${BUILD_DIR:-build}/rmsnorm-bench
mkdir -p "$OUT"
ncu --clock-control none --kernel-name "regex:$REGEX" --launch-skip "${NCU_SKIP:-3}" --launch-count "${NCU_COUNT:-1}" \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
  --section MemoryWorkloadAnalysis_Tables --section SchedulerStats ${NCU_EXTRA:-} \
  "$BIN" --eps 1e-5 --no-check --min-samples 5 --max-time 0 --quiet --out "$OUT/$NAME.run" "$@" >"$OUT/$NAME.txt" 2>&1
echo "ncu-probe $NAME: rc=$?"

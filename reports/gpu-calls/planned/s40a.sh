#!/usr/bin/env bash
# Call A1, planned in session 39 (2026-12-05), the first of two calls that together run the whole
# GPU-test step on main's head (carry .gpu/bundle.tar.xz): A1 the kernels' validation sweeps
# (AllKernels/*: every built-in and vendor kernel over the validation preset's five sweeps)
# and, beside them, the plugin tests; A2 (s40b.sh) every other GPU test, the mutants among them.
# On an H100 (s39a.sh, 2026-12-05) the whole step in 16 shards ran past a call's 600 s; each half
# should take 250-350 s there. The logs stay in /tmp/gc and travel back as one tar (a call
# returns 8 files at most), made even when the step is cut (its own limit ends 60 s before the
# call's).
set -uo pipefail
T0=$(date +%s)
tar xJf .gpu/bundle.tar.xz || exit 9
mkdir -p /tmp/gc
build/rmsnorm-bench --version
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
GTEST_FILTER='AllKernels/*' GPU_SHARDS=16 STEP_TIMEOUT=480 STEPS=gpu \
  timeout 520 scripts/gpu-check.sh /tmp/gc >/tmp/gc.log 2>&1
echo "step rc=$? +$(($(date +%s) - T0))s"
cat /tmp/gc/summary.txt 2>/dev/null | head -5
grep -h "^\[  FAILED\|^\[       OK \]" /tmp/gc/gpu-tests.*.log | sed 's/^\[ *\([A-Z]*\) *\] /\1 /' | sort | head -60
mv /tmp/gc.log /tmp/gc/ 2>/dev/null
tar cJf $OUT/gc-a.tar.xz -C /tmp gc
echo "all done +$(($(date +%s) - T0))s"

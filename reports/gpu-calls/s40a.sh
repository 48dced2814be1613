#!/usr/bin/env bash
# Ran in session 40 (2026-12-05 23:08-23:15 UTC, 435 s, NVIDIA H100 80GB HBM3, driver
# 580.159.04) as `bash reports/gpu-calls/s40a.sh all`, carrying .gpu/bundle.tar.xz (58bce4c's
# build; scripts/pack-gpu.sh): the whole GPU-test step of scripts/gpu-check.sh in 16 shards with
# the plugin tests beside them, and memcheck's sansweep beside those. Results in
# reports/gpu-check.txt (session 40). Written in session 39 as planned/s40.sh:
#   s40a.sh kernels   the kernels' validation sweeps (AllKernels/*: every built-in and vendor
#                     kernel over the preset's five sweeps) and the plugin tests
#   s40a.sh rest      every other GPU test but the wide one: the 26 numerics mutants,
#                     LongRows, ReadOnlyInputs, DeviceFault, cuDNN, cuBLAS...
#   s40a.sh all       both in one call (session 40: with device starts failing at 90-180 s of
#                     device time each, one call of 520 s cost less than two), with memcheck's
#                     sansweep beside the shards
# On an H100 (s39a.sh, 2026-12-05) the whole step, with the plugin tests after the shards, ran
# past a call's 600 s; with them beside the shards it took 435 s here. The logs stay in /tmp/gc
# and travel back as one tar (a call returns 8 files at most), made even when the step is cut
# (its own limit ends 80 s before the call's).
# Ran again in session 43 (2026-12-06 06:02-06:10 UTC, 484 s, NVIDIA H100 80GB HBM3) as
# `bash reports/gpu-calls/s40a.sh all` over 98d8691's bundle: the step, its shards balanced by
# reports/gpu-test-times.txt and memcheck over three sansweeps beside it, reached its 480 s
# with 90 of the 98 GPU tests done (s43d.sh ran the 8 others). On an H100 the whole step no
# longer fits one call with memcheck beside it; run the memcheck sansweep in a call of its own.
set -uo pipefail
case ${1:-} in
  kernels) filter='AllKernels/*' plugin=1 ;;
  rest) filter='-AllKernels/*' plugin=0 ;;
  all) filter='*' plugin=1 ;;
  *) echo "usage: $0 kernels|rest|all" >&2; exit 2 ;;
esac
# LIMIT (default 520) bounds the step, 80 s inside a call's 600 s; a call given less device time
# passes less (the shards' own limit is 40 s inside it, the sanitizers' share of it).
LIMIT=${LIMIT:-520}
T0=$(date +%s)
build/rmsnorm-bench --version 2>/dev/null || tar xJf .gpu/bundle.tar.xz || exit 9
build/rmsnorm-bench --version
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
rm -rf /tmp/gc && mkdir -p /tmp/gc
if [ "$1" = all ]; then
  # Beside the shards (one core of 16): memcheck over the sansweep, the built-in strategies at
  # M 1 and 3 and then the backward's persistent grids at M=100003, LIMIT/2-20 s each at most.
  SANITIZER_TOOLS=memcheck SANITIZER_TIMEOUT=$((LIMIT / 2 - 20)) STEPS=sansweep \
    timeout $((LIMIT - 20)) scripts/gpu-check.sh /tmp/gc/san >/tmp/gc-san.log 2>&1 &
fi
GTEST_FILTER=$filter PLUGIN_TESTS=$plugin GPU_SHARDS=16 STEP_TIMEOUT=$((LIMIT - 40)) STEPS=gpu \
  timeout $LIMIT scripts/gpu-check.sh /tmp/gc >/tmp/gc.log 2>&1
echo "step rc=$? +$(($(date +%s) - T0))s"
wait
[ -f /tmp/gc/san/summary.txt ] && grep -h "sanitizers over" /tmp/gc/san/summary.txt
[ -f /tmp/gc-san.log ] && mv /tmp/gc-san.log /tmp/gc/
head -5 /tmp/gc/summary.txt 2>/dev/null
grep -h "^MUTANT" /tmp/gc/gpu-tests.*.log | cut -c1-160
grep -h "^\[  FAILED\|^\[       OK \]" /tmp/gc/gpu-tests.*.log | grep -v MutantCaught |
  sed 's/^\[ *\([A-Z]*\) *\] /\1 /' | sort | head -100
mv /tmp/gc.log /tmp/gc/
tar cJf "$OUT/gc-$1.tar.xz" -C /tmp gc
echo "all done +$(($(date +%s) - T0))s"

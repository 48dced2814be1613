#!/usr/bin/env bash
# Session 33, call B: the whole GPU check on 6d08d86 (the GPU tests with the mutants and the
# plugin tests, and the four sanitizers over the tool sweep, in two processes beside them).
set -uo pipefail
T0=$(date +%s)
tar xJf .gpu/bundle.tar.xz || exit 9
build/rmsnorm-bench --version
GPU_SHARDS=16 STEP_TIMEOUT=480 STEPS=gpu scripts/gpu-check.sh $OUT/gc > $OUT/gc.log 2>&1 &
SANITIZER_TOOLS="racecheck synccheck" SANITIZER_TIMEOUT=280 STEPS=sansweep scripts/gpu-check.sh $OUT/sa > $OUT/sa.log 2>&1 &
SANITIZER_TOOLS="memcheck initcheck" SANITIZER_TIMEOUT=220 STEPS=sansweep scripts/gpu-check.sh $OUT/sb > $OUT/sb.log 2>&1 &
wait
for d in gc sa sb; do echo "== $d"; cat $OUT/$d/summary.txt; done
echo "all done +$(( $(date +%s) - T0 ))s"

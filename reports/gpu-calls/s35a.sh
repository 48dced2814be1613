#!/usr/bin/env bash
# Session 35, call A (planned 2026-12-05 00:25 UTC for the next device): the whole GPU-test step
# on main's head (fa80b1f or later): the 80+ GPU tests, the 20 numerics mutants (7 new, never
# GPU-run), the three DeviceFault tests (mutant-trap, mutant-hang with --kernel-timeout 2,
# SIGINT during a hang) and the plugin tests. Alone in its call: 7 more mutants than the 434 s
# step of session 33.
set -uo pipefail
T0=$(date +%s)
tar xJf .gpu/bundle.tar.xz || exit 9
build/rmsnorm-bench --version
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
GPU_SHARDS=16 STEP_TIMEOUT=560 STEPS=gpu scripts/gpu-check.sh $OUT/gc > $OUT/gc.log 2>&1
cat $OUT/gc/summary.txt
grep -h "MUTANT\|DeviceFault" $OUT/gc/gpu-tests.*.log | head -40
tar cJf $OUT/misc.tar.xz -C $OUT gc
echo "all done +$(( $(date +%s) - T0 ))s"

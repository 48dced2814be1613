#!/usr/bin/env bash
# Ran in session 39 (2026-12-05 13:20-13:30 UTC) on an NVIDIA H100 80GB HBM3 (no H200 could be
# started), the tool at 015abca: cut by the call's 600 s limit while the shards or the plugin
# tests (then run after the shards) were still running, before the tar at its end; the device
# returns 8 files at most, so 7 shard logs and gc.log came back (44 tests passed, 0 failed:
# reports/gpu-check.txt). Its planned successor, planned/s40.sh (kernels, then rest), splits
# the step in two, keeps its logs outside $OUT and tars them.
# Call A, planned in sessions 37 and 38 (2026-12-05; no device was lent in either) for the
# next device: the whole GPU-test step on main's head (chunked's add holds many rows, perf-notes
# run 53; the CSV reader's provider rule; fp32 sums in rounds for very long rows, run 54; the
# skewed layout, stride H+1, in every validation sweep; session 38's many-rows validation
# sweeps, M=100003 at H 1/127 and 20011 at H 1000/2049, with their two mutants, and the
# read-only input check with mutant-residual-in-place), alone in its call: 98 GPU tests
# (Chunked.AddHeldRowsPassAtManyRows 90 s; LongRows.HugeRowsSumWithinTheTolerance and
# ReadOnlyInputs.* new; the base validation sweep a third larger, plus the many-rows sweeps for
# every kernel and mutant; WideTensors.* is call B's), 26 mutants (mutant-one-row-a-block and
# mutant-dw-partial-overwrite caught only at many rows, mutant-residual-in-place only by the
# input check, the three fp8 mutants only by the fp8 sweep), the DeviceFault tests and the plugin tests.
set -uo pipefail
T0=$(date +%s)
tar xJf .gpu/bundle.tar.xz || exit 9
build/rmsnorm-bench --version
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
GPU_SHARDS=16 STEP_TIMEOUT=520 STEPS=gpu scripts/gpu-check.sh $OUT/gc > $OUT/gc.log 2>&1
cat $OUT/gc/summary.txt
grep -h "MUTANT\|DeviceFault\|LongRows\|ReadOnly\|FAILED" $OUT/gc/gpu-tests.*.log | head -40
tar cJf $OUT/misc.tar.xz -C $OUT gc
echo "all done +$(( $(date +%s) - T0 ))s"

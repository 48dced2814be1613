#!/usr/bin/env bash
# Session 42 (2026-12-06): perf-notes run 56 with its fix (exp/run56: a row's image is a.H
# columns, the cluster block's slice; s42a.sh found the aligned cluster ring overrunning its
# stage at fp32 M=19 H=65536), checked and then timed, in one call for the device time left.
# It carries .gpu/s42.tar.xz: exp/run56's tool and GPU tests, and 0ebbbad's tool (main's
# kernels, run 56 reverted) as build-before/, stripped, packed as scripts/pack-gpu.sh packs.
#  1. the validation sweeps of every kernel whose code run 56 touched (row-vector and auto bwd
#     and add-bwd, staged's: load_cols_shared) and the backward's own GPU tests, 8 shards, beside
#     memcheck over the ring's cases (clusters at M=19 and 300, shifted rows, both dtypes);
#  2. then alone: run 56's timing against 0ebbbad, ABBA, 2 rounds, auto at M=16384.
. reports/gpu-calls/planned/prelude.sh
tar xJf .gpu/s42.tar.xz || exit 9
machine
build-before/rmsnorm-bench --version
timeout 170 compute-sanitizer --tool memcheck --print-limit 4 build/rmsnorm-bench --kernel row-vector,auto \
  --op bwd,add-bwd --dtype bf16,fp32 --M 19,300 --H 2049,4097,65536 --layout contiguous,misaligned,skewed \
  --eps 1e-5 --no-time --quiet --out $R/san >$R/san.log 2>&1 &
F='AllKernels/KernelPasses.ValidationSweep/row_vector_bwd:AllKernels/KernelPasses.ValidationSweep/auto_bwd'
F+=':AllKernels/KernelPasses.ValidationSweep/row_vector_add_bwd:AllKernels/KernelPasses.ValidationSweep/auto_add_bwd'
F+=':AllKernels/KernelPasses.ValidationSweep/staged_*:Backward.*:Bwd/*:Timing.BackwardIsTimedOverAllItsLaunches'
GTEST_FILTER=$F PLUGIN_TESTS=0 GPU_SHARDS=8 STEP_TIMEOUT=180 STEPS=gpu timeout 190 scripts/gpu-check.sh $R/gc \
  >$R/gc.log 2>&1
echo "gpu tests rc=$? $(el)"
grep -h "^gpu_tests" $R/gc/summary.txt
grep -h "^\[  FAILED\|^\[       OK \]\|cases passed" $R/gc/gpu-tests.*.log | sort | uniq | head -30
wait
echo "memcheck $(el)"; grep -v "cudaFree\|cudaStreamDestroy" $R/san.log | grep -i "ERROR SUMMARY\|Invalid\|pass, " | head -8
grep -c ",pass," $R/san/results.csv
scripts/ab-time.sh $R/ab -b base=build-before/rmsnorm-bench -b ring=build/rmsnorm-bench -T 100 \
  -c '--op bwd,add-bwd --kernel auto --dtype bf16,fp32 --M 16384 --H 4096,4097 --layout contiguous,misaligned' \
  >$R/ab.log 2>&1
echo "ab rc=$? $(el)"; head -60 $R/ab/summary.txt
tar cJf "$OUT/r.tar.xz" -C /tmp r
echo "all done $(el)"

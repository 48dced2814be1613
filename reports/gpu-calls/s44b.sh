#!/usr/bin/env bash
# Ran in session 44 (2026-12-06 09:09-09:14 UTC, 255 s, NVIDIA H100 80GB HBM3, driver
# 580.159.04, a fresh machine) as `bash reports/gpu-calls/planned/s44b.sh`, carrying
# .gpu/exp57.tar.xz: every check passed (GPU tests 9/9; validation 288 cases; memcheck,
# racecheck, initcheck clean, racecheck's inner timeout cutting it after its 16 cases and its
# summary); the timing refuted the prediction (bwd bf16 H=4096 1.008 of main's time):
# docs/perf-notes.md "Runs 57 and 58 — measured".
# Planned in session 43 (2026-12-06): perf-notes run 57 (branch exp/run57: the aligned ring's
# dw partials added in clusters of 4 or 2 row blocks before they leave the chip), its first
# GPU call. Carries .gpu/exp57.tar.xz (58.4 MB; scripts/pack-gpu.sh on exp/run57: its tool and
# test binaries of 0eea5b1 as build/, main's tool of 98d8691 as build-before/, no wheels),
# unpacked whatever the machine
# holds (its build/ may be main's, from s44a.sh). H100 or H200 (say which in the record).
#  1. beside each other, bounded at 300 s:
#     the backward's GPU tests that reach the reducing clusters or its neighbours (row-vector's
#     and auto's validation sweeps, whose many-rows sweeps run M=20011 at H=1000, an aligned
#     ring; Backward.*; Bwd/* for dw's repeatability; the backward's timing test), 8 shards;
#     validation sweeps (the fp64 reference, no sanitizer) of row-vector and auto, bwd and
#     add-bwd, at the shapes that take the ring with reducing clusters: H 2048-16384 at M=4099
#     and H 1000/1024 at M=9001 (past the resident row blocks, twice past them below 2049
#     columns), bf16 and fp32 x, w fp32 beside w = x, contiguous and strided (aligned
#     strides), as 4 shards;
#     memcheck, racecheck, then initcheck (the column sum must read only partial rows the
#     clusters wrote), 90 s each, over auto's bwd and add-bwd at M=4099 H 4096/8192, bf16 and
#     fp32;
#  2. run 57's timing against main (scripts/ab-time.sh, ABBA, 2 rounds, auto M=16384), in the
#     time left of the call's 600 s, H=4097 the control (shifted rows: untouched), and add-bwd
#     with an fp32 residual (ptxas: some of its kernels rose 80 -> 88 registers).
. reports/gpu-calls/planned/prelude.sh
rm -rf build build-before && tar xJf .gpu/exp57.tar.xz || exit 9
machine
build-before/rmsnorm-bench --version
GTEST_FILTER='AllKernels/KernelPasses.ValidationSweep/row_vector_bwd:AllKernels/KernelPasses.ValidationSweep/row_vector_add_bwd:AllKernels/KernelPasses.ValidationSweep/auto_bwd:AllKernels/KernelPasses.ValidationSweep/auto_add_bwd:Backward.*:Bwd/*:Timing.BackwardIsTimedOverAllItsLaunches' \
  PLUGIN_TESTS=0 GPU_SHARDS=8 STEP_TIMEOUT=290 STEPS=gpu timeout 300 scripts/gpu-check.sh $R/gc >$R/gc.log 2>&1 &
V=(--kernel row-vector,auto --op bwd,add-bwd --dtype bf16,fp32 --wdtype same,fp32 --layout contiguous,strided --quiet --no-time)
for k in 0 1 2 3; do
  {
    timeout 180 build/rmsnorm-bench "${V[@]}" --H 2048,4096,8192,16384 --M 4099 --shard $k/4 --out $R/val-long/$k
    echo "val-long $k/4 rc=$? $(el)"
    timeout 100 build/rmsnorm-bench "${V[@]}" --H 1000,1024 --M 9001 --shard $k/4 --out $R/val-short/$k
    echo "val-short $k/4 rc=$? $(el)"
  } >$R/val.$k.log 2>&1 &
done
for tool in memcheck racecheck initcheck; do
  timeout -k 10 100 compute-sanitizer --tool $tool --target-processes all --print-limit 20 timeout 90 build/rmsnorm-bench --kernel auto \
    --op bwd,add-bwd --H 4096,8192 --M 4099 --dtype bf16,fp32 --no-time --quiet --kernel-timeout 0 --out $R/san-$tool \
    >$R/san-$tool.log 2>&1
  echo "$tool rc=$? $(el)"
done >$R/san.txt 2>&1
wait
report_checks
left=$((585 - $(date +%s) + T0))
# 3 groups x 2 builds x 2 rounds = 12 runs, each bounded (a run cut short is listed as such).
scripts/ab-time.sh $R/ab -b main=build-before/rmsnorm-bench -b red=build/rmsnorm-bench -T $((left / 12 - 3)) \
  -c '--op bwd,add-bwd --kernel auto --dtype bf16 --M 16384 --H 2048,4096,8192,16384,4097' \
  -c '--op bwd,add-bwd --kernel auto --dtype fp32 --M 16384 --H 4096,8192' \
  -c '--op add-bwd --kernel auto --dtype bf16 --rdtype fp32 --M 16384 --H 4096,8192' >$R/ab.log 2>&1
echo "ab rc=$? $(el)"
head -60 $R/ab/summary.txt
tar cJf "$OUT/r.tar.xz" -C /tmp r

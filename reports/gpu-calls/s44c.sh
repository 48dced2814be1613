#!/usr/bin/env bash
# Ran in session 44 (2026-12-06 09:13-09:16 UTC, 131 s, NVIDIA H100 80GB HBM3, driver
# 580.159.04, warm from s44b.sh) as `bash reports/gpu-calls/planned/s44c.sh`, carrying
# .gpu/exp58.tar.xz: every check passed (GPU tests 8/8; validation 160 cases; memcheck and
# initcheck clean); timing within about 1% of run 57's either way: docs/perf-notes.md
# "Runs 57 and 58 — measured".
# Planned in session 43 (2026-12-06): perf-notes run 58 (branch exp/run58: run 57's reducing
# clusters for shifted rows too), its first GPU call, right after s44b.sh on the same machine
# (which leaves run 57's build in build/). Carries .gpu/exp58.tar.xz (39.5 MB: exp/run58's tool
# and GPU test binary of 8a9cf25 as build-exp58/). Bounded inside the call's 600 s, the tar last:
#  1. beside each other, bounded at 300 s:
#     the backward's GPU tests that reach shifted rows (row-vector's and auto's validation
#     sweeps, bwd and add-bwd: H 4097 and the misaligned layout; Backward.*; Bwd/*), 6 shards;
#     validation sweeps of row-vector and auto, bwd and add-bwd, bf16 and fp16, contiguous and
#     misaligned, at the shapes that take the shifted ring with reducing clusters: H 4097, 8191
#     and 4096 (misaligned) at M=4099, H 1025 and 2049 at M=9001, as 4 shards;
#     memcheck then initcheck (the column sum must read only rows the clusters wrote), 120 s
#     each, over auto's bwd and add-bwd at M=4099 H 4097, bf16, contiguous and misaligned;
#  2. run 58's timing against run 57 (scripts/ab-time.sh, ABBA, 2 rounds, auto M=16384, bf16,
#     H 4096 and 4097, contiguous and misaligned: the aligned H=4096 the control).
. reports/gpu-calls/planned/prelude.sh
build/rmsnorm-bench --version | grep -q 0eea5b1 || { echo "run 57's build is not in build/: run this right after s44b.sh"; exit 8; }
rm -rf build-exp58 && tar xJf .gpu/exp58.tar.xz || exit 9
machine
build-exp58/rmsnorm-bench --version
GTEST_FILTER='AllKernels/KernelPasses.ValidationSweep/row_vector_bwd:AllKernels/KernelPasses.ValidationSweep/row_vector_add_bwd:AllKernels/KernelPasses.ValidationSweep/auto_bwd:AllKernels/KernelPasses.ValidationSweep/auto_add_bwd:Backward.*:Bwd/*' \
  BUILD_DIR=build-exp58 GPU_TEST_TIMES= PLUGIN_TESTS=0 GPU_SHARDS=6 STEP_TIMEOUT=290 STEPS=gpu timeout 300 \
  scripts/gpu-check.sh $R/gc >$R/gc.log 2>&1 &
V=(--kernel row-vector,auto --op bwd,add-bwd --dtype bf16,fp16 --layout contiguous,misaligned --quiet --no-time)
for k in 0 1 2 3; do
  {
    timeout 180 build-exp58/rmsnorm-bench "${V[@]}" --H 4096,4097,8191 --M 4099 --shard $k/4 --out $R/val-long/$k
    echo "val-long $k/4 rc=$? $(el)"
    timeout 100 build-exp58/rmsnorm-bench "${V[@]}" --H 1025,2049 --M 9001 --shard $k/4 --out $R/val-short/$k
    echo "val-short $k/4 rc=$? $(el)"
  } >$R/val.$k.log 2>&1 &
done
for tool in memcheck initcheck; do
  timeout -k 10 130 compute-sanitizer --tool $tool --target-processes all --print-limit 20 timeout 120 \
    build-exp58/rmsnorm-bench --kernel auto --op bwd,add-bwd --H 4097 --M 4099 --dtype bf16 \
    --layout contiguous,misaligned --no-time --quiet --kernel-timeout 0 --out $R/san-$tool >$R/san-$tool.log 2>&1
  echo "$tool rc=$? $(el)"
done >$R/san.txt 2>&1
wait
report_checks
left=$((585 - $(date +%s) + T0))
scripts/ab-time.sh $R/ab -b reduce=build/rmsnorm-bench -b shifted=build-exp58/rmsnorm-bench -T $((left / 4 - 5)) \
  -c '--op bwd,add-bwd --kernel auto --dtype bf16 --M 16384 --H 4096,4097 --layout contiguous,misaligned' >$R/ab.log 2>&1
echo "ab rc=$? $(el)"
head -40 $R/ab/summary.txt
tar cJf "$OUT/r.tar.xz" -C /tmp r

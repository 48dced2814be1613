#!/usr/bin/env bash
# Ran in session 46 right after s46d.sh, after one call between (`build/rmsnorm-bench --version &&
# rm -rf build-before && mkdir build-before && cp build/rmsnorm-bench build-before/`, which put
# s46d.sh's tool, main's, in build-before/), the same H100, 15:08 UTC, 224 s: gpu_tests 12 of 12, validation 832 pass,
# memcheck 64 pass 0 errors, initcheck 54 of 64 0 errors, ABBA (docs/perf-notes.md run 61).
# Planned in session 46 (2026-12-06): branch exp/overhang-col (f73f974) on the GPU. Its one
# change: row-vector's backward overhang reads its column through Overhang::col from the row's
# base (the ring's stage, or the row in global memory) instead of a pointer recomputed as
# cover - shift + threadIdx.x; ptxas: 51 of 747 kernels change registers (e.g. 96 -> 86), none
# spills. Carries .gpu/oc.tar.xz: f73f974's tool and GPU tests as build/, stripped. Main's
# tool is the machine's build-before/: s46d.sh's tool (baa1bc1; its code is cab9eb9's but for
# comments), copied there in the call between (the tree and a bundle of both tools, 69 MB,
# were over the 64 MiB a call carries). H100 or H200 (say which). Bounded inside 600 s, tar last:
#  1. checks, beside each other, bounded at 220 s (s46a.sh's): the backward's GPU tests
#     (row-vector, chunked, auto validation sweeps, Backward.*, Bwd/*; 10 shards); validation
#     of row-vector's bwd and add-bwd over shifted and aligned rows (H around whole warps of
#     chunks, M=4099, three dtypes, w same and fp32, every layout; 4 shards); memcheck then
#     initcheck over row-vector's bwd and add-bwd at M 7 and 4099, H 4097 and 8193;
#  2. timing (scripts/ab-time.sh, ABBA, 2 rounds) of row-vector, main against the branch, on
#     the rows with an overhang: bf16 M=16384 H 1025, 4097, 8193 contiguous, 4096 misaligned;
#     fp16 and fp32 H=4097; decode M=1 H=4097.
. reports/gpu-calls/planned/prelude.sh
build-before/rmsnorm-bench --version | grep -q baa1bc1 || { echo "main's tool is not in build-before/"; exit 8; }
rm -rf build && tar xJf .gpu/oc.tar.xz || exit 9
machine
build-before/rmsnorm-bench --version
F=AllKernels/KernelPasses.ValidationSweep/
GTEST_FILTER="${F}row_vector_bwd:${F}row_vector_add_bwd:${F}chunked_bwd:${F}chunked_add_bwd:${F}auto_bwd:${F}auto_add_bwd:Backward.*:Bwd/*" \
  PLUGIN_TESTS=0 GPU_SHARDS=10 STEP_TIMEOUT=210 STEPS=gpu timeout 220 scripts/gpu-check.sh $R/gc >$R/gc.log 2>&1 &
V=(--kernel row-vector --op bwd,add-bwd --quiet --no-time)
for k in 0 1 2 3; do
  {
    timeout 150 build/rmsnorm-bench "${V[@]}" --dtype bf16,fp16,fp32 --wdtype same,fp32 \
      --layout contiguous,misaligned,skewed,strided --H 7,129,1025,2049,4097,4103,8193,16376 --M 4099 \
      --shard $k/4 --out $R/val-warps/$k
    echo "val-warps $k/4 rc=$? $(el)"
    timeout 40 build/rmsnorm-bench "${V[@]}" --dtype bf16,fp32 --layout contiguous,misaligned \
      --H 4097,8193,16376 --M 1,7 --convention fp32,gemma --shard $k/4 --out $R/val-few/$k
    echo "val-few $k/4 rc=$? $(el)"
  } >$R/val.$k.log 2>&1 &
done
for tool in memcheck initcheck; do
  timeout -k 10 100 compute-sanitizer --tool $tool --target-processes all --print-limit 20 timeout 90 \
    build/rmsnorm-bench --kernel row-vector --op bwd,add-bwd --H 4097,8193 --M 7,4099 --dtype bf16,fp32 \
    --layout contiguous,misaligned --no-time --quiet --kernel-timeout 0 --out $R/san-$tool >$R/san-$tool.log 2>&1
  echo "$tool rc=$? $(el)"
done >$R/san.txt 2>&1
wait
report_checks
left=$((570 - $(date +%s) + T0))
# 4 groups x 2 builds x 2 rounds = 16 runs, each bounded (a run cut short is listed as such).
scripts/ab-time.sh $R/ab -b main=build-before/rmsnorm-bench -b col=build/rmsnorm-bench -T $((left / 16 - 2)) \
  -c '--op bwd,add-bwd --kernel row-vector --dtype bf16 --M 16384 --H 1025,4097,8193' \
  -c '--op bwd,add-bwd --kernel row-vector --dtype bf16 --M 16384 --H 4096 --layout misaligned' \
  -c '--op bwd,add-bwd --kernel row-vector --dtype fp16,fp32 --M 16384 --H 4097' \
  -c '--op bwd,add-bwd --kernel row-vector --dtype bf16 --M 1 --H 4097' >$R/ab.log 2>&1
echo "ab rc=$? $(el)"
head -60 $R/ab/summary.txt
tar cJf "$OUT/r.tar.xz" -C /tmp r

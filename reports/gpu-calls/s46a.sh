#!/usr/bin/env bash
# Ran in session 45 as `bash reports/gpu-calls/planned/s46a.sh; mv $OUT/r.tar.xz $OUT/a.tar.xz;
# bash reports/gpu-calls/planned/s46c.sh` (one call, naming nvidia-h200; got NVIDIA H100 80GB HBM3,
# driver 580.159.04), 2026-12-06 12:33 UTC, 295 s for both: GPU tests 12/12, validation 1664 pass,
# memcheck 128 pass 0 errors, initcheck 109 of 128 pass 0 errors (cut at its 105 s)
# (reports/gpu-check.txt).
# Planned in session 45 (2026-12-06): the GPU check of main's head 9fdb13a, whose backward
# kernels had no GPU run (one helper for a column's dx and dw partial, column_dx and column_dw
# in bwd_common.cuh, now serving row-vector's OwnedColumns and overhang and chunked's vector
# and edge columns; PTX as 8559ce8's but for commutative mul.f32 operand swaps and two
# independent loads' order). Carries .gpu/bundle.tar.xz (9fdb13a's tool, tests and plugins,
# scripts/pack-gpu.sh), unpacked as build/. H100 or H200 (say which). Beside each other,
# bounded at 250 s:
#   the backward's GPU tests: the validation sweeps (KernelPasses) of row-vector, chunked and
#   auto, bwd and add-bwd; Backward.*; Bwd/*; 10 shards, no plugin tests;
#   validation (fp64 reference) of row-vector's and chunked's bwd and add-bwd over shifted and
#   aligned rows, 4 shards: H around whole warps of chunks at M=4099, three dtypes, w same and
#   fp32, every layout; few rows with the fp32 and gemma conventions;
#   memcheck then initcheck over row-vector's and chunked's bwd and add-bwd at M 7 and 4099,
#   H 4097 and 8193, bf16 and fp32, contiguous and misaligned.
. reports/gpu-calls/planned/prelude.sh
rm -rf build && tar xJf .gpu/bundle.tar.xz || exit 9
machine
F=AllKernels/KernelPasses.ValidationSweep/
GTEST_FILTER="${F}row_vector_bwd:${F}row_vector_add_bwd:${F}chunked_bwd:${F}chunked_add_bwd:${F}auto_bwd:${F}auto_add_bwd:Backward.*:Bwd/*" \
  PLUGIN_TESTS=0 GPU_SHARDS=10 STEP_TIMEOUT=240 STEPS=gpu timeout 250 scripts/gpu-check.sh $R/gc >$R/gc.log 2>&1 &
V=(--kernel row-vector,chunked --op bwd,add-bwd --quiet --no-time)
for k in 0 1 2 3; do
  {
    timeout 170 build/rmsnorm-bench "${V[@]}" --dtype bf16,fp16,fp32 --wdtype same,fp32 \
      --layout contiguous,misaligned,skewed,strided --H 7,129,1025,2049,4097,4103,8193,16376 --M 4099 \
      --shard $k/4 --out $R/val-warps/$k
    echo "val-warps $k/4 rc=$? $(el)"
    timeout 50 build/rmsnorm-bench "${V[@]}" --dtype bf16,fp32 --layout contiguous,misaligned \
      --H 4097,8193,16376 --M 1,7 --convention fp32,gemma --shard $k/4 --out $R/val-few/$k
    echo "val-few $k/4 rc=$? $(el)"
  } >$R/val.$k.log 2>&1 &
done
for tool in memcheck initcheck; do
  timeout -k 10 115 compute-sanitizer --tool $tool --target-processes all --print-limit 20 timeout 105 \
    build/rmsnorm-bench --kernel row-vector,chunked --op bwd,add-bwd --H 4097,8193 --M 7,4099 --dtype bf16,fp32 \
    --layout contiguous,misaligned --no-time --quiet --kernel-timeout 0 --out $R/san-$tool >$R/san-$tool.log 2>&1
  echo "$tool rc=$? $(el)"
done >$R/san.txt 2>&1
wait
report_checks
tar cJf "$OUT/r.tar.xz" -C /tmp r

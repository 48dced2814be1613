#!/usr/bin/env bash
# Ran in session 44 three times, each on a machine of its own start, as
# `BUNDLE=... bash reports/gpu-calls/planned/s45a.sh` (BUNDLE left out the first time), each
# followed by s45b.sh on the same machine:
#   2026-12-06 09:47 UTC, 111 s, NVIDIA H100 80GB HBM3, .gpu/exp59.tar.xz (1afa46a, form 1);
#   10:01 UTC, 159 s, NVIDIA H100 80GB HBM3, .gpu/exp59b.tar.xz (cf94fae, form 2);
#   10:16 UTC, 146 s, NVIDIA H200, .gpu/exp59c.tar.xz (8559ce8, form 3, merged).
# Driver 580.159.04 each time. Every check passed each time: GPU tests 10/10, validation 944
# cases, memcheck and initcheck 0 errors (docs/perf-notes.md "Run 59 — measured").
# Planned in session 44 (2026-12-06): perf-notes run 59 (branch exp/run59: the overhang, a
# shifted block's last 1..N columns element by element so a span one chunk past whole warps
# costs no warp), its first GPU call: its checks; s45b.sh, right after it, times it. Carries
# .gpu/exp59.tar.xz (38.3 MB: exp/run59's tool and GPU test binary of 1afa46a as build/,
# stripped; with main's tool beside it the bundle passed the 64 MiB a call carries: the
# change to common.cuh moved every kernel's line info, so xz found little to share). H100 or
# H200 (say which).
#  1. beside each other, bounded at 260 s (the call takes about 280):
#     the backward's GPU tests (row-vector's and auto's bwd and add-bwd validation sweeps,
#     Backward.*, Bwd/*), 8 shards;
#     validation (fp64 reference) of row-vector's bwd and add-bwd over shifted and aligned rows,
#     as 4 shards: H around whole warps of chunks (7, 129, 1025, 2049, 4095, 4097, 4103, 8193,
#     16376) at M=4099, bf16, fp16 and fp32, w = x and w fp32, every layout; few rows (M 1 and
#     7) and the gemma and zero-centered weights at H 4097, 8193, 16376, contiguous and
#     misaligned;
#     memcheck then initcheck (the column sum must read only columns the chunks or the
#     overhang wrote) over row-vector's bwd and add-bwd at M 7 and 4099, H 4097 and 8193, bf16
#     and fp32, contiguous and misaligned;
. reports/gpu-calls/planned/prelude.sh
rm -rf build && tar xJf "${BUNDLE:-.gpu/exp59.tar.xz}" || exit 9  # BUNDLE: a later build of the branch
machine
GTEST_FILTER='AllKernels/KernelPasses.ValidationSweep/row_vector_bwd:AllKernels/KernelPasses.ValidationSweep/row_vector_add_bwd:AllKernels/KernelPasses.ValidationSweep/auto_bwd:AllKernels/KernelPasses.ValidationSweep/auto_add_bwd:Backward.*:Bwd/*' \
  PLUGIN_TESTS=0 GPU_SHARDS=8 STEP_TIMEOUT=250 STEPS=gpu timeout 260 scripts/gpu-check.sh $R/gc >$R/gc.log 2>&1 &
V=(--kernel row-vector --op bwd,add-bwd --quiet --no-time)
for k in 0 1 2 3; do
  {
    timeout 170 build/rmsnorm-bench "${V[@]}" --dtype bf16,fp16,fp32 --wdtype same,fp32 \
      --layout contiguous,misaligned,skewed,strided --H 7,129,1025,2049,4095,4097,4103,8193,16376 --M 4099 \
      --shard $k/4 --out $R/val-warps/$k
    echo "val-warps $k/4 rc=$? $(el)"
    timeout 40 build/rmsnorm-bench "${V[@]}" --dtype bf16,fp32 --layout contiguous,misaligned \
      --H 4097,8193,16376 --M 1,7 --convention fp32,gemma --shard $k/4 --out $R/val-few/$k
    echo "val-few $k/4 rc=$? $(el)"
    timeout 40 build/rmsnorm-bench "${V[@]}" --dtype bf16,fp16 --layout contiguous,misaligned \
      --H 4097 --M 4099 --convention gemma,zero-centered --shard $k/4 --out $R/val-conv/$k
    echo "val-conv $k/4 rc=$? $(el)"
  } >$R/val.$k.log 2>&1 &
done
for tool in memcheck initcheck; do
  timeout -k 10 125 compute-sanitizer --tool $tool --target-processes all --print-limit 20 timeout 115 \
    build/rmsnorm-bench --kernel row-vector --op bwd,add-bwd --H 4097,8193 --M 7,4099 --dtype bf16,fp32 \
    --layout contiguous,misaligned --no-time --quiet --kernel-timeout 0 --out $R/san-$tool >$R/san-$tool.log 2>&1
  echo "$tool rc=$? $(el)"
done >$R/san.txt 2>&1
wait
report_checks
tar cJf "$OUT/r.tar.xz" -C /tmp r

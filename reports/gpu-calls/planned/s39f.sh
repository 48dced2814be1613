#!/usr/bin/env bash
# Fallback for call A, written in session 39 (2026-12-05 12:20 UTC) for when the device time
# left cannot hold call A's whole GPU step (about 600 s with the start): the GPU tests of what
# sessions 37 and 38 changed, in 8 shards under one 300 s limit:
#  - the kernels run 54 changed (chunked's and auto's every op; naive's) through the validation
#    preset, now with skewed rows and the two many-rows sweeps;
#  - LongRows (fp32 H=2^28, sums in rounds) and ReadOnlyInputs (the input hash);
#  - the six mutants added in session 38 that the earlier sweeps miss (mutant-offset-32bit is
#    the wide step's, call B).
set -uo pipefail
T0=$(date +%s)
tar xJf .gpu/bundle.tar.xz || exit 9
build/rmsnorm-bench --version
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
F='LongRows.*:ReadOnlyInputs.*:*KernelPasses*chunked_*:*KernelPasses*auto_*:*KernelPasses*naive_*'
F+=':*MutantCaught*one_row_a_block*:*MutantCaught*dw_partial_overwrite*:*MutantCaught*residual_in_place*'
F+=':*MutantCaught*amax_plain_store*:*MutantCaught*amax_after_scale*:*MutantCaught*fp8_no_saturate*'
mkdir -p $OUT/t
for k in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$k timeout 300 build/tests/rb_gpu_tests --gtest_filter="$F" \
    > $OUT/t/shard.$k.log 2>&1 &
done
wait
echo "tests done +$(( $(date +%s) - T0 ))s"
grep -h "^\[       OK \]\|^\[  FAILED  \]\|MUTANT\|tests ran" $OUT/t/shard.*.log | sort | uniq | head -60
echo "all done +$(( $(date +%s) - T0 ))s"

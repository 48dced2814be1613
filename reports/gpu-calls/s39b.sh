#!/usr/bin/env bash
# Ran in session 39 (2026-12-05, 171 s, right after s39a.sh) on the H100 that s39a.sh left warm
# (build/ of 015abca still there), with the device time left: eight GPU tests of what sessions
# 37 and 38 changed, one process each, each cut at 170 s. Output on stdout only (no files).
T0=$(date +%s)
build/rmsnorm-bench --version 2>/dev/null || tar xJf .gpu/bundle.tar.xz
build/rmsnorm-bench --version
nvidia-smi --query-gpu=name --format=csv,noheader
i=0
for f in 'LongRows.*' 'ReadOnlyInputs.*' '*MutantCaught*residual_in_place' '*MutantCaught*amax_after_scale' \
  '*MutantCaught*fp8_no_saturate' '*MutantCaught*dw_partial_overwrite' '*KernelPasses*warp_row_fwd' \
  '*KernelPasses*row_vector_fwd'; do
  timeout 170 build/tests/rb_gpu_tests --gtest_filter="$f" >/tmp/t$i.log 2>&1 &
  i=$((i + 1))
done
wait
echo "done +$(($(date +%s) - T0))s"
for k in 0 1 2 3 4 5 6 7; do
  echo "== $k"
  grep -h "^\[       OK \]\|^\[  FAILED  \]\|MUTANT\|caught\|Failure\|rel_err\|^\[  PASSED\|tests ran" /tmp/t$k.log | head -8 | cut -c1-300
  tail -2 /tmp/t$k.log | cut -c1-200
done

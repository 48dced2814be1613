#!/usr/bin/env bash
# Ran in session 39 (2026-12-05, 81 s) right after s39b.sh on the same H100,
# with the last of the device time: eight more validation sweeps, each cut at 80 s.
T0=$(date +%s)
i=0
for f in '*KernelPasses*row_vector_bwd' '*KernelPasses*staged_bwd' '*KernelPasses*naive_bwd' \
  '*KernelPasses*row_vector_add' '*KernelPasses*chunked_fwd' '*KernelPasses*auto_add' \
  '*KernelPasses*cublas_fwd' '*KernelPasses*row_vector_add_bwd'; do
  timeout 80 build/tests/rb_gpu_tests --gtest_filter="$f" >/tmp/u$i.log 2>&1 &
  i=$((i + 1))
done
wait
echo "done +$(($(date +%s) - T0))s"
for k in 0 1 2 3 4 5 6 7; do grep -h "^\[       OK \]\|^\[  FAILED  \]\|^\[ RUN" /tmp/u$k.log | tail -1 | cut -c1-200; done

#!/usr/bin/env bash
# Session 49 (2026-12-06): perf-notes run 62 again, on the fix (branch exp/plan-reuse at e08a47e:
# the runner holds the plans of one problem), cut to the device time left after nine starts that
# failed (about 330 s): s49c.sh's backward parts alone. Any card. Carries .gpu/plan-reuse.tar.xz
# (the branch's build; main's tool, c43fc7e, as build-before/). Bounded inside 240 s:
#  1. the GPU test Plans.PreparedOncePerProblemAcrossTheInputs (8 plans for 96 cases; 48 on
#     6f51e7e in s49c.sh);
#  2. cuDNN and cuBLAS bwd over s49c.sh's 576 cases (six distributions a problem), the build
#     before and the branch's, one after the other: wall times, and same-results on the CSVs;
#  3. the cudnn_bwd validation sweep (GPU test) alone, one process, cut at 120 s: its time
#     (s49c.sh on 6f51e7e: unfinished at 180 s, as 1 of 3 shards beside cudnn_fwd's 75 s).
. reports/gpu-calls/planned/prelude.sh
rm -rf build build-before && tar xJf .gpu/plan-reuse.tar.xz || exit 9
machine
timeout 30 build/tests/rb_gpu_tests --gtest_filter='Plans.*' >$R/plans.log 2>&1
echo "plans rc=$? $(el)"; grep -h "plans_prepared\|Which is\|^\[  FAILED\|^\[       OK \]" $R/plans.log
V=(--M 19 --H 1,127,4096,8192 --dtype fp32,bf16 --wdtype same,fp32
   --dist normal,large,tiny,offset,outlier,zero-row --layout contiguous,strided --no-time --quiet)
for side in before after; do
  bin=build/rmsnorm-bench; [ $side = before ] && bin=build-before/rmsnorm-bench
  t=$(date +%s%N)
  timeout 55 $bin --op bwd --kernel cudnn,cublas "${V[@]}" --out $R/v-$side-bwd >$R/v-$side-bwd.log 2>&1
  echo "$side bwd rc=$? wall=$(( ($(date +%s%N) - t) / 1000000 )) ms $(el)"; grep -h "pass, " $R/v-$side-bwd.log
done
python3 scripts/same-results.py $R/v-before-bwd/results.csv $R/v-after-bwd/results.csv | tail -1
t=$(date +%s)
timeout 120 build/tests/rb_gpu_tests --gtest_filter='AllKernels/KernelPasses.ValidationSweep/cudnn_bwd' >$R/cudnn-bwd.log 2>&1
echo "cudnn_bwd sweep rc=$? $(( $(date +%s) - t )) s $(el)"; grep -h "^\[  FAILED\|^\[       OK \]" $R/cudnn-bwd.log
tar cJf "$OUT/r.tar.xz" -C /tmp r

#!/usr/bin/env bash
# Ran in session 49 (2026-12-06) on an NVIDIA H100 80GB HBM3 (driver 580.159.04), from
# planned/:
#  - 20:23-20:29 UTC, branch at 6f51e7e (333 s): Plans.PreparedOncePerProblemAcrossTheInputs
#    failed with 48 plans, not 8 (run_case freed the data set, and the plans in it, before
#    data_for could hand them on), so its timings are of two builds that both prepare a plan
#    per data set: the spread between identical behaviours;
#  - meant to run again at e08a47e (plans held by the runner per problem), but nine starts
#    failed after it and the device time left held only s49d.sh (its backward parts) and
#    s49e.sh (its `same` step and cudnn_fwd's sweep); results in perf-notes run 62. GC_S
#    bounds the GPU-test step (180 s by default).
# Planned in session 48 (2026-12-06, no device time left): perf-notes run 62 on the GPU, branch
# exp/plan-reuse (a kernel's plan kept across the data sets of one problem: 4db789a, lost with
# session 48's checkout, written again in session 49 as 6f51e7e). Any card (say which).
# Carries .gpu/plan-reuse.tar.xz: the branch's build (tool, tests, plugins) and main's tool
# (c43fc7e, whose code is ca1f3af's) as build-before/ (scripts/pack-gpu.sh). Bounded inside 600 s
# (unpack, 4 x 60 s, 120 s, 190 s):
#  1. cuDNN and cuBLAS bwd and fwd over one problem set under six distributions, through the
#     build before and the branch's, one after the other, alone on the GPU: the wall time of
#     each and scripts/same-results.py on their CSVs (the same rows, verdicts and errors);
#  2. gpu-check.sh's `same` step (the built-in strategies over four distributions, both builds);
#  3. the GPU tests Plans.* and the cudnn_fwd, cudnn_bwd validation sweeps (3 shards), their
#     times against s48b.sh's 136 and 277 s (7 shards there: compare per test, loosely); cut at
#     180 s, cudnn_bwd's sweep unfinished says the prediction (60-130 s) failed.
. reports/gpu-calls/planned/prelude.sh
rm -rf build build-before && tar xJf .gpu/plan-reuse.tar.xz || exit 9
machine
V=(--M 19 --H 1,127,4096,8192 --dtype fp32,bf16 --wdtype same,fp32
   --dist normal,large,tiny,offset,outlier,zero-row --layout contiguous,strided --no-time --quiet)
for side in before after; do
  bin=build/rmsnorm-bench; [ $side = before ] && bin=build-before/rmsnorm-bench
  for op in bwd fwd; do
    t=$(date +%s%N)
    timeout 60 $bin --op $op --kernel cudnn,cublas "${V[@]}" --out $R/v-$side-$op >$R/v-$side-$op.log 2>&1
    echo "$side $op rc=$? wall=$(( ($(date +%s%N) - t) / 1000000 )) ms $(el)"; grep -h "pass, " $R/v-$side-$op.log
  done
done
for op in bwd fwd; do
  python3 scripts/same-results.py $R/v-before-$op/results.csv $R/v-after-$op/results.csv | tail -1
done
STEP_TIMEOUT=55 STEPS=same timeout 120 scripts/gpu-check.sh $R/same >$R/same.log 2>&1
echo "same rc=$? $(el)"; grep -h "same results" $R/same/summary.txt
GTEST_FILTER='Plans.*:AllKernels/KernelPasses.ValidationSweep/cudnn_fwd:AllKernels/KernelPasses.ValidationSweep/cudnn_bwd' \
  PLUGIN_TESTS=0 GPU_SHARDS=3 STEP_TIMEOUT=${GC_S:-180} STEPS=gpu timeout $((${GC_S:-180} + 10)) scripts/gpu-check.sh $R/gc >$R/gc.log 2>&1
echo "gpu tests rc=$? $(el)"; head -6 $R/gc/summary.txt
grep -h "^\[  FAILED\|^\[       OK \]" $R/gc/gpu-tests.*.log
tar cJf "$OUT/r.tar.xz" -C /tmp r

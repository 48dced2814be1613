#!/usr/bin/env bash
# Planned in session 51 (2026-12-07): perf-notes run 63's measurement, any card, the way
# s49d.sh measured run 62 (e08a47e against c43fc7e: cudnn + cublas bwd over 576 cases, the
# before and after wall times): now main's head (20e3c16: runs 62 and 63) against the same
# c43fc7e, so the head's saving less s49d's is what keeping the refusals adds. Carries
# .gpu/bundle.tar.xz (scripts/pack-gpu.sh: the head's build, c43fc7e's tool as build-before/).
# Bounded inside 300 s:
#  1. cuDNN and cuBLAS bwd over s49d.sh's 576 cases (six distributions a problem), before and
#     after, twice in ABBA order: wall times; same-results on the CSVs;
#  2. the cudnn_bwd and cudnn_fwd validation sweeps (GPU tests), one process each, alone, cut
#     at 100 s each: their times (run 62: 63 s and 34 s on e08a47e).
. reports/gpu-calls/planned/prelude.sh
unpack build .gpu/bundle.tar.xz
[ -x build-before/rmsnorm-bench ] || tar xJf .gpu/bundle.tar.xz build-before || exit 9
machine
V=(--M 19 --H 1,127,4096,8192 --dtype fp32,bf16 --wdtype same,fp32
   --dist normal,large,tiny,offset,outlier,zero-row --layout contiguous,strided --no-time --quiet)
for run in before1 after1 after2 before2; do
  bin=build/rmsnorm-bench; [ "${run%?}" = before ] && bin=build-before/rmsnorm-bench
  t=$(date +%s%N)
  timeout 40 $bin --op bwd --kernel cudnn,cublas "${V[@]}" --out $R/v-$run >$R/v-$run.log 2>&1
  echo "$run bwd rc=$? wall=$(( ($(date +%s%N) - t) / 1000000 )) ms $(el)"; grep -h "pass, " $R/v-$run.log
done
python3 scripts/same-results.py $R/v-before1/results.csv $R/v-after1/results.csv | tail -1
for t in cudnn_bwd cudnn_fwd; do
  s=$(date +%s)
  timeout 100 build/tests/rb_gpu_tests --gtest_filter="AllKernels/KernelPasses.ValidationSweep/$t" >$R/$t.log 2>&1
  echo "$t sweep rc=$? $(( $(date +%s) - s )) s $(el)"; grep -h "^\[  FAILED\|^\[       OK \]" $R/$t.log
done
tar cJf "$OUT/r.tar.xz" -C /tmp r

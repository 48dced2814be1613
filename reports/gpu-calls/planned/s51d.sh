#!/usr/bin/env bash
# Planned in session 51 (2026-12-07): perf-notes runs 63 and 64 measured, any card, in one call
# bounded inside about 250 s (the session's device time left: 338 s). Carries .gpu/s51d.tar.xz,
# packed by hand (xz, 256 MiB window) from a clean clone's build of 11f3b44:
#   build/rmsnorm-bench                             11f3b44 (run 64: variants listed per problem)
#   build/tests/rb_gpu_tests                        95a20eb (11f3b44's, the test kernels from one helper)
#   build-prev/rmsnorm-bench                        09b560b (runs 62 and 63, before run 64)
#   build-before/rmsnorm-bench                      c43fc7e (before run 62)
#  1. the Plans GPU tests (the new Plans.VariantsListedOncePerProblem among them) and cuDNN's
#     (CudnnGpu.*: the vendor kernel whose variants the runner now keeps; step 2 runs them
#     through the runner);
#  2. run 64: cudnn fwd with --cudnn-engines all over 2 problems x 12 data sets, 09b560b
#     against 11f3b44, ABBA; same-results;
#  3. run 63: cudnn + cublas bwd over s49d.sh's 576 cases, c43fc7e against 09b560b, ABBA
#     (s49d.sh measured run 62 alone: 39.2 -> 9.7 s); same-results.
# With 248 s of device time left: ROUNDS="a1 b1" STOP_S=100 (about 150 s).
. reports/gpu-calls/planned/prelude.sh
rm -rf build build-prev build-before && tar xJf .gpu/s51d.tar.xz || exit 9
machine
timeout 45 build/tests/rb_gpu_tests --gtest_filter='Plans.*:CudnnGpu.*' >$R/plans.log 2>&1
echo "plans rc=$? $(el)"; grep -h "^\[  FAILED\|^\[       OK \]\|Which is\|Expected" $R/plans.log
# ab TAG A_BIN B_BIN S ARGS...: A, B, B, A, each bounded at S seconds, wall times; same-results of
# the first pair's CSVs. A run that would start past STOP_S (200) s is left out, so the tar gets
# made; ROUNDS (a1 b1 b2 a2) may cut the rounds to one pair (a1 b1) where device time is short.
ab() {
  local tag=$1 a=$2 b=$3 s=$4 run bin t
  shift 4
  for run in ${ROUNDS:-a1 b1 b2 a2}; do
    bin=$a; [ "${run%?}" = b ] && bin=$b
    [ $(( $(date +%s) - T0 )) -gt "${STOP_S:-200}" ] && { echo "$tag $run left out: past ${STOP_S:-200} s"; continue; }
    t=$(date +%s%N)
    timeout "$s" "$bin" "$@" --out $R/$tag-$run >$R/$tag-$run.log 2>&1
    echo "$tag $run ($bin) rc=$? wall=$(( ($(date +%s%N) - t) / 1000000 )) ms $(el)"; grep -h "pass, " $R/$tag-$run.log
  done
  python3 scripts/same-results.py $R/$tag-a1/results.csv $R/$tag-b1/results.csv | tail -1
}
ab r64 build-prev/rmsnorm-bench build/rmsnorm-bench 30 --op fwd --kernel cudnn --cudnn-engines all --M 19 \
  --H 4096 --dtype bf16 --eps 1e-5,1e-2 --dist normal,large,tiny,offset,outlier,zero-row \
  --layout contiguous,strided --no-time --quiet
ab r63 build-before/rmsnorm-bench build-prev/rmsnorm-bench 45 --op bwd --kernel cudnn,cublas --M 19 \
  --H 1,127,4096,8192 --dtype fp32,bf16 --wdtype same,fp32 --dist normal,large,tiny,offset,outlier,zero-row \
  --layout contiguous,strided --no-time --quiet
tar cJf "$OUT/r.tar.xz" -C /tmp r

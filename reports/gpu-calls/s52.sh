#!/usr/bin/env bash
# Ran in session 52 (2026-12-07) on one NVIDIA H100 80GB HBM3 (driver 580.159.04), the session's
# first machine to start (naming nvidia-h200), after 11 calls that got none (05:43-06:25 UTC,
# six naming nvidia-h200 or no kind, five naming nvidia-h100-x1: 766 s of device time).
#   STAGE=check bash reports/gpu-calls/s52.sh   06:26-06:34 UTC, 471 s, carrying .gpu/s52.tar.xz
#     (STAGE forced: the device time left held an H200's baseline or the check, not both): gpu
#     tests rc=0 passed=117 failed=0 skipped=0 unfinished=0; mutants_caught=26/26; plugin
#     mutants caught by 288 and 720 of 1320 cases;
#   FOLLOW_S=380 bash reports/gpu-calls/s52.sh   06:35-06:38 UTC, 174 s, warm: no test left
#     unfinished; same-results 22464 before (c43fc7e), 22464 after (d2e6e11), 0 differing keys;
#     run 64 (cudnn fwd --cudnn-engines all, 240 cases) 09b560b 8.08 s, 5.42 s against
#     d2e6e11 5.45 s, 5.41 s, 0 differing keys; run 63 (cudnn + cublas bwd, 576 cases) c43fc7e
#     40.0 s, 39.6 s against 09b560b 7.74 s, 7.67 s, 0 differing keys.
# Ran again in session 53 (2026-12-07) on one NVIDIA H100 80GB HBM3 (driver 580.159.04), the
# session's first start (naming nvidia-h200), carrying .gpu/s52.tar.xz repacked from a clean
# clone's build of 0b53aca (main's head but for acd43d1's README line) with the same build-prev/
# and build-before/ (57.6 MB):
#   bash reports/gpu-calls/s52.sh   08:45-08:54 UTC, 516 s (the check stage: no H200): gpu
#     tests rc=0 passed=117 failed=0 skipped=0 unfinished=0; mutants_caught=26/26; plugin
#     mutants caught by 288 and 720 of 1320 cases;
#   FOLLOW_S=380 bash reports/gpu-calls/s52.sh   08:54-08:58 UTC, 203 s: no test left
#     unfinished; same-results 22464 before (c43fc7e), 22464 after (0b53aca), 0 differing keys;
#     run 64 09b560b 8.19 s, 5.48 s against 0b53aca 5.75 s, 5.93 s; run 63 c43fc7e 42.8 s and
#     a cut 45.2 s (its 45 s bound) against 09b560b 9.83 s, 9.80 s; 0 differing keys in each.
# Results in reports/gpu-check.txt (d2e6e11, 0b53aca) and docs/perf-notes.md (runs 63 and 64, measured).
# Planned in session 52 (2026-12-07): every call of the session runs this one script, which runs
# the next stage not yet done on the warm machine (markers in /tmp/s52, which a warm machine
# keeps between calls), so a call that comes on an H200 does what only an H200 may do first:
#   baseline  H200 only: s46b.sh's default sweeps of the built-in kernels, fwd:140 add:110
#             bwd:150 add-bwd:150, for the new reports/baselines/h200.csv (issue 11, deliverable 3);
#   check     any card: gpu-check.sh's GPU-test step on main's head (every kernel's validation
#             sweep, every mutant, Plans.*, CudnnGpu.*), 16 shards, GC_S (520) s;
#   follow    any card, after check: the tests check left unfinished (as s50b.sh), then
#             gpu-check.sh's `same` step (the head's rows against c43fc7e's), then perf-notes runs
#             64 and 63 timed ABBA (as s51d.sh planned).
# STAGE forces one. Carries .gpu/s52.tar.xz, packed by hand (xz, 256 MiB window, stripped) from
# a clean clone's build of d2e6e11 (main's head; its GPU-facing code is 11f3b44's):
#   build/rmsnorm-bench, build/tests/rb_*_tests, build/examples/plugin/*.so   d2e6e11
#   build-prev/rmsnorm-bench                                                  09b560b (before run 64)
#   build-before/rmsnorm-bench                                                c43fc7e (before run 62)
# (55.8 MB; with the working tree under a call's 64 MiB). Each stage's files are in $OUT/r.tar.xz.
. reports/gpu-calls/planned/prelude.sh
S=/tmp/s52
mkdir -p $S
for b in build/rmsnorm-bench build/tests/rb_gpu_tests build-prev/rmsnorm-bench build-before/rmsnorm-bench; do
  [ -x $b ] || { rm -rf build build-prev build-before && tar xJf .gpu/s52.tar.xz || exit 9; break; }
done
machine
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
stage=${STAGE:-}
if [ -z "$stage" ]; then
  if [[ "$gpu" == *H200* ]] && [ ! -f $S/baseline.done ]; then stage=baseline
  elif [ ! -f $S/check.done ]; then stage=check
  elif [ ! -f $S/follow.done ]; then stage=follow
  else echo "s52: every stage done on this machine"; exit 0
  fi
fi
echo "stage $stage on $gpu $(el)"
case $stage in
  baseline)
    [[ "$gpu" == *H200* ]] || { echo "s52: the baseline is an H200's"; exit 9; }
    K=naive,row-vector,warp-row,chunked,staged,auto
    for arg in fwd:140 add:110 bwd:150 add-bwd:150; do
      op=${arg%%:*}; s=${arg#*:}
      timeout "$s" build/rmsnorm-bench --op "$op" --kernel $K --quiet --out $R/sweep-$op >$R/sweep-$op.log 2>&1
      echo "sweep $op rc=$? $(el)"; grep -h "Totals" $R/sweep-$op/report.md; tail -2 $R/sweep-$op.log
      cp $R/sweep-$op/results.csv "$OUT/sweep-$op.csv"
    done
    ;;
  check)
    GC_S=${GC_S:-520}
    GPU_SHARDS=16 STEP_TIMEOUT=$GC_S STEPS=gpu timeout $((GC_S + 20)) scripts/gpu-check.sh $R/gc >$R/gc.log 2>&1
    echo "gpu tests rc=$? $(el)"; head -8 $R/gc/summary.txt
    grep -h "^\[  FAILED" $R/gc/gpu-tests.*.log
    ;;
  follow)
    [ -f $S/check/gc/gpu-unfinished.txt ] || { echo "s52: no check stage on this machine"; exit 9; }
    rerun_unfinished $S/check/gc/gpu-unfinished.txt 200
    STEP_TIMEOUT=140 STEPS=same timeout 150 scripts/gpu-check.sh $R/same >$R/same.log 2>&1
    echo "same rc=$? $(el)"; grep -h "same" $R/same/summary.txt
    # ab TAG A_BIN B_BIN S ARGS...: A, B, B, A, each bounded at S seconds, wall times; same-results
    # of the first pair's CSVs; a run that could end past FOLLOW_S (560) s is left out (FOLLOW_S
    # under the call's bound where the device time left is short).
    ab() {
      local tag=$1 a=$2 b=$3 s=$4 run bin t
      shift 4
      for run in a1 b1 b2 a2; do
        bin=$a; [ "${run%?}" = b ] && bin=$b
        [ $(( $(date +%s) - T0 + s )) -gt "${FOLLOW_S:-560}" ] && { echo "$tag $run left out: past ${FOLLOW_S:-560} s"; continue; }
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
    ;;
  *) echo "s52: unknown STAGE '$stage' (baseline, check, follow)"; exit 2 ;;
esac
rm -rf $S/$stage && cp -r $R $S/$stage && touch $S/$stage.done
tar cJf "$OUT/r.tar.xz" -C /tmp r

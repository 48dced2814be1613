#!/usr/bin/env bash
# Ran in session 48 as `bash reports/gpu-calls/planned/s48a.sh` (the session's first start,
# naming nvidia-h200; got NVIDIA H100 80GB HBM3, driver 580.159.04), 2026-12-06, ending 17:34 UTC,
# 487 s, carrying .gpu/bundle.tar.xz (a clean clone's build of ca1f3af): 24 pass, auto took
# row-vector at all 8 shapes; gpu_tests 107 passed, 0 failed, 7 unfinished at the step's 480 s
# (run next as s48b.sh: 7 of 7 passed). Results in reports/gpu-check.txt (ca1f3af).
# Planned in session 46 (2026-12-06, no device time left): the GPU check of main's head after
# de6378d's (reports/gpu-check.txt), whose later commits change host code only: the CLI's
# checks (c7592e1, 6acaef7, 15fea9b) and auto's backward alignment question (82f5ace: the
# kernel's rows_aligned16, so one row's stride no longer shifts it: bf16 M=1 H 16377-16384
# with an aligned base now take row-vector where auto took chunked). Any card (say which),
# first of the planned calls; carries .gpu/bundle.tar.xz (a clean clone's build of the head,
# scripts/pack-gpu.sh). Bounded inside 600 s, tar last:
#  1. auto beside row-vector and chunked at the pick that moved, checked and timed: bwd and
#     add-bwd bf16 M=1 H 16377, 16380, 16383, 16384 (graph-replay µs), 60 s;
#  2. the GPU-test step of scripts/gpu-check.sh (every kernel's validation sweep, every
#     mutant), 16 shards balanced by reports/gpu-test-times.txt, 480 s (s40a.sh ended 90 of
#     98 tests in 480 s; the rest then go in a call of their own, as s43d.sh did).
. reports/gpu-calls/planned/prelude.sh
rm -rf build && tar xJf .gpu/bundle.tar.xz || exit 9
machine
timeout 60 build/rmsnorm-bench --kernel auto,row-vector,chunked --op bwd,add-bwd --dtype bf16 --M 1 \
  --H 16377,16380,16383,16384 --eps 1e-5 --quiet --out $R/m1 >$R/m1.log 2>&1
echo "m1 rc=$? $(el)"; grep -h "→\|pass, " $R/m1.log
GPU_SHARDS=16 STEP_TIMEOUT=480 STEPS=gpu timeout 500 scripts/gpu-check.sh $R/gc >$R/gc.log 2>&1
echo "gpu tests rc=$? $(el)"; head -8 $R/gc/summary.txt
tar cJf "$OUT/r.tar.xz" -C /tmp r

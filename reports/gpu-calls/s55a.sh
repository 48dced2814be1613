#!/usr/bin/env bash
# Ran in session 55 (2026-12-07 14:58-15:05 UTC, 422 s, warm after s54b.sh) as `GC_S=420 bash
# reports/gpu-calls/planned/s55a.sh` (420: the session's device time left, 543 s, held no more):
# gpu_tests rc=124 passed=113 failed=0 skipped=0 unfinished=4 (four backward mutants, 150-200 s
# each alone); mutants_caught=22/26; plugin example-eps-outside caught by 288 of 1320 cases,
# example-weight-by-row by 720 of 1320. Then s55b.sh. Results: reports/gpu-check.txt (88589b2).
# As planned:
# Session 55 (2026-12-07), any card, right after s54b.sh passed: the GPU-test step of the full
# check (every kernel's validation sweep, every mutant, Plans.*, CudnnGpu.*) on the head main
# takes when branch s54-add-two merges (88589b2, a fast-forward). Carries .gpu/check88.tar.xz:
# scripts/pack-gpu.sh (check mode) run in a clean clone's build of 88589b2 (Release, sm_90), no
# build-before/ (41.1 MB). As s52.sh's check stage: 16 shards, GC_S (520) s. About 545 s.
. reports/gpu-calls/planned/prelude.sh
rm -rf build && tar xJf .gpu/check88.tar.xz || exit 9
machine
GC_S=${GC_S:-520}
GPU_SHARDS=16 STEP_TIMEOUT=$GC_S STEPS=gpu timeout $((GC_S + 20)) scripts/gpu-check.sh $R/gc >$R/gc.log 2>&1
echo "gpu tests rc=$? $(el)"; head -8 $R/gc/summary.txt
grep -h "^\[  FAILED" $R/gc/gpu-tests.*.log
tar cJf "$OUT/r.tar.xz" -C /tmp r

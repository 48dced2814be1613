#!/usr/bin/env bash
# Planned in session 56 (2026-12-07; no device time was left to run it), any card, first: the
# GPU check of main at 4e3a36f, whose code the last check (88589b2) did not cover: 7cf66cb's
# add_chunked (SASS identical to 88589b2's) and `compare --metric` (host code). The GPU-test step
# in 16 shards (every kernel's validation sweep, every mutant, Plans.*, CudnnGpu.*, the plugin
# tests), then memcheck over the three sansweeps, as s55a.sh and s56a.sh did for 88589b2; the
# backward mutants took 150-200 s each there, so GC_S (400) below 520 may leave some unfinished (rerun
# them with rerun_unfinished, as s56a.sh and s57b.sh). Carries $PACK (default .gpu/check-75bb03f.tar.xz:
# scripts/pack-gpu.sh, check mode, in a clean clone's build of 75bb03f, whose code is 4e3a36f's;
# session 57 rebuilt it, the CPU machine's checkout being new); the tool and tests already on
# the machine (s56c.sh run first from the same bundle) are used as they are. About 580 s; tar
# last.
. reports/gpu-calls/planned/prelude.sh
PACK=${PACK:-.gpu/check-75bb03f.tar.xz}
[ -x build/tests/rb_gpu_tests ] || { rm -rf build && tar xJf "$PACK"; } || exit 9
machine
GC_S=${GC_S:-400}
GPU_SHARDS=16 STEP_TIMEOUT=$GC_S STEPS=gpu timeout $((GC_S + 20)) scripts/gpu-check.sh $R/gc >$R/gc.log 2>&1
echo "gpu tests rc=$? $(el)"; head -8 $R/gc/summary.txt
grep -h "^\[  FAILED" $R/gc/gpu-tests.*.log
SANITIZER_TOOLS=memcheck SANITIZER_TIMEOUT=130 SANSWEEP_SHARDS=4 STEPS=sansweep timeout 150 scripts/gpu-check.sh $R/sa >$R/sa.log 2>&1
echo "sansweep rc=$? $(el)"; grep -h "sanitizers over" $R/sa/summary.txt
grep -h "ERROR SUMMARY" $R/sa/*.log 2>/dev/null | sort | uniq -c
tar cJf "$OUT/r.tar.xz" -C /tmp r

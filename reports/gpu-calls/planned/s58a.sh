#!/usr/bin/env bash
# Planned in session 58 (2026-12-07), any card, after s57c.sh if run 68 gains: the GPU-test
# step of the GPU check of the merge candidate, main with run 68's exchange (the patch less its
# experiment knob: branch merge-xchg, 71c76f6 and 02ce683 cherry-picked onto 8e0a37c). Every
# kernel's validation sweep, every mutant, Plans.*, CudnnGpu.*, the plugin tests, 16 shards,
# GC_S (520) seconds: 75bb03f's check needed a 400 s step and a second call of 332 s
# (s57a.sh, s57b.sh), LongRows.HugeRowsSumWithinTheTolerance alone 331 s. The sansweeps and any
# unfinished tests follow in s58b.sh. Carries $PACK (default .gpu/check-xchg.tar.xz:
# scripts/pack-gpu.sh in the candidate's clean-clone build). About 560 s; tar last.
. reports/gpu-calls/planned/prelude.sh
PACK=${PACK:-.gpu/check-xchg.tar.xz}
rm -rf build build-before /tmp/s58a-unfinished.txt && tar xJf "$PACK" || exit 9
machine >$OUT/s58a.txt 2>&1
gpu_tests_step "${GC_S:-520}" >>$OUT/s58a.txt 2>&1
cp $R/gc/gpu-unfinished.txt /tmp/s58a-unfinished.txt 2>/dev/null && cp /tmp/s58a-unfinished.txt $OUT/
tar cJf "$OUT/r.tar.xz" -C /tmp r

#!/usr/bin/env bash
# Planned in session 55 (2026-12-07), run in session 56 (16:33-16:36 UTC, H100), any card: the rest of 88589b2's check after s55a.sh and
# s55b.sh (reports/gpu-check.txt): the four backward mutants' GPU tests those calls left
# unfinished (150-200 s each alone on an H100; four shards beside each other, bounded at 260 s),
# then memcheck over the three sansweeps (as s53b.sh: 59 s at 0b53aca). Carries
# .gpu/check88.tar.xz (scripts/pack-gpu.sh from a clean clone's build of 88589b2; remake it so
# if it is gone). About 340 s; tar last.
. reports/gpu-calls/planned/prelude.sh
rm -rf build && tar xJf .gpu/check88.tar.xz || exit 9
machine
printf '%s\n' AllMutants/MutantCaught.ByValidationSweep/mutant_dw_partial_overwrite \
  AllMutants/MutantCaught.ByValidationSweep/mutant_dw_wrong_axis \
  AllMutants/MutantCaught.ByValidationSweep/mutant_no_correction \
  AllMutants/MutantCaught.ByValidationSweep/mutant_saved_as_rms >/tmp/u56.txt
rerun_unfinished /tmp/u56.txt 260
SANITIZER_TOOLS=memcheck SANITIZER_TIMEOUT=130 SANSWEEP_SHARDS=4 STEPS=sansweep timeout 270 scripts/gpu-check.sh $R/sa >$R/sa.log 2>&1
echo "sansweep rc=$? $(el)"; grep -h "sanitizers over" $R/sa/summary.txt
grep -h "ERROR SUMMARY" $R/sa/*.log 2>/dev/null | sort | uniq -c
tar cJf "$OUT/r.tar.xz" -C /tmp r

#!/usr/bin/env bash
# Ran in session 41 (2026-12-06 00:55-01:02 UTC by the machine's clock, NVIDIA H100 80GB HBM3,
# driver 580.159.04, after one failed start of 181 s) as `bash reports/gpu-calls/s41a.sh`,
# carrying .gpu/bundle.tar.xz (0ebbbad's build), under a call limit of 420 s that was too short:
# synccheck and initcheck run one after the other (up to 340 s) beside the wide step, after the
# bundle's unpacking. The call was cut at 420 s with nothing printed; a 1 s call after it fetched
# /tmp/r. Done by then: wide (rc=0, 54 of 60 cases pass, 3 skips, mutant-offset-32bit caught by
# 3 of 3, 214 s), synccheck over both sweeps (0 errors; 1608 and 128 pass), racecheck over the
# main sweep (0 errors, 1608 pass); cut: initcheck at many rows (5 of 128 cases, no error
# printed) and racecheck at many rows (62 cases, no hazard printed). Results in
# reports/gpu-check.txt (session 41). Give such a call 600 s.
# Planned in session 40 (2026-12-05): what is left of session 38's call B (planned/s38b.sh) after
# s40a.sh, s40b.sh and s40c.sh ran. It carries .gpu/bundle.tar.xz (main's build, unpacked when
# the machine does not hold build/); with .gpu/before.tar.xz beside it the carry passes a call's
# 64 MiB, so d280f13's long-row backward moved to s41b.sh (session 41):
#  1. the sanitizer passes not yet run on main's code: racecheck over the sansweep's main sweep
#     (s40b.sh cut it at 110 s after 1475 of 1800 cases, no hazard printed) and its rows sweep,
#     synccheck over both, initcheck over the rows sweep (memcheck over both and initcheck over
#     the main sweep came back clean in s40a.sh and s40b.sh);
#  2. beside them, gpu-check's step `wide` on the preset as session 40 widened it (fp32 H=4096 and bf16
#     H=4097 beside bf16 H=4096: three times s40b.sh's 20 cases, fp32's twice the bytes; expect
#     200-250 s on an H100, up to 34 GiB of device memory a case). Needs a bundle of a head at or
#     after that change.
set -uo pipefail
R=/tmp/r
mkdir -p $R
T0=$(date +%s)
el() { echo "+$(( $(date +%s) - T0 ))s"; }
build/rmsnorm-bench --version 2>/dev/null || tar xJf .gpu/bundle.tar.xz || exit 9
build/rmsnorm-bench --version
SANITIZER_TOOLS=racecheck SANITIZER_TIMEOUT=260 STEPS=sansweep scripts/gpu-check.sh $R/sa >$R/sa.log 2>&1 &
(SANITIZER_TOOLS=synccheck SANITIZER_TIMEOUT=170 STEPS=sansweep scripts/gpu-check.sh $R/sb >$R/sb.log 2>&1
 SANITIZER_TOOLS=initcheck SANITIZER_TIMEOUT=170 SANSWEEP_ARGS= STEPS=sansweep scripts/gpu-check.sh $R/sc >$R/sc.log 2>&1) &
STEPS=wide WIDE_TIMEOUT=330 scripts/gpu-check.sh $R/wd >$R/wd.log 2>&1
echo "wide rc=$? $(el)"; grep -h "wide tensors" $R/wd/summary.txt
grep -h "^WIDE\|^MUTANT\|FAILED" $R/wd/wide-tests.log | cut -c1-200 | head -70
wait
for d in sa sb sc; do echo "== $d"; grep -h "steps\|sanitizers over" $R/$d/summary.txt; done
echo "all done $(el)"
tar cJf $OUT/r.tar.xz -C /tmp r

#!/usr/bin/env bash
# Ran in session 40 (2026-12-05, 23:16 UTC, 118 s) on the H100 that s40a.sh left warm (58bce4c's
# build/ still there), with the 218 s of device time left, as one command line (here wrapped):
# gpu-check's step `wide` (bf16 M=524289 H=4096, every op, every built-in kernel and
# mutant-offset-32bit) beside racecheck and initcheck over the sansweep's main sweep (the rows
# sweep left out for the time: SANSWEEP_ROWS_ARGS empty), 110 s each.
R=/tmp/r
mkdir -p $R
T0=$(date +%s)
build/rmsnorm-bench --version
(SANITIZER_TOOLS="racecheck initcheck" SANITIZER_TIMEOUT=110 SANSWEEP_ROWS_ARGS= STEPS=sansweep \
  timeout 240 scripts/gpu-check.sh $R/sa >$R/sa.log 2>&1) &
STEPS=wide STEP_TIMEOUT=230 timeout 240 scripts/gpu-check.sh $R/wd >$R/wd.log 2>&1
echo "wide rc=$? +$(($(date +%s) - T0))s"
grep -h "wide" $R/wd/summary.txt
grep -h "^WIDE\|^MUTANT\|FAILED\|OK \]\|SKIP" $R/wd/wide-tests.log | head -40
tail -5 $R/wd/wide-tests.log
wait
grep -h "sanitizers over" $R/sa/summary.txt
echo "+$(($(date +%s) - T0))s"
tar cJf $OUT/r.tar.xz -C /tmp r

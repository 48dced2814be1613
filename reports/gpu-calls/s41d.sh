#!/usr/bin/env bash
# Ran in session 41 (2026-12-06 01:12-01:19 UTC, 400 s, the same H100 warm after s41c.sh) as
# `bash reports/gpu-calls/s41d.sh`, carrying .gpu/bundle.tar.xz: the sanitizer passes s41a.sh's
# cut left, racecheck over both sweeps beside initcheck over the rows sweep, each one process.
# racecheck over the main sweep: 0 hazards (RACECHECK SUMMARY: 0 errors), 1608 pass, 192 skip,
# 166 s; racecheck at many rows cut at its 225 s after 59 of 128 cases (59 pass, no hazard
# printed); initcheck at many rows cut at its 400 s after 11 of 128 cases (no error printed).
# Hence SANSWEEP_SHARDS (scripts/gpu-check.sh, session 41). The session's device time was then
# spent (133 s left).
R=/tmp/r2
mkdir -p $R
T0=$(date +%s)
SANITIZER_TOOLS=racecheck SANITIZER_TIMEOUT=225 STEPS=sansweep timeout 470 scripts/gpu-check.sh $R/sa >$R/sa.log 2>&1 &
SANITIZER_TOOLS=initcheck SANITIZER_TIMEOUT=400 SANSWEEP_ARGS= STEPS=sansweep timeout 470 scripts/gpu-check.sh $R/sc >$R/sc.log 2>&1 &
wait
echo "+$(($(date +%s) - T0))s"
for d in sa sc; do echo "== $d"; grep -h "steps\|sanitizers over\|^date" $R/$d/summary.txt; done
tar cJf "$OUT/r2.tar.xz" -C /tmp r2

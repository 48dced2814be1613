#!/usr/bin/env bash
# Ran in session 48 right after s48c.sh (same warm H100), 2026-12-06 18:12-18:14 UTC, 131 s:
# racecheck 0 hazards and initcheck 0 errors, 1608 pass each. Results in reports/gpu-check.txt.
# Planned in session 48 (2026-12-06), right after s48c.sh on the same warm machine (its build/):
# racecheck and initcheck over the tool sansweep's main sweep (the built-in strategies at M 1
# and 3, every op, bf16 and fp32, three layouts; the rows and clusters sweeps left out: under
# these two tools they do not end inside a call, s43e.sh), each as 4 processes, 150 s at most,
# the two tools one after the other. Bounded inside 360 s, tar last.
. reports/gpu-calls/planned/prelude.sh
unpack build .gpu/bundle.tar.xz
machine
SANITIZER_TOOLS="racecheck initcheck" SANITIZER_TIMEOUT=150 SANSWEEP_SHARDS=4 SANSWEEP_ROWS_ARGS= \
  SANSWEEP_CLUSTER_ARGS= STEPS=sansweep timeout 320 scripts/gpu-check.sh $R/sa >$R/sa.log 2>&1
echo "sansweep rc=$? $(el)"
grep -h "sanitizers over" $R/sa/summary.txt
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" $R/sa/*.log 2>/dev/null | sort | uniq -c
tar cJf "$OUT/r.tar.xz" -C /tmp r

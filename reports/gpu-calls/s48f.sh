#!/usr/bin/env bash
# Ran in session 48 right after s48e.sh (same warm H100), 2026-12-06 18:15 UTC, 51 s, as one
# command line (this file its text): synccheck over the sansweep's rows (M=100003) and clusters
# (H=65536 M=300) sweeps, 4 processes each: 128 pass and 40 pass, 8 skip, 0 errors.
. reports/gpu-calls/planned/prelude.sh; SANITIZER_TOOLS=synccheck SANITIZER_TIMEOUT=55 SANSWEEP_SHARDS=4 SANSWEEP_ARGS= STEPS=sansweep timeout 125 scripts/gpu-check.sh $R/sa >$R/sa.log 2>&1; echo "rc=$? $(el)"; grep -h "sanitizers over" $R/sa/summary.txt; grep -h "ERROR SUMMARY" $R/sa/*.log | sort | uniq -c; tar cJf "$OUT/r.tar.xz" -C /tmp r

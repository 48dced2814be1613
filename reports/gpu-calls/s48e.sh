#!/usr/bin/env bash
# Ran in session 48 right after s48d.sh (same warm H100, ca1f3af's build/), 2026-12-06 18:14 UTC,
# 9 s, as one command line (this file its text): synccheck over the sansweep's main sweep, 4
# processes: 1608 pass, 0 errors. Then s48f.sh. Results in reports/gpu-check.txt (ca1f3af).
. reports/gpu-calls/planned/prelude.sh; SANITIZER_TOOLS=synccheck SANITIZER_TIMEOUT=110 SANSWEEP_SHARDS=4 SANSWEEP_ROWS_ARGS= SANSWEEP_CLUSTER_ARGS= STEPS=sansweep timeout 130 scripts/gpu-check.sh $R/sa >$R/sa.log 2>&1; echo "rc=$? $(el)"; grep -h "sanitizers over" $R/sa/summary.txt; grep -h "ERROR SUMMARY" $R/sa/*.log | sort | uniq -c; tar cJf "$OUT/r.tar.xz" -C /tmp r

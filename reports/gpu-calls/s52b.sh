#!/usr/bin/env bash
# Ran in session 52 right after s52.sh's follow stage (same warm H100, 06:38-06:39 UTC, 60 s), as
# one command: memcheck over the three sansweeps of main's head (d2e6e11; its kernels are
# ca1f3af's, checked by s48c.sh; since then the harness keeps plans, refusals and variant lists
# per problem): memcheck rc=0 errors=0 (1608 pass, 0 fail, 192 skip); at many rows: rc=0
# errors=0 (128 pass); over clusters: rc=0 errors=0 (40 pass, 8 skip); 12 of 12 ERROR SUMMARY
# lines 0 errors.
. reports/gpu-calls/planned/prelude.sh; machine; SANITIZER_TOOLS=memcheck SANITIZER_TIMEOUT=130 SANSWEEP_SHARDS=4 STEPS=sansweep timeout 270 scripts/gpu-check.sh $R/sa >$R/sa.log 2>&1; echo "sansweep rc=$? $(el)"; grep -h "sanitizers over" $R/sa/summary.txt; grep -h "ERROR SUMMARY" $R/sa/*.log 2>/dev/null | sort | uniq -c; tar cJf "$OUT/r.tar.xz" -C /tmp r

#!/usr/bin/env bash
# Ran in session 53 (2026-12-07 09:12-09:17 UTC, 315 s) on one NVIDIA H100 80GB HBM3 (driver
# 580.159.04), warm after s53a.sh, the head's build (0b53aca) from .gpu/s52.tar.xz: s52b.sh's
# memcheck over the three sansweeps, then the wide step alone with a 300 s bound (s52c.sh's 245 s
# cut it at d2e6e11; s53a.sh timed the wide preset at 244-264 s on this card).
#   sansweep rc=0 +59 s: memcheck rc=0 errors=0 (1608 pass, 0 fail, 192 skip); at many rows
#     rc=0 errors=0 (128 pass); over clusters rc=0 errors=0 (40 pass, 8 skip); 12 ERROR SUMMARY
#     lines, 0 errors;
#   wide rc=0 +315 s: 54 of 60 cases pass (3 skip), mutant-offset-32bit caught by 3 of 3;
#     WideTensors.EveryBuiltInKernelIndexesPast32Bits 255.3 s.
# Results in reports/gpu-check.txt (0b53aca). Bounded inside 430 s, tar last.
. reports/gpu-calls/planned/prelude.sh
machine
SANITIZER_TOOLS=memcheck SANITIZER_TIMEOUT=130 SANSWEEP_SHARDS=4 STEPS=sansweep timeout 270 scripts/gpu-check.sh $R/sa >$R/sa.log 2>&1
echo "sansweep rc=$? $(el)"; grep -h "sanitizers over" $R/sa/summary.txt
grep -h "ERROR SUMMARY" $R/sa/*.log 2>/dev/null | sort | uniq -c
STEPS=wide WIDE_TIMEOUT=300 STEP_TIMEOUT=300 timeout 305 scripts/gpu-check.sh $R/wd >$R/wd.log 2>&1
echo "wide rc=$? $(el)"; grep -h "wide" $R/wd/summary.txt; tail -3 $R/wd/*.log | cut -c1-200
tar cJf "$OUT/r.tar.xz" -C /tmp r

#!/usr/bin/env bash
# Ran in session 51 right after s50b.sh (same warm H100, 03:10-03:11 UTC, 78 s), as one command:
# gpu-check.sh's `same` step again, s50a.sh's 60 s bound having cut it: the built-in strategies
# over four distributions, the head's (20e3c16) rows against c43fc7e's tool in build-before/
# (the code before run 62): rc=0, 22464 rows before, 22464 after, 0 differing keys, in 76 s.
. reports/gpu-calls/planned/prelude.sh; machine; STEP_TIMEOUT=170 STEPS=same timeout 180 scripts/gpu-check.sh $R/same >$R/same.log 2>&1; echo "same rc=$? $(el)"; cat $R/same/summary.txt; tail -5 $R/same.log; tar cJf "$OUT/r.tar.xz" -C /tmp r

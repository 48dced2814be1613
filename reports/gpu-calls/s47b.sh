#!/usr/bin/env bash
# Ran in session 46 right after s47a.sh, the same H100, 15:11 UTC, 229 s: gpu_tests 26 of 26,
# mutants_caught=26/26 (reports/gpu-check.txt).
# Planned in session 46 (2026-12-06): right after s47a.sh on its machine (build/ holds
# exp/overhang-col's f73f974 tool and GPU tests; main's head with the branch merged has its
# code): every numerics mutant's GPU test (AllMutants/*: each mutant is run through the
# validation sweep and must be caught), 14 shards balanced by reports/gpu-test-times.txt,
# bounded at 290 s.
. reports/gpu-calls/planned/prelude.sh
machine
GTEST_FILTER="AllMutants/*" PLUGIN_TESTS=0 GPU_SHARDS=14 STEP_TIMEOUT=280 STEPS=gpu \
  timeout 290 scripts/gpu-check.sh $R/gc >$R/gc.log 2>&1
echo "gpu tests rc=$? $(el)"; head -8 $R/gc/summary.txt
grep -h "^\[  FAILED\|^MUTANT" $R/gc/gpu-tests.*.log
tar cJf "$OUT/r.tar.xz" -C /tmp r

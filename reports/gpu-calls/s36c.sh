#!/usr/bin/env bash
# Session 36, call C (2026-12-05; call B's plan cut to the device time left, 272 s): the add's
# held rows at many rows on the final code: the many-rows test, then the add's headline rows
# of chunked and auto at M=16384, checked against the fp64 reference and timed.
set -uo pipefail
T0=$(date +%s)
el() { echo "+$(( $(date +%s) - T0 ))s"; }
tar xJf .gpu/bundle.tar.xz || exit 9
build/rmsnorm-bench --version
timeout 105 build/tests/rb_gpu_tests --gtest_filter='Chunked.AddHeld*' > $OUT/tests.log 2>&1
echo "tests rc=$? $(grep -h '^\[ *\(OK\|FAILED\|PASSED\) ' $OUT/tests.log | tr '\n' ' ') $(el)"
timeout 35 build/rmsnorm-bench --op add --kernel chunked,auto --dtype bf16,fp32 --M 16384 --H 1024,2048,4096,8192,16384 \
  --quiet --out $OUT/sweep > $OUT/sweep.log 2>&1
echo "sweep rc=$? $(el)"; grep -h "Totals" $OUT/sweep/report.md
python3 - $OUT/sweep/results.csv <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(r['kernel'], r['picked'], r['dtype'], r['H'], r['status'], r['pct_of_copy'][:5])
PY
echo "all done $(el)"

#!/usr/bin/env bash
# Call B, planned in sessions 37 and 38 (2026-12-05; no device was lent in either), right after
# call A (the machine keeps build/ for 30 s). It carries .gpu/before.tar.xz, d280f13's tool
# (build-before/, 33 MB compressed), and runs main's build/ as call A left it on the machine
# (both tools in one carry pass 64 MiB: their device code differs throughout, so xz finds
# little to share):
#  1. the four sanitizers, each over the tool sweep and the rows sweep (two processes) and,
#     beside them (checks, not timings), fp32 M=1 H=2^28 through both tools: d280f13 expected
#     to fail (naive, chunked; fwd, add, bwd; a running fp32 sum a thread drifts past the rrms
#     tolerance), main to pass (sums in rounds, perf-notes run 54);
#  2. still beside the sanitizers, gpu-check's step `wide` (session 38).
# The baseline's add rows and run 54's timing moved to call C in session 38 (the rows sweeps
# under the sanitizers need the time).
set -uo pipefail
# Files in /tmp/r, back as one tar at the end (a call returns 8 files at most; session 39).
R=/tmp/r
mkdir -p $R
T0=$(date +%s)
el() { echo "+$(( $(date +%s) - T0 ))s"; }
tar xJf .gpu/before.tar.xz || exit 9
build-before/rmsnorm-bench --version
build/rmsnorm-bench --version || { echo "call A's build is not on the machine"; exit 8; }
# Each tool over the main sweep (1800 cases with skewed rows) and the rows sweep (session 38:
# the backward's persistent grids at M=100003), each invocation under its own timeout.
SANITIZER_TOOLS="racecheck synccheck" SANITIZER_TIMEOUT=200 STEPS=sansweep scripts/gpu-check.sh $R/sa > $R/sa.log 2>&1 &
SANITIZER_TOOLS="memcheck initcheck" SANITIZER_TIMEOUT=170 STEPS=sansweep scripts/gpu-check.sh $R/sb > $R/sb.log 2>&1 &
for b in build-before build; do
  timeout 150 $b/rmsnorm-bench --op fwd,add,bwd --kernel naive,chunked --dtype fp32 --M 1 --H 268435456 \
    --min-samples 3 --max-time 0.05 --quiet --out $R/long-$b > $R/long-$b.log 2>&1
  echo "$b long rows rc=$? $(el)"; grep -h Totals $R/long-$b/report.md
  python3 - $R/long-$b/results.csv <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(' ', r['op'], r['kernel'], r['status'], r['max_rel_err'], r['worst_row'], r['worst_col'], r['reason'][:120])
PY
done
# The wide tensors (session 38: --preset wide, bf16 M=524289 H=4096, every op, built-in kernels
# and mutant-offset-32bit), beside the sanitizers' small sweeps: up to 17 GiB a case.
STEPS=wide STEP_TIMEOUT=200 scripts/gpu-check.sh $R/wd > $R/wd.log 2>&1
echo "wide rc=$? $(el)"; grep -h "wide tensors" $R/wd/summary.txt; grep -h "^WIDE\|^MUTANT\|FAILED" $R/wd/wide-tests.log | head -40
wait
for d in sa sb; do echo "== $d"; grep -h "sanitizers over" $R/$d/summary.txt; done
echo "sanitizers done $(el)"
echo "all done $(el)"
tar cJf $OUT/r.tar.xz -C /tmp r

#!/usr/bin/env bash
# The GPU check, in one go: GPU tests (kernels and mutants), the CPU tests, compute-sanitizer
# memcheck over the GPU tests, and the default sweep. Leaves logs and reports in OUTDIR and
# ends with OUTDIR/summary.txt (commit, GPU, tests, mutants, sanitizer errors, headline GB/s).
#
#   scripts/gpu-check.sh OUTDIR
#
# Uses an existing build in ${BUILD_DIR:-build} (so a build made elsewhere can be carried to
# the GPU machine), building first only when the binaries are missing.
# SANITIZER_TIMEOUT (seconds, default 420) bounds the memcheck pass, STEP_TIMEOUT (300) each
# other step; a step cut short is reported as such in the summary (rc 124), never as clean.
# SANITIZER_FILTER (a gtest filter, default: all GPU tests) narrows the memcheck pass when
# device time is short; the summary names the filter used.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/gpu-check.sh OUTDIR}
BUILD=${BUILD_DIR:-build}
SANITIZER_TIMEOUT=${SANITIZER_TIMEOUT:-420}
SANITIZER_FILTER=${SANITIZER_FILTER:-*}
STEP_TIMEOUT=${STEP_TIMEOUT:-300}  # bounds each of the other steps
mkdir -p "$OUT"
BIN=$BUILD/rmsnorm-bench
GPU_TESTS=$BUILD/tests/rb_gpu_tests
CPU_TESTS=$BUILD/tests/rb_cpu_tests
if [ ! -x "$BIN" ] || [ ! -x "$GPU_TESTS" ]; then scripts/build.sh || exit 2; fi

stamp() { date -u +%H:%M:%S; }
commit=$("$BIN" --version | sed -n 's/.*commit=//p')
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)
echo "[$(stamp)] gpu-check: commit=$commit gpu=$gpu"

# gtest's closing lines: "[  PASSED  ] N tests." / "[  FAILED  ] N tests, listed below:"
count() { sed -n "s/^\[  $1  \] \([0-9]*\) test.*/\1/p" "$2" | tail -n 1; }

echo "[$(stamp)] GPU tests"
timeout "$STEP_TIMEOUT" "$GPU_TESTS" --gtest_output="xml:$OUT/gpu-tests.xml" >"$OUT/gpu-tests.log" 2>&1
gpu_rc=$?
gpu_pass=$(count PASSED "$OUT/gpu-tests.log"); gpu_fail=$(count FAILED "$OUT/gpu-tests.log")
gpu_skip=$(count SKIPPED "$OUT/gpu-tests.log")
mutants_total=$("$BIN" list --all | grep -c '^mutant-')
mutants_caught=$(grep '^MUTANT .* caught by [1-9]' "$OUT/gpu-tests.log" | wc -l)
echo "[$(stamp)] GPU tests rc=$gpu_rc passed=${gpu_pass:-0} failed=${gpu_fail:-0} skipped=${gpu_skip:-0} mutants=$mutants_caught/$mutants_total"

echo "[$(stamp)] CPU tests"
timeout "$STEP_TIMEOUT" "$CPU_TESTS" >"$OUT/cpu-tests.log" 2>&1
cpu_rc=$?
cpu_pass=$(count PASSED "$OUT/cpu-tests.log"); cpu_fail=$(count FAILED "$OUT/cpu-tests.log")
echo "[$(stamp)] CPU tests rc=$cpu_rc passed=${cpu_pass:-0} failed=${cpu_fail:-0}"

echo "[$(stamp)] default sweep"
timeout "$STEP_TIMEOUT" "$BIN" --out "$OUT/sweep" >"$OUT/sweep.log" 2>"$OUT/sweep.err"
sweep_rc=$?
echo "[$(stamp)] sweep rc=$sweep_rc"

# Headline: auto, fwd, bf16, M=16384, per H: GB/s and % of copy (best over eps).
headline=$(awk -F, 'NR==1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
  $c["kernel"] == "auto" && $c["op"] == "fwd" && $c["dtype"] == "bf16" && $c["wdtype"] == "bf16" &&
  $c["M"] == 16384 && $c["status"] == "pass" {
    h = $c["H"]; if (!(h in g) || $c["gbps"] + 0 > g[h] + 0) { g[h] = $c["gbps"]; p[h] = $c["pct_of_copy"]; k[h] = $c["picked"] } }
  END { for (h in g) printf "%d H=%s %.0f GB/s %.1f%% (%s);\n", h, h, g[h], p[h], k[h] }' \
  "$OUT/sweep/results.csv" 2>/dev/null | sort -n | cut -d' ' -f2- | tr '\n' ' ')
copy=$(sed -n 's/^copy ceiling: \([0-9]*\) GB.*/\1/p' "$OUT/sweep.err" | head -n 1)
headline="copy ceiling ${copy:-?} GB/s; $headline"

echo "[$(stamp)] README quick start: scripts/run.sh --H 4096 --dtype bf16"
RB_SKIP_BUILD=1 BUILD_DIR="$BUILD" timeout "$STEP_TIMEOUT" scripts/run.sh --H 4096 --dtype bf16 --out "$OUT/h4096" \
  >"$OUT/h4096.log" 2>&1
quick_rc=$?
echo "[$(stamp)] quick start rc=$quick_rc"

# Scale-out: the same small sweep whole and as 2 shards merged must compare clean; the gate
# must pass against a fresh baseline and fail against one whose bandwidth is raised by 20%.
echo "[$(stamp)] scale-out: shards, merge, compare, ci-gate"
SO=(--H 4096,8192 --M 16384 --dtype bf16 --eps 1e-5 --quiet)
{
  "$BIN" "${SO[@]}" --out "$OUT/so/whole" >/dev/null
  "$BIN" "${SO[@]}" --shard 0/2 --out "$OUT/so/shard0" >/dev/null
  "$BIN" "${SO[@]}" --shard 1/2 --out "$OUT/so/shard1" >/dev/null
  "$BIN" merge "$OUT/so/shard0/results.csv" "$OUT/so/shard1/results.csv" -o "$OUT/so/merged.csv"
  "$BIN" compare "$OUT/so/whole/results.csv" "$OUT/so/merged.csv" --md "$OUT/so/compare.md"
  echo "compare whole vs 2 shards merged: rc=$?"
  RB_SKIP_BUILD=1 BUILD_DIR="$BUILD" scripts/ci-gate.sh --baseline "$OUT/so/whole/results.csv" --out "$OUT/so/gate-fresh" -- "${SO[@]}"
  echo "ci-gate against a fresh baseline: rc=$?"
  python3 - "$OUT/so/whole/results.csv" "$OUT/so/raised.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
g = rows[0].index("gbps")
for r in rows[1:]:
    if r[g]:
        r[g] = repr(float(r[g]) * 1.2)
csv.writer(open(sys.argv[2], "w", newline=""), lineterminator="\n").writerows(rows)
PY
  RB_SKIP_BUILD=1 BUILD_DIR="$BUILD" scripts/ci-gate.sh --baseline "$OUT/so/raised.csv" --out "$OUT/so/gate-raised" -- "${SO[@]}"
  echo "ci-gate against the baseline raised by 20%: rc=$?"
} >"$OUT/scaleout.log" 2>&1
so_compare=$(sed -n 's/^compare whole vs 2 shards merged: rc=//p' "$OUT/scaleout.log")
so_fresh=$(sed -n 's/^ci-gate against a fresh baseline: rc=//p' "$OUT/scaleout.log")
so_raised=$(sed -n 's/^ci-gate against the baseline raised by 20%: rc=//p' "$OUT/scaleout.log")
echo "[$(stamp)] scale-out: shards-vs-whole compare rc=$so_compare, gate fresh rc=$so_fresh, gate raised rc=$so_raised"

echo "[$(stamp)] compute-sanitizer memcheck (timeout ${SANITIZER_TIMEOUT}s)"
timeout "$SANITIZER_TIMEOUT" compute-sanitizer --tool memcheck --print-limit 20 "$GPU_TESTS" \
  --gtest_filter="$SANITIZER_FILTER" \
  >"$OUT/sanitizer.log" 2>&1
san_rc=$?
san_errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' "$OUT/sanitizer.log" | tail -n 1)
if [ "$san_rc" -eq 124 ]; then san_state="cut short after ${SANITIZER_TIMEOUT}s"; else san_state="complete rc=$san_rc"; fi
san_pass=$(count PASSED "$OUT/sanitizer.log")
echo "[$(stamp)] sanitizer $san_state errors=${san_errors:-none reported} tests passed under it=${san_pass:-0}"

{
  echo "commit=$commit"
  echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "gpu=$gpu"
  echo "gpu_tests: rc=$gpu_rc passed=${gpu_pass:-0} failed=${gpu_fail:-0} skipped=${gpu_skip:-0}"
  echo "mutants_caught=$mutants_caught/$mutants_total"
  echo "cpu_tests: rc=$cpu_rc passed=${cpu_pass:-0} failed=${cpu_fail:-0}"
  echo "sanitizer: memcheck over gtest filter '$SANITIZER_FILTER' $san_state, errors=${san_errors:-unknown}, gpu tests passed under it=${san_pass:-0}"
  echo "sweep: rc=$sweep_rc, $(grep -E '^[0-9]+ pass' "$OUT/sweep.log" | tail -n 1)"
  echo "quick start (scripts/run.sh --H 4096 --dtype bf16): rc=$quick_rc, $(grep -E '^[0-9]+ pass' "$OUT/h4096.log" | tail -n 1)"
  echo "scale-out (bf16 M=16384 H=4096,8192): whole vs 2 shards merged compare rc=$so_compare (0 = clean); ci-gate fresh baseline rc=$so_fresh (want 0), +20% baseline rc=$so_raised (want 1)"
  echo "headline (auto fwd bf16 M=16384): $headline"
} >"$OUT/summary.txt"
cat "$OUT/summary.txt"
[ "$gpu_rc" -eq 0 ] && [ "$cpu_rc" -eq 0 ] && [ "$sweep_rc" -eq 0 ] && [ "$quick_rc" -eq 0 ] &&
  [ "$so_compare" = 0 ] && [ "$so_fresh" = 0 ] && [ "$so_raised" = 1 ] && [ "${san_errors:-1}" = "0" ] && [ "$san_rc" -ne 124 ]

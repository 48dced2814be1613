#!/usr/bin/env bash
# Checks scripts/scale-times.py, which scripts/gpu-check.sh's scale-out step uses to make a
# baseline 20% faster than a fresh sweep: on the committed H200 baseline, the faster copy must be
# readable by this build's `compare` and fail the current results as regressions (exit 1, each at
# -16.7% GB/s), a copy at factor 1 must compare clean (exit 0), and a bad factor is
# refused (exit 2). Prints "SKIP: ..." and exits 0 when no python3 is found.
#
#   tests/scale_times_test.sh RMSNORM_BENCH
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:?usage: tests/scale_times_test.sh RMSNORM_BENCH}
PY=$(command -v python3 || true)
if [ -z "$PY" ]; then echo "SKIP: no python3"; exit 0; fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
BASE=reports/baselines/h200.csv

"$PY" scripts/scale-times.py "$BASE" "$TMP/raised.csv" 1.2
rc=0; "$BIN" compare "$TMP/raised.csv" "$BASE" >"$TMP/raised.txt" 2>&1 || rc=$?
[ "$rc" = 1 ] || { cat "$TMP/raised.txt"; fail "compare against the raised baseline: exit $rc, want 1"; }
# Rows noisier than the 20% (some launch-bound M=1 cases) may stay "unchanged"; none improves.
grep -q "keys: [1-9][0-9]* regression(s), 0 improvement(s)" "$TMP/raised.txt" ||
  { head -3 "$TMP/raised.txt"; fail "want regressions and no improvement"; }
if grep "REGRESSION" "$TMP/raised.txt" | grep -v -q -- "-16.7% GB/s"; then fail "want every regression at -16.7% GB/s (1/1.2)"; fi

"$PY" scripts/scale-times.py "$BASE" "$TMP/same.csv" 1
"$BIN" compare "$BASE" "$TMP/same.csv" >"$TMP/same.txt" 2>&1 || { cat "$TMP/same.txt"; fail "factor 1 must compare clean"; }

for bad in 0 -1 abc; do
  rc=0; "$PY" scripts/scale-times.py "$BASE" "$TMP/bad.csv" "$bad" 2>"$TMP/bad.err" || rc=$?
  [ "$rc" = 2 ] && grep -q "FACTOR must be > 0, got $bad" "$TMP/bad.err" || fail "factor $bad: exit $rc, want 2 with a message"
done
echo "scale_times_test: ok"

#!/usr/bin/env bash
# Checks scripts/ci-gate.sh without a GPU, the sweep played by a stand-in: BUILD_DIR holds a
# script named rmsnorm-bench that runs the real tool for `compare` and, for the sweep, writes
# STUB_CSV as OUT/results.csv and exits STUB_RC. The current rows are the baseline's measured
# on a card 20% slower with a copy ceiling 20% lower, so the same % of copy: the gate must pass
# with --metric pct-of-copy and fail (exit 1) in GB/s; a bad --metric must exit 2 before the
# sweep runs; a sweep with validation failures must fail the gate even where compare passes; a
# sweep's exit 3 must pass through without a compare.
#
#   tests/ci_gate_test.sh /path/to/rmsnorm-bench
set -euo pipefail
TOOL=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$(dirname "$0")/.."
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p "$TMP/build"
cat >"$TMP/build/rmsnorm-bench" <<STUB
#!/usr/bin/env bash
[ "\$1" = compare ] && { echo compare >>"$TMP/calls"; exec "$TOOL" "\$@"; }
echo sweep >>"$TMP/calls"
while [ \$# -gt 0 ]; do [ "\$1" = --out ] && out=\$2; shift; done
mkdir -p "\$out" && cp "\$STUB_CSV" "\$out/results.csv"
exit "\${STUB_RC:-0}"
STUB
chmod +x "$TMP/build/rmsnorm-bench"
head -n 6 reports/baselines/h200.csv >"$TMP/base.csv"
# The times (median_us, min_us, max_us, graph_us: columns 33-35, 38) 1.25 times, so gbps (40)
# and copy_gbps (41) 0.8 times, the way the tool derives them; pct_of_copy (42) unchanged.
awk -F, -v OFS=, -v CONVFMT=%.17g 'NR == 1 { print; next }
  { $33 *= 1.25; $34 *= 1.25; $35 *= 1.25; $38 *= 1.25; $40 = $39 / $33 / 1e3; $41 *= 0.8; print }' \
  "$TMP/base.csv" >"$TMP/slow.csv"
gate() {
  rm -f "$TMP/calls"
  rc=0
  STUB_RC=${STUB_RC:-0} STUB_CSV=$TMP/slow.csv RB_SKIP_BUILD=1 BUILD_DIR=$TMP/build scripts/ci-gate.sh --baseline "$TMP/base.csv" \
    --out "$TMP/o" "$@" >"$TMP/out.txt" 2>&1 || rc=$?
  calls=""
  if [ -f "$TMP/calls" ]; then calls=$(tr '\n' ' ' <"$TMP/calls"); fi
}

gate --metric pct-of-copy
[ "$rc" = 0 ] || { cat "$TMP/out.txt"; fail "--metric pct-of-copy on the same % of copy: exit $rc, want 0"; }
[ "$calls" = "sweep compare " ] || fail "want a sweep then a compare, got '$calls'"
gate --metric=pct-of-copy
[ "$rc" = 0 ] || { cat "$TMP/out.txt"; fail "--metric=pct-of-copy: exit $rc, want 0"; }
gate
[ "$rc" = 1 ] || { cat "$TMP/out.txt"; fail "20% fewer GB/s, compare's default metric: exit $rc, want 1"; }
gate --metric gbps
[ "$rc" = 1 ] || { cat "$TMP/out.txt"; fail "--metric gbps on 20% fewer GB/s: exit $rc, want 1"; }
gate --metric bogus
[ "$rc" = 2 ] || { cat "$TMP/out.txt"; fail "--metric bogus: exit $rc, want 2"; }
grep -q -- "--metric 'bogus'" "$TMP/out.txt" || { cat "$TMP/out.txt"; fail "the message does not name --metric"; }
[ -z "$calls" ] || fail "--metric bogus ran '$calls' before refusing"
STUB_RC=1 gate --metric pct-of-copy
[ "$rc" = 1 ] || { cat "$TMP/out.txt"; fail "a sweep with validation failures, compare clean: exit $rc, want 1"; }
STUB_RC=3 gate --metric pct-of-copy
[ "$rc" = 3 ] || { cat "$TMP/out.txt"; fail "the sweep's exit 3: gate exit $rc, want 3"; }
[ "$calls" = "sweep " ] || fail "after the sweep's exit 3 want no compare, got '$calls'"
echo "ci_gate_test: ok"

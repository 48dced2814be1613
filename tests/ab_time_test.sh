#!/usr/bin/env bash
# Checks scripts/ab-time.sh and scripts/ab_summary.py without a GPU: two stand-in "builds" (a
# script that writes one results.csv row in the tool's schema, its cold median from STUB_US)
# timed over two rounds must give the second a ratio of 0.800 against the first, a build that
# fails must make the script exit 1 with its run listed, and bad usage must exit 2 with a
# message naming the option. Prints "SKIP: ..." and exits 0 when no python3 is found.
#
#   tests/ab_time_test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 0; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
header=$(head -n 1 reports/baselines/h200.csv)
row=$(sed -n 2p reports/baselines/h200.csv)  # naive bwd fp32 M=1 H=128, pass
cat >"$TMP/stub" <<STUB
#!/usr/bin/env bash
# --out DIR: writes DIR/results.csv, the row's median_us (column 33) set to STUB_US.
while [ \$# -gt 0 ]; do [ "\$1" = --out ] && out=\$2; shift; done
[ "\${STUB_FAIL:-0}" = 1 ] && { echo "stub: failing as asked" >&2; exit 4; }
mkdir -p "\$out"
{ echo '$header'; echo '$row' | awk -F, -v OFS=, -v us="\$STUB_US" '{ \$33 = us; print }'; } >"\$out/results.csv"
STUB
chmod +x "$TMP/stub"

scripts/ab-time.sh "$TMP/o" -b "a=env STUB_US=10 $TMP/stub" -b "b=env STUB_US=8 $TMP/stub" -c '--op bwd' >"$TMP/out.txt" 2>&1 ||
  { cat "$TMP/out.txt"; fail "two good builds: exit $?"; }
grep -q "^builds: a, b; rounds: 1, 2" "$TMP/out.txt" || { cat "$TMP/out.txt"; fail "want builds a, b over rounds 1, 2"; }
grep -q "^  a: .* | 10.00/10.00 | .* | 1.000$" "$TMP/out.txt" || { cat "$TMP/out.txt"; fail "want a at 10 us, ratio 1.000"; }
grep -q "^  b: .* | 8.00/8.00 | .* | 0.800$" "$TMP/out.txt" || { cat "$TMP/out.txt"; fail "want b at 8 us, ratio 0.800"; }
[ "$(grep -c 'rc=0' "$TMP/o/runs.txt")" = 4 ] || fail "want 4 runs listed (2 builds x 2 rounds)"
# ABBA: round 1 runs a then b, round 2 b then a.
[ "$(cut -d' ' -f1,3 "$TMP/o/runs.txt" | tr '\n' ' ')" = "a 1 b 1 b 2 a 2 " ] ||
  { cat "$TMP/o/runs.txt"; fail "want the runs in the order a, b, b, a"; }

rc=0
scripts/ab-time.sh "$TMP/f" -r 1 -b "a=env STUB_US=10 $TMP/stub" -b "bad=env STUB_FAIL=1 $TMP/stub" -c '--op bwd' >"$TMP/f.txt" 2>&1 || rc=$?
[ "$rc" = 1 ] || { cat "$TMP/f.txt"; fail "a failing build: exit $rc, want 1"; }
grep -q "^bad round 1 group 0: rc=4" "$TMP/o/../f/runs.txt" || fail "the failing run is not listed with its exit status"
grep -q "failing as asked" "$TMP/f/runs/bad1/g0/log.txt" || fail "the failing run's log is not kept"

expect2() {  # expect2 PATTERN ARGS...: exit 2 and a message matching PATTERN
  local pat=$1 rc=0; shift
  scripts/ab-time.sh "$@" >"$TMP/u.txt" 2>&1 || rc=$?
  [ "$rc" = 2 ] && grep -q -- "$pat" "$TMP/u.txt" || { cat "$TMP/u.txt"; fail "$*: exit $rc, want 2 and '$pat'"; }
}
expect2 "OUTDIR first" -b a=x
expect2 "no build" "$TMP/u" -c '--op fwd'
expect2 "no case group" "$TMP/u" -b "a=$TMP/stub"
expect2 "-b 'a1=" "$TMP/u" -b "a1=$TMP/stub" -c x
expect2 "tag 'a' given twice" "$TMP/u" -b "a=$TMP/stub" -b "a=$TMP/stub" -c x
expect2 "-r '0'" "$TMP/u" -r 0 -b "a=$TMP/stub" -c x
expect2 "is not an executable" "$TMP/u" -b "a=$TMP/none" -c x
echo "ab_time_test: ok"

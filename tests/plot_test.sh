#!/usr/bin/env bash
# Checks scripts/plot.py end to end: a tiny rmsnorm-bench/1 CSV, and its rmsnorm-bench/2 twin (2 kernels x 3 H, plus rows
# it must leave out) -> the expected PNG, which must start with the PNG signature; and bad
# input (missing file, foreign header) -> exit 2 naming the file.
# Prints "SKIP: ..." and exits 0 when /usr/bin/python3 cannot import matplotlib.
#
#   tests/plot_test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PY=/usr/bin/python3

if [ ! -x "$PY" ]; then echo "SKIP: $PY not found"; exit 0; fi
if ! "$PY" -c 'import matplotlib' 2>/dev/null; then
  echo "SKIP: $PY cannot import matplotlib (Debian: apt-get install python3-matplotlib)"
  exit 0
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

HEADER='schema,gpu,cc,kernel,picked,op,dtype,wdtype,rdtype,M,H,stride,layout,eps,dist,seed,status,reason,rows_checked,max_abs_err,max_rel_err,max_ulp,mismatches,worst_row,worst_col,atol,rtol,median_us,min_us,max_us,noise_pct,samples,graph_us,bytes,gbps,copy_gbps,pct_of_copy'
{
  echo "$HEADER"
  # kernel picked H gbps pct: pass rows for 2 kernels x 3 H.
  while read -r kernel picked h gbps pct; do
    echo "rmsnorm-bench/1,NVIDIA H200,9.0,$kernel,$picked,fwd,bf16,bf16,,1024,$h,$h,contiguous,1e-05,normal,24301,pass,,1024,0.001,0.002,1,0,0,0,0.01,0.01,10.5,10.1,11.2,0.3,12,,8388608,$gbps,4275,$pct"
  done <<'EOF'
warp-row warp-row 1024 1500 35.1
warp-row warp-row 4096 3000 70.2
warp-row warp-row 4097 2500 58.5
auto warp-row 1024 1600 37.4
auto row-vector 4096 4100 95.9
auto chunked 4097 4000 93.6
EOF
  # Left out: a fail row, a skip row (no timing), a pass row without gbps (--no-time).
  echo "rmsnorm-bench/1,NVIDIA H200,9.0,naive,naive,fwd,bf16,bf16,,1024,4096,4096,contiguous,1e-05,normal,24301,fail,,1024,1,1,100,5,3,7,0.01,0.01,10.5,10.1,11.2,0.3,12,,8388608,999,4275,23.4"
  echo "rmsnorm-bench/1,NVIDIA H200,9.0,naive,naive,fwd,bf16,bf16,,1024,8,8,contiguous,1e-05,normal,24301,skip,\"H below the kernel's range, min 64\",0,0,0,0,0,0,0,0.01,0.01,,,,,,,0,,,"
  echo "rmsnorm-bench/1,NVIDIA H200,9.0,naive,naive,fwd,bf16,bf16,,1024,4096,4096,contiguous,1e-05,normal,24301,pass,,1024,0,0,0,0,0,0,0.01,0.01,,,,,,,8388608,,,"
} >"$TMP/results.csv"

rc=0; "$PY" scripts/plot.py "$TMP/results.csv" -o "$TMP/plots" >"$TMP/out.log" 2>"$TMP/err.log" || rc=$?
[ "$rc" -eq 0 ] || { cat "$TMP/err.log" >&2; fail "plot.py exited $rc on a valid CSV"; }
PNG=$TMP/plots/fwd_bf16_bf16_M1024.png
[ -f "$PNG" ] || { cat "$TMP/out.log" "$TMP/err.log" >&2; fail "expected $PNG"; }
grep -qxF "$PNG" "$TMP/out.log" || fail "plot.py did not print the file it wrote ($PNG)"
[ "$(find "$TMP/plots" -name '*.png' | wc -l)" -eq 1 ] || fail "expected exactly one PNG in $TMP/plots"
# The PNG signature: 89 50 4E 47 0D 0A 1A 0A.
[ "$(head -c 8 "$PNG" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$PNG is not a PNG"

# The same rows in schema 2 (provider, provider_version after picked): the same figure.
sed -e '1s/,picked,/,picked,provider,provider_version,/' \
    -e '2,$s/^rmsnorm-bench\/1,\(\([^,]*,\)\{4\}\)/rmsnorm-bench\/2,\1builtin,,/' \
    "$TMP/results.csv" >"$TMP/results-v2.csv"
grep -q '^rmsnorm-bench/2,NVIDIA H200,9.0,warp-row,warp-row,builtin,,fwd,' "$TMP/results-v2.csv" ||
  fail "could not build the schema 2 CSV"
rc=0; "$PY" scripts/plot.py "$TMP/results-v2.csv" -o "$TMP/plots-v2" >/dev/null 2>"$TMP/err.log" || rc=$?
[ "$rc" -eq 0 ] || { cat "$TMP/err.log" >&2; fail "plot.py exited $rc on a schema 2 CSV"; }
[ -f "$TMP/plots-v2/fwd_bf16_bf16_M1024.png" ] || fail "expected a PNG from the schema 2 CSV"

# Two CSVs, one with a lower duplicate: still one figure.
"$PY" scripts/plot.py "$TMP/results.csv" "$TMP/results.csv" -o "$TMP/plots2" >/dev/null ||
  fail "plot.py failed on two CSVs"
[ -f "$TMP/plots2/fwd_bf16_bf16_M1024.png" ] || fail "expected a PNG from two CSVs"

# Bad input: exit 2 and the message names the file (and line 1 for a foreign header).
rc=0; "$PY" scripts/plot.py "$TMP/missing.csv" -o "$TMP/p3" 2>"$TMP/err.log" || rc=$?
[ "$rc" -eq 2 ] || fail "missing file: exit $rc, expected 2"
grep -q "missing.csv" "$TMP/err.log" || fail "missing file: message does not name it: $(cat "$TMP/err.log")"

printf 'a,b,c\n1,2,3\n' >"$TMP/foreign.csv"
rc=0; "$PY" scripts/plot.py "$TMP/foreign.csv" -o "$TMP/p4" 2>"$TMP/err.log" || rc=$?
[ "$rc" -eq 2 ] || fail "foreign CSV: exit $rc, expected 2"
grep -q "foreign.csv:1:" "$TMP/err.log" || fail "foreign CSV: message does not name file:1: $(cat "$TMP/err.log")"

echo "PASS: plot.py wrote $(basename "$PNG") and rejected bad input"

#!/usr/bin/env bash
# Checks scripts/side_by_side.py on a small hand-written pair of CSVs: the tool's (auto, cudnn)
# and the peers' (peer:torch, peer:triton, peer:liger, peer:helion). Expected: the columns in
# order (auto, cudnn, then the peers as they appear), one row per shape and op in op order,
# cells "% us" (plus the graph time), the fastest pass bolded (by graph time on the decode
# row, where a slower cold launch has the faster graph), a timed fail shown as FAIL, skips and
# missing kernels, the not-passed list with reasons (a '|' escaped), where the first column's
# kernel stands (fastest, near the fastest by --near, each row slower by more, rows it did not
# pass), and exit 2 naming the file on bad input. Prints "SKIP: ..." and exits 0 when no python3 is found.
#
#   tests/side_by_side_test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PY=$(command -v python3 || true)
[ -n "$PY" ] || { [ -x /usr/bin/python3 ] && PY=/usr/bin/python3; }
if [ -z "$PY" ]; then echo "SKIP: no python3"; exit 0; fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

HEADER='schema,gpu,cc,kernel,picked,provider,provider_version,op,dtype,wdtype,rdtype,M,H,stride,layout,eps,dist,seed,status,reason,rows_checked,max_abs_err,max_rel_err,max_ulp,mismatches,worst_row,worst_col,atol,rtol,median_us,min_us,max_us,noise_pct,samples,graph_us,bytes,gbps,copy_gbps,pct_of_copy'
# row KERNEL PROVIDER OP RDTYPE M H STATUS REASON MEDIAN GRAPH GBPS PCT
row() {
  echo "rmsnorm-bench/2,NVIDIA H200,9.0,$1,$1,$2,,$3,bf16,bf16,$4,$5,$6,$6,contiguous,1e-05,normal,24301,$7,$8,0,0,0,0,0,-1,-1,0.01,0.01,$9,${9:+$9},${9:+$9},${9:+0.5},${9:+20},${10},1000,${11},${11:+4280},${12}"
}
{
  echo "$HEADER"
  row auto builtin fwd "" 16384 4096 pass "" 66.8 "" 4020 93.9
  row cudnn cudnn fwd "" 16384 4096 pass "" 65.4 "" 4106 95.9
  row auto builtin fwd "" 16384 8192 fail "y: 1 mismatch(es)" 130.0 "" 4100 95.0
  row cudnn cudnn fwd "" 16384 8192 pass "" 128.0 "" 4200 97.0
  row auto builtin fwd "" 1 4096 pass "" 3.9 2.16 6.3 0.1
  row auto builtin fwd "" 1 128 pass "" 3.0 "" 0.2 0.0
  row cudnn cudnn fwd "" 1 4096 pass "" 4.5 2.50 5.5 0.1
  row auto builtin add bf16 16384 4096 pass "" 100.2 "" 4001 93.5
  row cudnn cudnn add bf16 16384 4096 skip "cudnn has no add" "" "" "" ""
  row auto builtin bwd "" 16384 4096 pass "" 118.5 "" 3398 79.4
  row cudnn cudnn bwd "" 16384 4096 pass "" 106.8 "" 3771 88.1
} >"$TMP/tool.csv"
{
  echo "$HEADER"
  row peer:torch peer fwd "" 16384 4096 pass "" 80.0 "" 3357 78.4
  row peer:triton peer fwd "" 16384 4096 pass "" 64.9 "" 4138 96.7
  row peer:liger peer fwd "" 16384 4096 fail "y: 3 mismatch(es)" 70.0 "" 3837 89.6
  row peer:helion peer fwd "" 16384 4096 skip "not run: --budget-s 200 spent" "" "" "" ""
  row peer:torch peer fwd "" 1 4096 pass "" 3.5 4.20 7.0 0.2
  row peer:triton peer fwd "" 1 4096 pass "" 4.1 1.61 6.0 0.1
  row peer:triton peer fwd "" 1 128 pass "" 3.5 1.50 0.2 0.0
  row peer:torch peer add bf16 16384 4096 pass "" 150.0 "" 2667 62.3
  row peer:helion peer add bf16 16384 4096 skip "no add | see docs" "" "" "" ""
  row peer:torch peer bwd "" 16384 4096 pass "" 200.0 "" 2013 47.0
  row peer:triton peer bwd "" 16384 4096 error "prepare/launch failed: CompilationError" "" "" "" ""
} >"$TMP/peers.csv"

rc=0; "$PY" scripts/side_by_side.py "$TMP/tool.csv" "$TMP/peers.csv" -o "$TMP/out.md" 2>"$TMP/err.log" || rc=$?
[ "$rc" -eq 0 ] || { cat "$TMP/err.log" >&2; fail "side_by_side.py exited $rc"; }
OUT=$TMP/out.md
expect() { grep -qxF -- "$1" "$OUT" || { cat "$OUT" >&2; fail "missing line: $1"; }; }
expect '| shape | `auto` | `cudnn` | `peer:torch` | `peer:triton` | `peer:liger` | `peer:helion` |'
expect '| fwd bf16 M=1 H=4096 | 0.1% 3.9 us g 2.16 us | 0.1% 4.5 us g 2.50 us | 0.2% 3.5 us g 4.20 us | **0.1% 4.1 us g 1.61 us** | - | - |'
expect '| fwd bf16 M=16384 H=4096 | 93.9% 66.8 us | 95.9% 65.4 us | 78.4% 80.0 us | **96.7% 64.9 us** | FAIL 89.6% | skip |'
expect '| add bf16 M=16384 H=4096 | **93.5% 100.2 us** | skip | 62.3% 150.0 us | - | - | skip |'
expect '| bwd bf16 M=16384 H=4096 | 79.4% 118.5 us | **88.1% 106.8 us** | 47.0% 200.0 us | error | - | - |'
expect '- `peer:helion` add bf16 M=16384 H=4096: skip: no add \| see docs'
expect '- `peer:liger` fwd bf16 M=16384 H=4096: fail: y: 3 mismatch(es)'
expect '- `peer:triton` bwd bf16 M=16384 H=4096: error: prepare/launch failed: CompilationError'
# Rows in op order: fwd (M=1 before M=16384), add, bwd.
order=$(grep -o '^| [a-z-]* bf16 M=[0-9]*' "$OUT" | tr '\n' ';')
[ "$order" = "| fwd bf16 M=1;| fwd bf16 M=1;| fwd bf16 M=16384;| fwd bf16 M=16384;| add bf16 M=16384;| bwd bf16 M=16384;" ] ||
  fail "row order: $order"
grep -q 'Copy ceiling: 4280 GB/s' "$OUT" || fail "no copy ceiling line"
# Where auto stands: by graph time on the decode row (2.16 against 1.61 us), else by the median.
expect '**`auto` against the other kernels:** the fastest in 1 of 4 rows where another kernel passed too; within 2% of the fastest in 0 more; slower by more in 3:'
expect '- fwd bf16 M=1 H=4096: 34.2% slower than `peer:triton` (g 2.16 against 1.61 us)'
expect '- fwd bf16 M=16384 H=4096: 2.9% slower than `peer:triton` (66.80 against 64.90 us)'
! grep -q '^- add bf16' "$OUT" || fail "the add row, which auto leads, listed as slower"
expect '- bwd bf16 M=16384 H=4096: 11.0% slower than `cudnn` (118.50 against 106.80 us)'
expect '- fwd bf16 M=16384 H=8192: fail; `cudnn` passed'
# A row judged by graph time where auto's pass has none: listed, not compared by another column.
expect '- fwd bf16 M=1 H=128: pass without graph_us; `peer:triton` passed'
"$PY" scripts/side_by_side.py "$TMP/tool.csv" "$TMP/peers.csv" --near 3 >"$TMP/near.md" || fail "--near 3 failed"
grep -qxF '**`auto` against the other kernels:** the fastest in 1 of 4 rows where another kernel passed too; within 3% of the fastest in 1 more; slower by more in 2:' "$TMP/near.md" ||
  fail "--near 3: $(grep 'against the other' "$TMP/near.md")"
for bad in -1 nan inf; do
  rc=0; "$PY" scripts/side_by_side.py "$TMP/tool.csv" --near "$bad" >/dev/null 2>"$TMP/err.log" || rc=$?
  [ "$rc" -eq 2 ] && grep -q -- '--near' "$TMP/err.log" || fail "--near $bad: exit $rc, $(cat "$TMP/err.log")"
done

# Columns are found by name: a later schema's extra key column (convention) gives the same table.
for f in tool peers; do
  sed -e '1s/,provider_version,/,provider_version,convention,/' -e '2,$s/^\(\([^,]*,\)\{7\}\)/\1fp32,/' \
    "$TMP/$f.csv" >"$TMP/$f-v3.csv"
done
grep -q '^rmsnorm-bench/2,NVIDIA H200,9.0,auto,auto,builtin,,fp32,fwd,' "$TMP/tool-v3.csv" || fail "could not build the v3 CSV"
"$PY" scripts/side_by_side.py "$TMP/tool-v3.csv" "$TMP/peers-v3.csv" -o "$TMP/v3.md" || fail "side_by_side.py on v3 failed"
diff <(grep '^| ' "$OUT") <(grep '^| ' "$TMP/v3.md") >/dev/null || fail "an extra column changed the table"

# --kernels picks and orders the columns; stdout without -o.
"$PY" scripts/side_by_side.py "$TMP/tool.csv" "$TMP/peers.csv" --kernels peer:triton,auto >"$TMP/two.md" ||
  fail "side_by_side.py --kernels failed"
grep -qxF '| shape | `peer:triton` | `auto` |' "$TMP/two.md" || fail "--kernels did not set the columns"
# The first column's kernel is the one judged: peer:triton leads the three rows it passed beside auto.
grep -qxF '**`peer:triton` against the other kernels:** the fastest in 3 of 3 rows where another kernel passed too; within 2% of the fastest in 0 more; slower by more in 0.' "$TMP/two.md" ||
  fail "--kernels standing: $(grep 'against the other' "$TMP/two.md")"
grep -qxF -- '- add bf16 M=16384 H=4096: no row; `auto` passed' "$TMP/two.md" || fail "no row of the first kernel not listed"
grep -qxF -- '- bwd bf16 M=16384 H=4096: error; `auto` passed' "$TMP/two.md" || fail "an error row of the first kernel not listed"

# --plot: one PNG, where some python3 has matplotlib (the table is written either way).
for MPY in "$PY" /usr/bin/python3; do
  if [ -x "$MPY" ] && "$MPY" -c 'import matplotlib' 2>/dev/null; then
    "$MPY" scripts/side_by_side.py "$TMP/tool.csv" "$TMP/peers.csv" -o "$TMP/p.md" --plot "$TMP/p.png" >/dev/null ||
      fail "side_by_side.py --plot failed"
    [ "$(head -c 8 "$TMP/p.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "--plot did not write a PNG"
    break
  fi
done

# Bad input: exit 2 naming the file.
rc=0; "$PY" scripts/side_by_side.py "$TMP/missing.csv" 2>"$TMP/err.log" || rc=$?
[ "$rc" -eq 2 ] && grep -q missing.csv "$TMP/err.log" || fail "missing file: exit $rc, $(cat "$TMP/err.log")"
printf 'a,b\n1,2\n' >"$TMP/foreign.csv"
rc=0; "$PY" scripts/side_by_side.py "$TMP/foreign.csv" 2>"$TMP/err.log" || rc=$?
[ "$rc" -eq 2 ] && grep -q 'foreign.csv:1:' "$TMP/err.log" || fail "foreign CSV: exit $rc, $(cat "$TMP/err.log")"

echo "PASS: side_by_side.py table, best marks, not-passed list and bad input"

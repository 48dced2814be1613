#!/usr/bin/env bash
# Ran in session 58 with QUICK=1 (2026-12-08 00:09 UTC, H100; perf-notes run 68, measured).
# Planned in session 57 (2026-12-07; not run: after two starts that got no machine, 363 s of
# device time were left, too little to start one), any card: perf-notes run 68, row-vector's
# cluster backward pushing each row's slice sums by st.async instead of a cluster barrier a row
# (the change: planned/s57c-xchg.patch, kernels/common.cuh and kernels/bwd_row_vector.cu, on
# branch exp/s57-xchg as committed in session 57),
# and, in the same binary, the slices cuDNN takes at bf16 H=65536 (8 of 8192 columns, run 67)
# by the patch's experiment knob RB_X_CLUSTER_COLS=8192 (host side; not for main).
# Carries $PACK (default .gpu/ab.tar.xz), the patched tool as build/ and main's as
# build-before/. To make it (session 57's, by hand the same way: 56.0 MB):
#   git clone <main> /tmp/x && cd /tmp/x && scripts/build.sh      (main's build)
#   mkdir build-before && cp build/rmsnorm-bench build-before/
#   git apply reports/gpu-calls/planned/s57c-xchg.patch && ninja -C build rmsnorm-bench
#   scripts/pack-gpu.sh ab && cp .gpu/ab.tar.xz <main>/.gpu/
# Ordered for a call cut short: each stage's lines go to $OUT/s57c.txt as it ends. First a
# check of the changed kernels (row-vector and auto, bwd and add-bwd, rows split into clusters
# and the decode spread, bf16 and fp32, two layouts), then scripts/ab-time.sh, main against the
# patch (with the knob, and without), two rounds ABBA, then compute-sanitizer's racecheck,
# synccheck and memcheck over the clusters, then a wider check. About 330 s. If it gains, the
# GPU tests and the sansweeps of the merged build follow (s58a.sh, s58b.sh). QUICK=1 (session
# 58, for a call on little device time, about 230 s): without the knob's check and timing and
# without the wider check.
. reports/gpu-calls/planned/prelude.sh
L=$OUT/s57c.txt
rm -rf build build-before && tar xJf "${PACK:-.gpu/ab.tar.xz}" || exit 9
{ machine; build-before/rmsnorm-bench --version; } >>$L 2>&1
B=build/rmsnorm-bench
CL="--op bwd,add-bwd --kernel row-vector,auto --kernel-timeout 10 --quiet"
timeout 40 $B --no-time $CL --M 1,3,300 --H 16392,32768,65536,131072 --dtype bf16,fp32 \
  --layout contiguous,strided --out $R/val1 >$R/val1.log 2>&1
{ echo "val1 rc=$? $(el)"; tail -1 $R/val1.log; } >>$L
Q=${QUICK:-0}
[ "$Q" = 1 ] || RB_X_CLUSTER_COLS=8192 timeout 25 $B --no-time $CL --M 1,3,300 --H 32768,65536 --dtype bf16,fp32 \
  --layout contiguous,strided --out $R/val8 >$R/val8.log 2>&1
[ "$Q" = 1 ] || { echo "val8 (RB_X_CLUSTER_COLS=8192) rc=$? $(el)"; tail -1 $R/val8.log; } >>$L
NARROW=(-b xchg-narrow="env RB_X_CLUSTER_COLS=8192 $B"); [ "$Q" = 1 ] && NARROW=()
timeout 150 scripts/ab-time.sh $R/ab -b main=build-before/rmsnorm-bench -b xchg=$B \
  "${NARROW[@]}" -T 15 \
  -c '--op bwd --kernel auto --dtype bf16 --M 1024 --H 65536,131072' \
  -c '--op bwd --kernel auto --dtype bf16 --M 1024,16384 --H 32768' \
  -c '--op bwd --kernel auto --dtype fp32 --M 1024 --H 65536' \
  -c '--op add-bwd --kernel auto --dtype bf16 --M 1024 --H 65536' \
  -c '--op bwd --kernel auto --dtype bf16 --M 1 --H 16384' \
  -c '--op bwd --kernel auto --dtype bf16 --M 16384 --H 4096' >$R/ab.log 2>&1
{ echo "ab rc=$? $(el)"; cat $R/ab/summary.txt; } >>$L 2>&1
[ -f $R/ab/summary.txt ] || python3 scripts/ab_summary.py $R/ab >>$L 2>&1
for t in racecheck synccheck memcheck; do
  timeout 20 compute-sanitizer --tool $t $B --no-time $CL --M 1,5 --H 32768,65536 --dtype bf16,fp32 \
    --out $R/san-$t >$R/san-$t.log 2>&1
  { echo "$t rc=$? $(el)"; grep -h "pass, .* fail\|SUMMARY" $R/san-$t.log | tail -2; } >>$L
done
[ "$Q" = 1 ] || timeout 40 $B --no-time $CL --M 2,257 --H 24000,49152,98304 --dtype fp16,bf16,fp32 --wdtype same,fp32 \
  --convention gemma,llama --layout contiguous,misaligned --dist normal,outlier --out $R/val2 >$R/val2.log 2>&1
[ "$Q" = 1 ] || { echo "val2 rc=$? $(el)"; tail -1 $R/val2.log; } >>$L
tar cJf "$OUT/r.tar.xz" -C /tmp r

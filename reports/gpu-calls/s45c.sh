#!/usr/bin/env bash
# Ran in session 44 (2026-12-06 10:05 UTC, 23 s, NVIDIA H100 80GB HBM3, driver 580.159.04,
# warm from s45b.sh's second run: cf94fae's build in build/, main's 98d8691 tool in
# build-before/) as one command line, this file its text: ncu of row-vector's bwd kernel,
# main against run 59's form 2, bf16 M=16384 H=4097 and misaligned 4096. Result in
# docs/perf-notes.md "Run 59 — measured" (barrier stalls 4.4 -> 7.2 cycles an instruction).
for b in build-before build; do
  for c in "b4097 --op bwd --H 4097" "b4096m --op bwd --H 4096 --layout misaligned"; do
    set -- $c; n=$1; shift
    BUILD_DIR=$b timeout 60 scripts/ncu-probe.sh $OUT/ncu-$b $n bwd_row_vector_kernel -- --kernel row-vector --M 16384 --dtype bf16 "$@" >/dev/null
    echo "== $b $n"
    grep -E "bwd_row_vector_kernel|Registers Per|Achieved Occupancy|DRAM Throughput|Duration|Block Limit (Reg|Shared)|Grid Size|Block Size|Dynamic Shared|Issue Slots Busy|No Eligible|Warp Cycles Per Issued" $OUT/ncu-$b/$n.txt | head -16
  done
done

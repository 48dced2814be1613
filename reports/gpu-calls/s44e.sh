#!/usr/bin/env bash
# Ran in session 44 (2026-12-06 09:18 UTC, 31 s, NVIDIA H100 80GB HBM3, driver 580.159.04,
# warm from s44d.sh) as one command line, this file its text: ncu of row-vector's backward
# kernel, main's tool (98d8691 as build-before/), aligned against shifted rows. Result in
# docs/perf-notes.md "Runs 57 and 58 — measured" (the shifted ring's fifth warp: 3 blocks an
# SM where aligned rows fit 4).
export BUILD_DIR=build-before
for c in "a4096 --op add-bwd --H 4096" "a4096m --op add-bwd --H 4096 --layout misaligned" \
  "a4097 --op add-bwd --H 4097" "b4097 --op bwd --H 4097" "b4096m --op bwd --H 4096 --layout misaligned"; do
  set -- $c; n=$1; shift
  timeout 100 scripts/ncu-probe.sh $OUT/ncu $n bwd_row_vector_kernel -- --kernel row-vector --M 16384 --dtype bf16 "$@"
  grep -E "bwd_row_vector_kernel|Registers Per|Achieved Occupancy|Theoretical Occupancy|DRAM Throughput|Duration|Block Limit|Grid Size|Block Size|Dynamic Shared|Memory Throughput" $OUT/ncu/$n.txt | head -16
done

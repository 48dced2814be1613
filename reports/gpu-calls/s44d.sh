#!/usr/bin/env bash
# Ran in session 44 (2026-12-06 09:17 UTC, 39 s, NVIDIA H100 80GB HBM3, driver 580.159.04,
# warm from s44c.sh; its first form had `--no-validate`, which the tool has not, and stopped
# at the parser) as one command line, this file its text: main's tool (98d8691, build-before/
# from .gpu/exp57.tar.xz) over every backward kernel at the shapes of shifted rows, to see
# which kernel is fastest there. Result in docs/perf-notes.md "Runs 57 and 58 — measured"
# (add-bwd bf16 misaligned H=4096: chunked 80.9% of copy, auto's row-vector 76.5).
B=build-before/rmsnorm-bench
timeout 170 $B --op bwd,add-bwd --H 4096,4097 --M 16384 --dtype bf16 --layout contiguous,misaligned \
  --kernel row-vector,staged,chunked,auto,cudnn --out /tmp/k 2>&1 | tail -50

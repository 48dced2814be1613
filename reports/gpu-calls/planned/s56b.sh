#!/usr/bin/env bash
# Planned in session 55 (2026-12-07), H200 only: perf-notes run 66's H200 figures, owed since
# s54b.sh ran on an H100 (its prediction: bf16 M=16384 H=4096 96.0 -> 96.3-97.5, H=8192 97.7
# -> 97.5-98.2 % of copy). s54b.sh's timing alone (its checks passed on the H100 and are the
# same code), over 16-bit rows at M 4096 and 16384 and fp32 as the control (whose kernels are
# identical in both builds, SASS compared: perf-notes run 66). Carries .gpu/s54b.tar.xz
# (41a0a93's tool, the device code main holds since 88589b2, and 86eafc2's as build-before/).
# About 150 s; bounded inside END (default 560), tar last.
. reports/gpu-calls/planned/prelude.sh
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
[[ "$gpu" == *H200* ]] || { echo "s56b: run 66's owed figures are an H200's, not $gpu's"; exit 9; }
rm -rf build build-before && tar xJf .gpu/s54b.tar.xz || exit 9
machine; build-before/rmsnorm-bench --version
END=${END:-560}
timeout $((END - ($(date +%s) - T0))) scripts/ab-time.sh $R/ab -T 40 -b before=build-before/rmsnorm-bench \
  -b after=build/rmsnorm-bench -c '--op add --kernel chunked --dtype bf16,fp16,fp32 --M 4096,16384 --H 2048,3080,4096,8192' \
  >$R/ab.log 2>&1
echo "ab rc=$? $(el)"
head -120 $R/ab/summary.txt
tar cJf "$OUT/r.tar.xz" -C /tmp r

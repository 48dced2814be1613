#!/usr/bin/env bash
# Planned in session 41 (2026-12-06): perf-notes run 56's timing (shifted rows through the
# ring), right after the GPU tests of the head that holds it (`bash reports/gpu-calls/s40a.sh
# all`, carrying .gpu/bundle.tar.xz) have passed on the same warm machine, which keeps build/.
# It carries .gpu/base.tar.xz: 0ebbbad's tool (the kernels before run 56) as build-base/. Two
# rounds ABBA, auto (row-vector at these shapes), M=16384, aligned H=4096 as the control:
# expect bwd bf16 H=4097 66.5 -> 80-86% of copy, fp32 84.9 -> 88-93, add-bwd bf16 60.8 -> 68-78,
# the misaligned layout alike, H=4096 contiguous level. 32 cases a run, 4 runs: about 200 s;
# give the call 600 s.
. reports/gpu-calls/planned/prelude.sh
build/rmsnorm-bench --version >/dev/null || { echo "main's build is not on the machine: run this right after s40a.sh"; exit 8; }
unpack build-base .gpu/base.tar.xz
build-base/rmsnorm-bench --version
machine
scripts/ab-time.sh $R/ab -b base=build-base/rmsnorm-bench -b ring=build/rmsnorm-bench -T 200 \
  -c '--op bwd,add-bwd --kernel auto --dtype bf16,fp32 --M 16384 --H 2049,4096,4097,8191 --layout contiguous,misaligned' \
  >$R/ab.log 2>&1
echo "ab rc=$? $(el)"
head -80 $R/ab/summary.txt
tar cJf "$OUT/r.tar.xz" -C /tmp r

#!/usr/bin/env bash
# Planned in session 41 (2026-12-06) as s42b.sh, rewritten in session 42: perf-notes run 56's
# timing (shifted 16-bit rows through the ring) on an H200, where the prediction was made
# (s42b.sh timed it on an H100: bwd bf16 H=4097 80.4 -> 84.3% of copy). H200 only; right after
# the GPU tests of the head on the same warm machine, which keeps build/. It carries
# .gpu/base.tar.xz: 0ebbbad's tool (the kernels before run 56) as build-base/. Two rounds ABBA,
# auto, M=16384, aligned H=4096 as the control: expect bwd bf16 H=4097 above 66.5 (README's
# H200 table), add-bwd bf16 H=4097 above 60.8, fp32 level (main leaves its shifted rows
# without the ring). 32 cases a run, 4 runs: about 200 s; give the call 600 s.
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

#!/usr/bin/env bash
# Session 54 (2026-12-07), right after s54.sh on the same warm NVIDIA H100 (76 s): perf-notes
# run 65's timing again, main against 2 vectors a thread with s early and late, at more rows
# (M 8192, 16384, 32768). Carries .gpu/s54.tar.xz (its build-exp/ kept from s54.sh's call).
. reports/gpu-calls/planned/prelude.sh
B=build-exp/rmsnorm-bench
$B --version
timeout 300 scripts/ab-time.sh $R/ab -T 40 -b main=$B -b two="env RB_X_ADDV=2 $B" -b twolate="env RB_X_ADDV=2 RB_X_ADDS=1 $B" \
  -c '--op add --kernel chunked --dtype bf16,fp16 --M 8192,16384,32768 --H 2048,4096,8192' >$R/ab.log 2>&1
echo "ab rc=$? $(el)"
head -80 $R/ab/summary.txt
tar cJf "$OUT/r.tar.xz" -C /tmp r

#!/usr/bin/env bash
# Ran in session 55 (2026-12-07 14:55-14:58 UTC, 195 s) on one NVIDIA H100 80GB HBM3 (driver
# 580.159.04), the session's eighth start (naming nvidia-h100-x1; seven failed before it), as
# `bash reports/gpu-calls/planned/s54b.sh`: gpu test rc=0 (Chunked.AddHeldRowsPassAtManyRows OK,
# 66.8 s); check rc=124 at its 90 s bound, 175 pass, 0 fail (bf16's 144 cases, fp16's first 31);
# memcheck 8 pass, 0 errors; ab rc=0. Results: docs/perf-notes.md, "Run 66 — measured"; the
# branch then merged (88589b2). As planned:
# Session 54 (2026-12-07), any card: perf-notes run 66, run 65's rule on branch s54-add-two
# (41a0a93): chunked's add holds the many 16-bit rows 2 vectors a thread, s stored late up to
# 512 vectors (add_held_shape), under the fp32 convention with y in x's dtype. Carries
# .gpu/s54b.tar.xz (packed by hand from a clean clone: build/rmsnorm-bench and
# build/tests/rb_gpu_tests of 41a0a93, build-before/rmsnorm-bench of 86eafc2, main's head before
# it; stripped, `tar cf - build build-before | xz -T2 --lzma2=preset=6,dict=256MiB`; not
# committed, .gpu/ is ignored: remake it so if it is gone).
# 1. checks: the held rows' GPU test (3 dtypes x 5 H x 3 layouts and the other conventions, at
#    M=4096), the tool's validation (fp64 reference) over the held 16-bit rows and their
#    neighbours at M=4096 and 5000 (not a multiple of a wave), memcheck over the rows of each
#    new kernel (block 128, 256, 512; s late and early);
# 2. timing: scripts/ab-time.sh, before (86eafc2) and after, ABBA, two rounds.
# About 220 s; bounded inside END (below), tar last.
. reports/gpu-calls/planned/prelude.sh
tar xJf .gpu/s54b.tar.xz || exit 9
machine; build-before/rmsnorm-bench --version
B=build/rmsnorm-bench
timeout 150 build/tests/rb_gpu_tests --gtest_filter='Chunked.AddHeldRowsPassAtManyRows' >$R/gt.log 2>&1
echo "gpu test rc=$? $(el)"; grep -h "^\[  FAILED\|^\[       OK \]\|PASSED\|FAILED TEST" $R/gt.log
timeout 90 $B --op add --kernel chunked,auto --dtype bf16,fp16 --M 4096,5000 --H 2048,2056,3080,4096,4104,8192 \
  --layout contiguous,strided,misaligned --no-time --quiet --out $R/val >$R/val.log 2>&1
echo "check rc=$? $(el)"; grep -h "pass, " $R/val.log
timeout 90 compute-sanitizer --tool memcheck $B --op add --kernel chunked --dtype bf16 \
  --M 4096 --H 2048,3080,4104,8192 --layout contiguous --no-time --quiet --out $R/san >$R/san.log 2>&1
echo "memcheck rc=$? $(el)"; grep -h "pass, \|ERROR SUMMARY" $R/san.log
# END (default 560): the second the call must end by, the device's limit for it less the tar's
# few seconds (session 54 had 448 s of device time left for the start and the call).
END=${END:-560}
[ $(( $(date +%s) - T0 )) -lt $((END - 60)) ] || { echo "s54b: no time left for the timing"; tar cJf "$OUT/r.tar.xz" -C /tmp r; exit 0; }
left=$((END - ($(date +%s) - T0)))
timeout $left scripts/ab-time.sh $R/ab -T 40 -b before=build-before/rmsnorm-bench -b after=$B \
  -c '--op add --kernel chunked --dtype bf16,fp16,fp32 --M 4096,16384 --H 2048,3080,4096,8192' >$R/ab.log 2>&1
echo "ab rc=$? $(el)"
head -120 $R/ab/summary.txt
tar cJf "$OUT/r.tar.xz" -C /tmp r

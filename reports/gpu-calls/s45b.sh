#!/usr/bin/env bash
# Ran in session 44 right after each run of s45a.sh, on its machine, as
# `WANT=... bash reports/gpu-calls/planned/s45b.sh` (WANT left out the first time), carrying
# .gpu/main-tool.tar.xz:
#   2026-12-06 09:49 UTC, 55 s, H100, 1afa46a;
#   10:04 UTC, 73 s, H100, cf94fae;
#   10:19 UTC, 69 s, NVIDIA H200, 8559ce8.
#   10:52 UTC, 62 s, NVIDIA H100 80GB HBM3 (a fresh start, naming nvidia-h100-x1), as
#   `MAIN_TOOL=.gpu/h100ab.tar.xz WANT=c0593a9 bash reports/gpu-calls/s45b.sh` (58.4 MB: main's
#   head c0593a9 and 98d8691's tool, both stripped, one xz), no s45a.sh before it.
# Timings: docs/perf-notes.md "Run 59 — measured".
# Planned in session 44 (2026-12-06): perf-notes run 59's timing, right after s45a.sh on the
# same machine (which leaves exp/run59's build of 1afa46a in build/). Carries
# .gpu/main-tool.tar.xz (37.2 MB: main's 98d8691 tool as build-before/, stripped).
# scripts/ab-time.sh, ABBA, 2 rounds, auto, bounded inside the call's 600 s, the tar last:
# bf16 M=16384 H 4096 (aligned: the control) and 4097, contiguous and misaligned; fp16 and
# fp32 at H=4097; bf16 H 2049 and 8193 (spans one chunk past whole warps at NCH=2 and 4);
# decode M=1 H=4097.
. reports/gpu-calls/planned/prelude.sh
# MAIN_TOOL: main's tool as build-before/ (and, in session 44's last run, .gpu/h100ab.tar.xz,
# the build to time as build/ too, so no s45a.sh before it).
rm -rf build-before && tar xJf "${MAIN_TOOL:-.gpu/main-tool.tar.xz}" || exit 9
WANT=${WANT:-1afa46a}  # the commit of the build to time
build/rmsnorm-bench --version | grep -q "$WANT" || { echo "run 59's build is not in build/: run this right after s45a.sh"; exit 8; }
machine
build-before/rmsnorm-bench --version
left=$((570 - $(date +%s) + T0))
# 4 groups x 2 builds x 2 rounds = 16 runs, each bounded (a run cut short is listed as such).
scripts/ab-time.sh $R/ab -b main=build-before/rmsnorm-bench -b over=build/rmsnorm-bench -T $((left / 16 - 2)) \
  -c '--op bwd,add-bwd --kernel auto --dtype bf16 --M 16384 --H 4096,4097 --layout contiguous,misaligned' \
  -c '--op bwd,add-bwd --kernel auto --dtype fp16,fp32 --M 16384 --H 4097' \
  -c '--op bwd,add-bwd --kernel auto --dtype bf16 --M 16384 --H 2049,8193' \
  -c '--op bwd,add-bwd --kernel auto --dtype bf16 --M 1 --H 4097' >$R/ab.log 2>&1
echo "ab rc=$? $(el)"
head -70 $R/ab/summary.txt
tar cJf "$OUT/r.tar.xz" -C /tmp r

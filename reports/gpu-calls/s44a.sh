#!/usr/bin/env bash
# Ran in session 45 (2026-12-06 12:39 UTC, 515 s, NVIDIA H100 80GB HBM3, right after s46a.sh and
# s46c.sh on the same machine, carrying 9fdb13a's .gpu/bundle.tar.xz): racecheck 0 hazards in its
# 16 summaries (rows sweep 90 pass + 4 cut, clusters 35 pass + 8 skip + 4 cut), initcheck at
# M=20011 5 pass, 0 errors, in 250 s (reports/gpu-check.txt).
# Planned in session 43 (2026-12-06): what s43b.sh and s43e.sh left of the sanitizers over the
# sansweep's rows and clusters sweeps at 98d8691's kernels (no device code changed since), on
# 15ada58's gpu-check.sh (the timeout inside the sanitizer: a cut process still prints its
# counts and the sanitizer's summary; the tool's kernel timeout off under it). Beside each other:
#   racecheck over the rows sweep (M=100003; s43e.sh: 102 of 128 cases in 150 s as 8
#   processes, 2 of them stopped by the tool's 60 s kernel timeout) and the clusters sweep
#   (H=65536 M=300; none of 48 in 150 s), 250 s each;
#   initcheck over the rows sweep of row-vector and auto in bf16 (32 cases), as one process,
#   at M=20011 instead of 100003: as 8 processes it ended no case of M=100003 in 520 s (s43b.sh)
#   or 150 s (s43e.sh), as one 11 of 128 in 400 s (s41d.sh), so its processes share something
#   that does not scale. 20011 is the GPU tests' many-rows M, still past twice the resident row
#   blocks at H=1000 (the ring's rule there), so each block takes rows one after another
#   through its ring and partial row; 250 s (its clusters sweep passed in s43e.sh).
# Each gpu-check.sh bounded at 560 s and the tar made after them: give the call 600 s. Carries
# .gpu/bundle.tar.xz (main's build; since session 44 main's head after run 59, whose shifted
# backward rows the rows sweep's skewed layout reaches), unpacked over whatever build/ the
# machine holds.
. reports/gpu-calls/planned/prelude.sh
rm -rf build && tar xJf .gpu/bundle.tar.xz || exit 9  # main's build, whatever build/ the call before left
machine
SANSWEEP_SHARDS=8 SANITIZER_TOOLS=racecheck SANITIZER_TIMEOUT=250 SANSWEEP_ARGS= STEPS=sansweep \
  timeout 560 scripts/gpu-check.sh $R/racecheck >$R/racecheck.log 2>&1 &
SANSWEEP_SHARDS=1 SANITIZER_TOOLS=initcheck SANITIZER_TIMEOUT=250 SANSWEEP_ARGS= SANSWEEP_CLUSTER_ARGS= \
  SANSWEEP_ROWS_ARGS="--kernel row-vector,auto --op bwd,add-bwd --H 127,1000 --M 20011 --dtype bf16 --layout contiguous,skewed --no-time --quiet" \
  STEPS=sansweep timeout 560 scripts/gpu-check.sh $R/initcheck >$R/initcheck.log 2>&1 &
wait
echo "both done $(el)"
for tool in racecheck initcheck; do echo "== $tool"; grep -h "steps\|sanitizers over" $R/$tool/summary.txt; done
grep -h "SUMMARY" $R/*/*.log | sort | uniq -c
tar cJf "$OUT/r.tar.xz" -C /tmp r

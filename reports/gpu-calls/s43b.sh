#!/usr/bin/env bash
# Ran in session 43 (2026-12-06 06:11-06:21 UTC, NVIDIA H100 80GB HBM3, 98d8691's bundle kept on
# the machine from the call before) as `bash reports/gpu-calls/planned/s43b.sh`: cut at the
# call's 600 s, nothing returned by it. Its files, left in the machine's /tmp/r, came back in
# part with s43e.sh's tar: racecheck's rows sweep had passed 96 cases (its logs, and so any
# hazard lines, overwritten by s43e's), initcheck's had ended none. Its error: each tool ran
# two sweeps (rows, then clusters) of up to SANITIZER_TIMEOUT=520 s each, one after the other,
# and the tar came after both, so no bound ended it within a call. s43e.sh ran it again at 150 s
# a sweep; planned/s44a.sh bounds the whole call. Kept as it ran; reports/gpu-check.txt
# (98d8691) has the record.
# Planned in session 41 (2026-12-06) as s42c.sh: racecheck and initcheck over the sansweep's
# rows sweep (the backward's persistent grids at M=100003) and, since session 42, its clusters
# sweep (M=300 H=65536) to their end, each as SANSWEEP_SHARDS=8 processes. As one process each, s41a.sh and s41d.sh cut them after 59 (racecheck, 225 s)
# and 11 (initcheck, 400 s) of 128 cases, neither reporting anything. Carries
# .gpu/bundle.tar.xz (unpacked when the machine does not hold build/). Whether 8 processes
# finish in about 1/8 of the time depends on where the sanitizers spend it: on the host they
# do, on the GPU they share it and finish no sooner; each summary line's counts say which.
# Up to 16 processes of at most about 3 GB of device memory each. Bounded at 520 s a sweep
# (SANITIZER_TIMEOUT) after the bundle's unpacking: give the call 600 s.
. reports/gpu-calls/planned/prelude.sh
unpack build .gpu/bundle.tar.xz
machine
for tool in racecheck initcheck; do
  SANSWEEP_SHARDS=8 SANITIZER_TOOLS=$tool SANITIZER_TIMEOUT=520 SANSWEEP_ARGS= STEPS=sansweep \
    scripts/gpu-check.sh $R/$tool >$R/$tool.log 2>&1 &
done
wait
echo "both done $(el)"
for tool in racecheck initcheck; do echo "== $tool"; grep -h "steps\|sanitizers over" $R/$tool/summary.txt; done
tar cJf "$OUT/r.tar.xz" -C /tmp r

#!/usr/bin/env bash
# Ran in session 43 (2026-12-06 06:27-06:32 UTC, 301 s, NVIDIA H100 80GB HBM3, driver
# 580.159.04, 98d8691's build kept on the machine from the call before) as
# `bash reports/gpu-calls/s43e.sh` (one command line then, this file its text): s43b.sh again
# within the device time left (about 400 s), 150 s a sweep: racecheck and initcheck beside
# each other, each over the sansweep's rows and clusters sweeps as 8 processes. Results in
# reports/gpu-check.txt (98d8691): initcheck over clusters clean; the rest cut, no hazard or
# error printed. The gpu-check.sh of then had the timeout around the sanitizer (15ada58 puts it
# inside) and the tool's 60 s kernel timeout on under it (15ada58 turns it off).
. reports/gpu-calls/planned/prelude.sh
machine
for tool in racecheck initcheck; do
  SANSWEEP_SHARDS=8 SANITIZER_TOOLS=$tool SANITIZER_TIMEOUT=150 SANSWEEP_ARGS= STEPS=sansweep \
    timeout 320 scripts/gpu-check.sh $R/$tool >$R/$tool.log 2>&1 &
done
wait
echo "both done $(el)"
for tool in racecheck initcheck; do echo "== $tool"; grep -h "steps\|sanitizers over" $R/$tool/summary.txt; done
tar cJf "$OUT/r.tar.xz" -C /tmp r

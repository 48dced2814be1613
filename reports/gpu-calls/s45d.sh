#!/usr/bin/env bash
# Ran in session 44 (2026-12-06 10:20 UTC, 82 s, NVIDIA H200, driver 580.159.04, warm from
# s45b.sh's third run: 8559ce8's build in build/) as one command line, this file its text:
# every backward kernel at the shifted shapes (which one auto should take: row-vector, at
# each), then racecheck over row-vector's bwd and add-bwd at shifted rows (its cp.async and
# mbarrier): 64 pass; racecheck 32 pass, 0 hazards.
mkdir -p $OUT/k
timeout 100 build/rmsnorm-bench --op bwd,add-bwd --H 4096,4097 --M 16384 --dtype bf16 --layout contiguous,misaligned \
  --kernel row-vector,chunked,staged,auto --quiet --out $OUT/k 2>&1 | tail -40
timeout -k 10 130 compute-sanitizer --tool racecheck --target-processes all --print-limit 20 timeout 120 \
  build/rmsnorm-bench --kernel row-vector --op bwd,add-bwd --H 4097,8193 --M 7,4099 --dtype bf16 \
  --layout contiguous,misaligned --no-time --quiet --kernel-timeout 0 --out $OUT/race 2>&1 | tail -6

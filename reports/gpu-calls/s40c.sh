#!/usr/bin/env bash
# Ran in session 40 (2026-12-05, 23:18 UTC, 139 s) on the same warm H100, carrying
# .gpu/before.tar.xz (d280f13's tool as build-before/, built from a worktree of that commit):
# fp32 M=1 H=2^28 through the tool before the sums in rounds (perf-notes run 54), naive and
# chunked, checked, untimed. Expected to fail: one thread's running fp32 sum over 262144
# squares drifts past the rrms tolerance. main's build passed the same cases in s40a.sh
# (LongRows.HugeRowsSumWithinTheTolerance). Cut at 130 s after fwd and add; bwd not reached.
tar xJf .gpu/before.tar.xz
build-before/rmsnorm-bench --version
T0=$(date +%s)
timeout 130 build-before/rmsnorm-bench --op fwd,add,bwd --kernel naive,chunked --dtype fp32 --M 1 \
  --H 268435456 --no-time --out /tmp/lb >/tmp/lb.log 2>&1
echo "rc=$? +$(($(date +%s) - T0))s"
python3 -c "
import csv
for r in csv.DictReader(open('/tmp/lb/results.csv')): print(r['op'], r['kernel'], r['status'], r['max_rel_err'], r['reason'][:150])
"
tail -3 /tmp/lb.log
cp /tmp/lb/results.csv $OUT/long-before.csv

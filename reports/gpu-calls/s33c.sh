#!/usr/bin/env bash
# Session 33, call C: the tool (6d08d86) beside its peers (scripts/gpu-bench.sh), the default
# sweep's M=1 fwd and add rows of chunked and auto for the baseline, and ncu of the two
# M=16384 launches furthest behind their best peer (add H=4096, fwd H=1024; bf16, auto).
set -uo pipefail
T0=$(date +%s)
el() { echo "+$(( $(date +%s) - T0 ))s"; }
tar xJf .gpu/bundle.tar.xz || exit 9
build/rmsnorm-bench --version
TOTAL_S=285 scripts/gpu-bench.sh $OUT/bench > /tmp/bench.log 2>&1; echo "gpu-bench rc=$? $(el)"; tail -5 /tmp/bench.log
mkdir -p /tmp/m
build/rmsnorm-bench --op fwd,add --kernel chunked,auto --M 1 --quiet --out /tmp/m/sweep > /tmp/m/sweep.log 2>&1
echo "sweep rc=$? $(el)"; tail -2 /tmp/m/sweep.log
scripts/ncu-probe.sh /tmp/m/ncu add4096 add_chunked -- --op add --kernel auto --dtype bf16 --M 16384 --H 4096
scripts/ncu-probe.sh /tmp/m/ncu fwd1024 fwd_ -- --op fwd --kernel auto --dtype bf16 --M 16384 --H 1024
cp /tmp/bench.log /tmp/m/
tar cJf $OUT/misc.tar.xz -C /tmp m
echo "all done $(el)"

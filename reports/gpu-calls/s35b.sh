#!/usr/bin/env bash
# Session 35, call B: the four sanitizers over the tool sweep (two processes), then perf-notes
# run 52's timing: main's head against 4c7e0fd's tool in build-before/ (waiting by polling must
# move no measured number).
set -uo pipefail
T0=$(date +%s)
tar xJf .gpu/bundle.tar.xz || exit 9
build/rmsnorm-bench --version; build-before/rmsnorm-bench --version
SANITIZER_TOOLS="racecheck synccheck" SANITIZER_TIMEOUT=280 STEPS=sansweep scripts/gpu-check.sh $OUT/sa > $OUT/sa.log 2>&1 &
SANITIZER_TOOLS="memcheck initcheck" SANITIZER_TIMEOUT=220 STEPS=sansweep scripts/gpu-check.sh $OUT/sb > $OUT/sb.log 2>&1 &
wait
for d in sa sb; do echo "== $d"; cat $OUT/$d/summary.txt; done
echo "sanitizers done +$(( $(date +%s) - T0 ))s"
timeout 240 scripts/ab-time.sh $OUT/ab -b before=build-before/rmsnorm-bench -b new=build/rmsnorm-bench \
  -c '--op fwd,add,bwd --kernel auto --dtype bf16 --M 1,16384 --H 1024,4096,16384'
echo "ab-time rc=$? +$(( $(date +%s) - T0 ))s"

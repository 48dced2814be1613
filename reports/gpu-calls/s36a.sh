#!/usr/bin/env bash
# Session 36, call A (2026-12-05): perf-notes run 53, branch exp/s36-add-bound (one binary,
# knob RB_X_ADDHOLD: 0 main's rule, 1 kDecode at many rows, 2 the same bounded to 896 threads an
# SM): timings of the three (ABBA), the new many-rows test and the add's tests under 1 and 2,
# memcheck of the held rows, and Nsight Compute of held and bounded at bf16 M=16384 H=4096.
set -uo pipefail
T0=$(date +%s)
tar xJf .gpu/bundle.tar.xz || exit 9
build/rmsnorm-bench --version
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
B=build/rmsnorm-bench
timeout 200 scripts/ab-time.sh $OUT/ab -b off="env RB_X_ADDHOLD=0 $B" -b held="env RB_X_ADDHOLD=1 $B" -b bound="env RB_X_ADDHOLD=2 $B" \
  -c '--op add --kernel auto --dtype bf16,fp32 --M 4096,16384 --H 1024,2048,4096,8192,16384'
echo "ab-time rc=$? +$(( $(date +%s) - T0 ))s"
for k in 1 2; do
  RB_X_ADDHOLD=$k timeout 150 build/tests/rb_gpu_tests --gtest_filter='Chunked.AddHeld*:Chunked.ShortRows*:*chunked_add*:*auto_add*' > $OUT/tests$k.log 2>&1
  echo "tests RB_X_ADDHOLD=$k rc=$? $(grep -h 'PASSED\|FAILED' $OUT/tests$k.log | tr '\n' ' ') +$(( $(date +%s) - T0 ))s"
done
RB_X_ADDHOLD=2 timeout 100 compute-sanitizer --tool memcheck $B --no-time --quiet --op add --kernel chunked --M 4096 \
  --H 1024,2048,4104,8192 --dtype bf16,fp32 --layout contiguous,misaligned,strided --out $OUT/mc > $OUT/mc.log 2>&1
echo "memcheck rc=$? $(grep -h 'ERROR SUMMARY' $OUT/mc.log) $(tail -1 $OUT/mc/report.md 2>/dev/null) +$(( $(date +%s) - T0 ))s"
for k in 1 2; do
  RB_X_ADDHOLD=$k timeout 60 scripts/ncu-probe.sh $OUT/ncu hold$k add_chunked -- --op add --kernel chunked --H 4096 --M 16384 --dtype bf16
  grep -E "Registers Per|Achieved Occupancy|Theoretical Occupancy|DRAM Throughput|Duration|Block Limit Reg" $OUT/ncu/hold$k.txt | head -8
done
echo "all done +$(( $(date +%s) - T0 ))s"

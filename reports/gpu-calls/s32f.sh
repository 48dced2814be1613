#!/usr/bin/env bash
# Session 32, call F: perf-notes run 49 (the decode forward's row in registers, kDecode), new
# against e241397's kernels (build-before), then the checks of the changed kernel.
set -uo pipefail
T0=$(date +%s)
el() { echo "+$(( $(date +%s) - T0 ))s"; }
tar xJf .gpu/bundle.tar.xz || exit 9
build/rmsnorm-bench --version; build-before/rmsnorm-bench --version
F=(--eps 1e-5 --min-samples 10 --max-time 0.05 --no-check --quiet)
C1=(--op fwd --kernel chunked --dtype bf16,fp32 --M 1,16,128 --H 1024,4096,4097,8192)
C2=(--op fwd --kernel auto --dtype bf16 --M 1,16384 --H 1024,4096)
for round in 1 2; do
  for b in before new; do
    bin=build/rmsnorm-bench; [ $b = before ] && bin=build-before/rmsnorm-bench
    $bin "${F[@]}" "${C1[@]}" --out /tmp/t/$b$round/a >/dev/null 2>&1; echo "$b$round a rc=$?"
    $bin "${F[@]}" "${C2[@]}" --out /tmp/t/$b$round/b >/dev/null 2>&1; echo "$b$round b rc=$?"
  done
done
python3 scripts/ab_summary.py /tmp/t > $OUT/timings.txt; cat $OUT/timings.txt
echo "timings done $(el)"
mkdir -p /tmp/m
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 150 build/tests/rb_gpu_tests --gtest_filter='*chunked_fwd*:*auto_fwd*:Chunked.*:Epilogue.*' > /tmp/m/tests.$i.log 2>&1 &
done
timeout 120 compute-sanitizer --tool memcheck --print-limit 20 build/rmsnorm-bench --no-time --quiet --op fwd --kernel chunked,auto \
  --M 1,5 --H 1,7,127,1024,2049,4096,4097,8192 --dtype bf16,fp16,fp32 --wdtype same,fp32 --layout contiguous,misaligned,strided --out /tmp/m/memcheck > /tmp/m/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|pass," /tmp/m/memcheck.log | tail -2
wait
grep -h "PASSED\|FAILED\|tests ran" /tmp/m/tests.*.log
echo "checks done $(el)"
build/rmsnorm-bench --op fwd --kernel chunked,auto --M 1 --quiet --out /tmp/m/sweep > /tmp/m/sweep.log 2>&1
echo "sweep rc=$?"; tail -2 /tmp/m/sweep.log
tar cJf $OUT/misc.tar.xz -C /tmp m
echo "all done $(el)"

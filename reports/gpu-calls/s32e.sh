#!/usr/bin/env bash
# Session 32, call E: perf-notes run 48 (the decode forward's and add's w prefetched into L1),
# new against e241397's kernels (build-before), then the checks of the changed kernels.
set -uo pipefail
T0=$(date +%s)
el() { echo "+$(( $(date +%s) - T0 ))s"; }
tar xJf .gpu/bundle.tar.xz || exit 9
build/rmsnorm-bench --version; build-before/rmsnorm-bench --version
F=(--eps 1e-5 --min-samples 10 --max-time 0.05 --no-check --quiet)
C1=(--op fwd,add --kernel chunked,auto --dtype bf16,fp32 --M 1,16,128 --H 1024,4096)
C2=(--op fwd,add --kernel auto --dtype bf16 --M 16384 --H 1024,4096,8192)
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
for i in 0 1 2 3 4 5; do
  GTEST_TOTAL_SHARDS=6 GTEST_SHARD_INDEX=$i timeout 300 build/tests/rb_gpu_tests --gtest_filter='*chunked*:*auto*:Auto.*:Chunked.*:Epilogue.*' > /tmp/m/tests.$i.log 2>&1 &
done
timeout 300 compute-sanitizer --tool memcheck --print-limit 20 build/rmsnorm-bench --no-time --quiet --op fwd,add --kernel chunked,auto \
  --M 1,5 --H 1,7,127,1024,4097,8192,16389 --dtype bf16,fp32 --wdtype same,fp32 --layout contiguous,misaligned,strided --out /tmp/m/memcheck > /tmp/m/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|pass," /tmp/m/memcheck.log | tail -2
wait
grep -h "PASSED\|FAILED" /tmp/m/tests.*.log
echo "checks done $(el)"
build/rmsnorm-bench --op fwd,add --kernel chunked,auto --M 1 --quiet --out /tmp/m/sweep > /tmp/m/sweep.log 2>&1
echo "sweep rc=$?"; tail -2 /tmp/m/sweep.log
scripts/ncu-probe.sh /tmp/m fwd-new fwd_chunked -- --op fwd --kernel auto --dtype bf16 --M 1 --H 4096
rm -rf /tmp/m/*.run
tar cJf $OUT/misc.tar.xz -C /tmp m
echo "all done $(el)"

#!/usr/bin/env bash
# Session 33, call A: perf-notes run 50 (the decode add's row in registers; kDecode's own
# block size; run 49's dead zero removed), new against 7534759 (build-before), then the
# small-M sweep for auto's by-M table (M <= 64: the one-wave points), then the checks.
set -uo pipefail
T0=$(date +%s)
el() { echo "+$(( $(date +%s) - T0 ))s"; }
tar xJf .gpu/bundle.tar.xz || exit 9
build/rmsnorm-bench --version; build-before/rmsnorm-bench --version
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
F=(--eps 1e-5 --min-samples 10 --max-time 0.05 --no-check --quiet)
C1=(--op fwd --kernel chunked --dtype bf16,fp32 --M 1,16,128 --H 1024,4096,4097,8192,16384)
C2=(--op add --kernel chunked --dtype bf16,fp32 --M 1,16,128 --H 1024,4096,4097,8192,16384)
C3=(--op fwd,add --kernel auto --dtype bf16 --M 1,16384 --H 1024,4096)
for round in 1 2; do
  for b in before new; do
    bin=build/rmsnorm-bench; [ $b = before ] && bin=build-before/rmsnorm-bench
    $bin "${F[@]}" "${C1[@]}" --out /tmp/t/$b$round/a >/dev/null 2>&1; echo "$b$round a rc=$?"
    $bin "${F[@]}" "${C2[@]}" --out /tmp/t/$b$round/b >/dev/null 2>&1; echo "$b$round b rc=$?"
    $bin "${F[@]}" "${C3[@]}" --out /tmp/t/$b$round/c >/dev/null 2>&1; echo "$b$round c rc=$?"
  done
done
python3 scripts/ab_summary.py /tmp/t > $OUT/timings.txt; cat $OUT/timings.txt
echo "timings done $(el)"
mkdir -p /tmp/m
timeout 200 build/rmsnorm-bench --op fwd,add --kernel warp-row,row-vector,chunked,auto --dtype bf16,fp32 \
  --M 1,4,16,64 --H 128,256,512,1024,2048,4096,8192 --eps 1e-5 --min-samples 10 --max-time 0.05 --quiet \
  --out /tmp/m/bym > /tmp/m/bym.log 2>&1
echo "by-M sweep rc=$?"; tail -2 /tmp/m/bym.log; cp /tmp/m/bym/results.csv $OUT/bym.csv
echo "sweep done $(el)"
for i in 0 1 2 3 4 5 6; do
  GTEST_TOTAL_SHARDS=7 GTEST_SHARD_INDEX=$i timeout 230 build/tests/rb_gpu_tests \
    --gtest_filter='*chunked_fwd*:*chunked_add*:*auto_fwd*:*auto_add*:Chunked.*:Epilogue.*:Auto.*' > /tmp/m/tests.$i.log 2>&1 &
done
timeout 220 compute-sanitizer --tool memcheck --print-limit 20 build/rmsnorm-bench --no-time --quiet --op fwd,add --kernel chunked,auto \
  --M 1,5 --H 1,7,127,1024,2049,4096,4097,8192,16384 --dtype bf16,fp16,fp32 --wdtype same,fp32 --rdtype same,fp32 \
  --layout contiguous,misaligned,strided --out /tmp/m/memcheck > /tmp/m/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|pass," /tmp/m/memcheck.log | tail -2
wait
grep -h "PASSED\|FAILED\|tests ran\|cases passed\|Failure" /tmp/m/tests.*.log | head -40
echo "checks done $(el)"
tar cJf $OUT/misc.tar.xz -C /tmp m
echo "all done $(el)"

#!/usr/bin/env bash
# Session 32, call A: run 47's timings (before = ae61ad1's kernels, new = the dw vector stores),
# ncu of the decode launches, then the whole gpu-check's gpu step beside the four sanitizers.
set -uo pipefail
T0=$(date +%s)
tar xJf .gpu/bundle.tar.xz || exit 9
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
build/rmsnorm-bench --version; build-before/rmsnorm-bench --version
F=(--eps 1e-5 --min-samples 10 --max-time 0.05 --no-check --quiet)
C1=(--op bwd,add-bwd --kernel row-vector --dtype bf16,fp32 --M 1 --H 1024,2048,4096,4097,8192,16384)
C2=(--op bwd,add-bwd --kernel row-vector,auto --dtype bf16 --wdtype same,fp32 --M 1,2,16 --H 4096)
for round in 1 2; do
  for b in before new; do
    bin=build/rmsnorm-bench; [ $b = before ] && bin=build-before/rmsnorm-bench
    $bin "${F[@]}" "${C1[@]}" --out /tmp/t/$b$round/a >/dev/null 2>&1; echo "$b$round a rc=$?"
    $bin "${F[@]}" "${C2[@]}" --out /tmp/t/$b$round/b >/dev/null 2>&1; echo "$b$round b rc=$?"
    build/rmsnorm-bench merge /tmp/t/$b$round/a/results.csv /tmp/t/$b$round/b/results.csv -o /tmp/t/$b$round/results.csv >/dev/null
  done
done
python3 scripts/ab_summary.py /tmp/t > $OUT/timings.txt; cat $OUT/timings.txt
echo "timings done at +$(( $(date +%s) - T0 ))s"
for op in fwd add bwd; do
  re=fwd_chunked; [ $op = add ] && re=add_; [ $op = bwd ] && re=bwd_row_vector
  scripts/ncu-probe.sh /tmp/ncu $op-new "$re" -- --op $op --kernel auto --dtype bf16 --M 1 --H 4096
done
BUILD_DIR=build-before scripts/ncu-probe.sh /tmp/ncu bwd-before bwd_row_vector -- --op bwd --kernel row-vector --dtype bf16 --M 1 --H 4096
tar cJf $OUT/ncu.tar.xz -C /tmp ncu
echo "ncu done at +$(( $(date +%s) - T0 ))s"
build/tests/rb_gpu_plugin_tests > /tmp/plugin-early.log 2>&1 &
pp=$!
GPU_SHARDS=14 STEP_TIMEOUT=380 STEPS=gpu scripts/gpu-check.sh /tmp/gc > /tmp/gc.log 2>&1 &
gp=$!
SANITIZER_TOOLS="memcheck racecheck initcheck synccheck" SANITIZER_TIMEOUT=110 STEPS=sansweep scripts/gpu-check.sh /tmp/gs > /tmp/gs.log 2>&1
wait $pp; echo "plugin early rc=$?"; tail -3 /tmp/plugin-early.log; cp /tmp/plugin-early.log /tmp/gc/
while kill -0 $gp 2>/dev/null && [ $(( $(date +%s) - T0 )) -lt 565 ]; do sleep 2; done
kill -0 $gp 2>/dev/null && { echo "gc cut at +$(( $(date +%s) - T0 ))s"; pkill -P $gp; kill $gp; sleep 2; }
cp /tmp/gc/summary.txt $OUT/gc-summary.txt; cp /tmp/gs/summary.txt $OUT/gs-summary.txt
tar cJf $OUT/gc.tar.xz -C /tmp gc gc.log gs.log --exclude='*.csv' 2>/dev/null
tar cJf $OUT/gs.tar.xz -C /tmp gs 2>/dev/null
cat /tmp/gc/summary.txt; grep -h "sanitizers over" /tmp/gs/summary.txt
echo "all done at +$(( $(date +%s) - T0 ))s"

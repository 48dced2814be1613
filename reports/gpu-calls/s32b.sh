#!/usr/bin/env bash
# Session 32, call B: run 47's timings again (before = ae61ad1's kernels, new = the dw vector
# stores), what call A's gpu-check left (the mutant test its shard 4 was cut in; racecheck over
# the tool sweep), the default sweep's M=1 backward rows for the baseline, and the peers.
set -uo pipefail
T0=$(date +%s)
el() { echo "+$(( $(date +%s) - T0 ))s"; }
tar xJf .gpu/bundle.tar.xz || exit 9
build/rmsnorm-bench --version; build-before/rmsnorm-bench --version
F=(--eps 1e-5 --min-samples 10 --max-time 0.05 --no-check --quiet)
C1=(--op bwd,add-bwd --kernel row-vector --dtype bf16,fp32 --M 1 --H 1024,2048,4096,4097,8192,16384)
C2=(--op bwd,add-bwd --kernel row-vector --dtype bf16 --wdtype fp32 --M 1 --H 4096)
C3=(--op bwd,add-bwd --kernel row-vector --dtype bf16 --M 2,16 --H 4096)
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
build/tests/rb_gpu_tests --gtest_filter='AllMutants/MutantCaught.ByValidationSweep/mutant_no_correction' > /tmp/m/mutant.log 2>&1 &
mp=$!
SANITIZER_TOOLS=racecheck SANITIZER_TIMEOUT=240 STEPS=sansweep scripts/gpu-check.sh /tmp/m/gs > /tmp/m/gs.log 2>&1
wait $mp; echo "mutant test rc=$?"; grep -h "^MUTANT\|PASSED\|FAILED" /tmp/m/mutant.log
grep -h "sanitizers over" /tmp/m/gs/summary.txt
echo "checks done $(el)"
build/rmsnorm-bench --op bwd,add-bwd --kernel row-vector,auto --M 1 --quiet --out /tmp/m/sweep > /tmp/m/sweep.log 2>&1
echo "sweep rc=$?"; tail -2 /tmp/m/sweep.log
echo "sweep done $(el)"
tar cJf $OUT/misc.tar.xz -C /tmp m
TOTAL_S=285 scripts/gpu-bench.sh $OUT/bench > /tmp/bench.log 2>&1; echo "gpu-bench rc=$?"
tail -15 /tmp/bench.log
echo "all done $(el)"

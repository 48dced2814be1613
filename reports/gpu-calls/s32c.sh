#!/usr/bin/env bash
# Session 32, call C: the M=1 short rows before/new (the baseline compare's 4 cold regressions
# at H=128, 16-bit), then where the decode forward and add spend their time (ncu, warm caches,
# warp-stall sampling by SASS line) beside cuDNN's forward.
set -uo pipefail
T0=$(date +%s)
el() { echo "+$(( $(date +%s) - T0 ))s"; }
tar xJf .gpu/bundle.tar.xz || exit 9
build/rmsnorm-bench --version; build-before/rmsnorm-bench --version
F=(--eps 1e-5 --quiet)
C1=(--op bwd,add-bwd --kernel row-vector --dtype bf16,fp16,fp32 --M 1 --H 128,256,512,1024)
for round in 1 2; do
  for b in before new; do
    bin=build/rmsnorm-bench; [ $b = before ] && bin=build-before/rmsnorm-bench
    $bin "${F[@]}" "${C1[@]}" --out /tmp/t/$b$round/a >/dev/null 2>&1; echo "$b$round a rc=$?"
  done
done
python3 scripts/ab_summary.py /tmp/t > $OUT/timings.txt; cat $OUT/timings.txt
echo "timings done $(el)"
mkdir -p /tmp/n
P=(--op fwd --kernel auto --dtype bf16 --M 1 --H 4096 --eps 1e-5 --no-check --min-samples 5 --max-time 0 --quiet)
prof() {  # NAME REGEX TOOL_ARGS...
  local name=$1 re=$2; shift 2
  ncu --clock-control none --cache-control none --sampling-interval 0 --kernel-name "regex:$re" --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section LaunchStats --section WarpStateStats --section SourceCounters --section SchedulerStats \
    -o /tmp/n/$name -f build/rmsnorm-bench "$@" --out /tmp/n/$name.run > /tmp/n/$name.log 2>&1
  echo "ncu $name rc=$?"
  ncu -i /tmp/n/$name.ncu-rep --page details > /tmp/n/$name.txt 2>&1
  ncu -i /tmp/n/$name.ncu-rep --page source --csv --print-source sass > /tmp/n/$name-sass.csv 2>&1
  grep -E "Duration|Elapsed Cycles|Block Size|Registers Per" /tmp/n/$name.txt
}
prof fwd fwd_chunked "${P[@]}"
prof add add_chunked "${P[@]/fwd/add}"
prof bwd bwd_row_vector --op bwd --kernel auto --dtype bf16 --M 1 --H 4096 --eps 1e-5 --no-check --min-samples 5 --max-time 0 --quiet
prof fwd1024 fwd_chunked --op fwd --kernel auto --dtype bf16 --M 1 --H 1024 --eps 1e-5 --no-check --min-samples 5 --max-time 0 --quiet
# cuDNN's forward: every kernel of a short run, names and warm durations.
ncu --clock-control none --cache-control none --launch-count 40 --section SpeedOfLight --section LaunchStats \
  build/rmsnorm-bench --op fwd --kernel cudnn --dtype bf16 --M 1 --H 4096 --eps 1e-5 --no-check --min-samples 3 --max-time 0 --quiet --out /tmp/n/cudnn.run > /tmp/n/cudnn.txt 2>&1
echo "ncu cudnn rc=$?"; grep -E "^  [^ ].*\(|Duration" /tmp/n/cudnn.txt | head -60
tar cJf $OUT/ncu.tar.xz -C /tmp n --exclude='*.run'
echo "all done $(el)"

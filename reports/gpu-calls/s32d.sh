#!/usr/bin/env bash
# Session 32, call D: the dw store at M=1 three ways in one binary (exp/s32, RB_X_DW = 0 main's
# vectors plain, 1 element by element as before run 47, 2 vectors streaming) cold and graph (main's
# code is RB_X_DW=0; the binary alone fits a call's carry); then the decode forward, add and backward under ncu with
# warm caches and warp-stall sampling.
set -uo pipefail
T0=$(date +%s)
el() { echo "+$(( $(date +%s) - T0 ))s"; }
tar xJf .gpu/bins.tar.xz || exit 9
build-exp/rmsnorm-bench --version
C=(--op bwd,add-bwd --kernel row-vector --dtype bf16,fp16,fp32 --M 1 --H 128,256,512,1024,2048,4096 --eps 1e-5 --quiet)
for round in 1 2 3; do
  for k in 0 1 2; do
    RB_X_DW=$k build-exp/rmsnorm-bench "${C[@]}" --out /tmp/t/x$k$round/a >/dev/null 2>&1; echo "x$k$round rc=$?"
  done
done
python3 scripts/ab_summary.py /tmp/t > $OUT/timings.txt; cat $OUT/timings.txt
echo "timings done $(el)"
WS=""; ncu --help | grep -q -- "--warp-sampling-interval" && WS="--warp-sampling-interval 0"
echo "ncu sampling option: ${WS:-none}"; ncu --version | tail -1
mkdir -p /tmp/n
prof() {  # NAME REGEX TOOL_ARGS...
  local name=$1 re=$2; shift 2
  ncu --clock-control none --cache-control none $WS --kernel-name "regex:$re" --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section LaunchStats --section WarpStateStats --section SourceCounters --section SchedulerStats \
    -o /tmp/n/$name -f build-exp/rmsnorm-bench "$@" --eps 1e-5 --no-check --min-samples 5 --max-time 0 --quiet --out /tmp/n/$name.run > /tmp/n/$name.log 2>&1
  echo "ncu $name rc=$?"
  ncu -i /tmp/n/$name.ncu-rep --page details > /tmp/n/$name.txt 2>&1
  ncu -i /tmp/n/$name.ncu-rep --page source --csv --print-source sass > /tmp/n/$name-sass.csv 2>&1
  grep -E "Duration|Elapsed Cycles|Registers Per" /tmp/n/$name.txt
}
prof fwd fwd_chunked --op fwd --kernel auto --dtype bf16 --M 1 --H 4096
prof add add_chunked --op add --kernel auto --dtype bf16 --M 1 --H 4096
prof bwd bwd_row_vector --op bwd --kernel auto --dtype bf16 --M 1 --H 4096
prof bwd128 bwd_row_vector --op bwd --kernel row-vector --dtype bf16 --M 1 --H 128
rm -rf /tmp/n/*.run
tar cJf $OUT/ncu.tar.xz -C /tmp n
echo "all done $(el)"

#!/usr/bin/env bash
# Session 58 (2026-12-08 00:11-00:12 UTC, NVIDIA H100 80GB HBM3): two calls typed inline right
# after `QUICK=1 bash reports/gpu-calls/s57c.sh` on the same warm machine (its build/ kept: the
# run-68 patch with its knob over 75bb03f), kept here as they ran, for anyone to repeat.
# 1 (65 s): s57c.sh's val1 and racecheck again with room to end (there 40 s and 20 s cut them).
# 2 (12 s): perf-notes run 69 in brief (s57d.sh's steps, one round each): cuDNN's and auto's
#   forward at bf16 M=16384 H=4096 timed under each flush, then ncu with --cache-control none
#   over ten of the tool's own timed launches. (Typed inline, the vendor regex was prelude.sh's
#   NOT_OURS spelled out; here it is read from there.)
. reports/gpu-calls/planned/prelude.sh
B=build/rmsnorm-bench
if [ "${1:-1}" = 1 ]; then
  CL="--op bwd,add-bwd --kernel row-vector,auto --kernel-timeout 10 --quiet"
  timeout 110 $B --no-time $CL --M 1,3,300 --H 16392,32768,65536,131072 --dtype bf16,fp32 \
    --layout contiguous,strided --out $OUT/val1 >$OUT/val1.log 2>&1
  echo "val1 rc=$?"; tail -2 $OUT/val1.log
  timeout 60 compute-sanitizer --tool racecheck $B --no-time $CL --M 1,5 --H 32768,65536 --dtype bf16 \
    --out $OUT/rc >$OUT/rc.log 2>&1
  echo "racecheck rc=$?"; grep -h "pass, .* fail\|SUMMARY" $OUT/rc.log | tail -2
else
  C="--op fwd --dtype bf16 --M 16384 --H 4096 --eps 1e-5 --no-check --quiet"
  for k in cudnn auto; do
    for f in read write; do
      timeout 15 $B $C --kernel $k --flush $f --min-samples 50 --max-time 0.2 --out /tmp/t-$k-$f >/dev/null 2>&1
      echo "time $k flush=$f rc=$? $(grep -v '^schema' /tmp/t-$k-$f/results.csv | cut -d, -f4,33,34,38,42)"
    done
    re=$NOT_OURS; [ $k = auto ] && re=fwd_
    timeout 30 ncu --clock-control none --cache-control none --kernel-name "regex:$re" --launch-skip 5 --launch-count 10 \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
      $B $C --kernel $k --min-samples 20 --max-time 0 --out /tmp/n-$k >$OUT/ncu-$k.txt 2>&1
    echo "ncu $k rc=$?"
    grep -E "gpu__time_duration" $OUT/ncu-$k.txt | awk '{print $3}' | sort -n | tr '\n' ' '; echo
    grep -E "dram__bytes" $OUT/ncu-$k.txt | awk '{print $1,$2,$3}' | sort | uniq -c | head -6
  done
fi

#!/usr/bin/env bash
# Planned in session 57 (2026-12-07; no device time left to run it), any card: perf-notes run
# 69, where cuDNN's forward at bf16 M=16384 H=4096 gains its 3.9% over auto. Run 67's ncu replay
# (caches flushed before each kernel) put the two kernels level (cuDNN 88.16 µs, auto 87.62),
# where the tool's cold median has cuDNN at 84.8 and auto at 88.1 (session 56, H100). This reads
# the same kernels in the tool's own sequence: ncu with --cache-control none (the tool's read
# flush, not ncu's, sets L2 before each launch) over timed samples, and the tool's cold timing
# with each flush mode (read: clean lines; write: the flush's dirty lines paid by the kernel).
# Carries the tool: $PACK (default .gpu/bench.tar.xz of main's head, scripts/pack-gpu.sh bench,
# or a check bundle). About 120 s; tar last.
. reports/gpu-calls/planned/prelude.sh
rm -rf build && tar xJf "${PACK:-.gpu/bench.tar.xz}" || exit 9
machine
B=build/rmsnorm-bench
C="--op fwd --dtype bf16 --M 16384 --H 4096 --eps 1e-5 --no-check --quiet"
for k in cudnn auto; do
  for f in read write; do
    for round in 1 2; do
      timeout 30 $B $C --kernel $k --flush $f --min-samples 50 --max-time 0.2 --out $R/t-$k-$f-$round >/dev/null 2>&1
      echo "time $k flush=$f round $round rc=$? $(el)"; grep -v "^schema" $R/t-$k-$f-$round/results.csv | cut -d, -f4,33,34,38,42
    done
  done
  # Ten timed samples of the tool's loop, each after its read flush (no ncu flush): skip the
  # warm-up launches, profile 10.
  re=$NOT_OURS; [ $k = auto ] && re=fwd_
  timeout 40 ncu --clock-control none --cache-control none --kernel-name "regex:$re" --launch-skip 5 --launch-count 10 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
    $B $C --kernel $k --min-samples 20 --max-time 0 --out $R/n-$k >$R/ncu-$k.txt 2>&1
  echo "ncu $k rc=$? $(el)"; grep -E "gpu__time_duration|dram__bytes" $R/ncu-$k.txt | awk '{print $1, $3}' | sort | uniq -c | head -12
  grep -E "gpu__time_duration" $R/ncu-$k.txt | awk '{print $3}' | sort -n | tr '\n' ' '; echo
done
tar cJf "$OUT/r.tar.xz" -C /tmp r

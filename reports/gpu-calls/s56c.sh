#!/usr/bin/env bash
# Planned in session 56 (2026-12-07; not run there: too little device time was left to start a
# machine), any card: how cuDNN runs the shapes where it leads auto by the most
# (README's H100 table: bwd bf16 M=1024 H=65536, 90.4% of copy against 73.8), read with Nsight
# Compute: first every kernel such a case launches with its launch configuration (grid, block,
# cluster, registers, shared memory), then cuDNN's and auto's kernels profiled
# (scripts/ncu-probe.sh's sections). Carries $PACK (default .gpu/check-75bb03f.tar.xz, whose
# tool has 88589b2's kernels; session 57 ran it right before s57a.sh from the same bundle), or
# .gpu/bench.tar.xz. About 270 s at most; tar last.
. reports/gpu-calls/planned/prelude.sh
PACK=${PACK:-.gpu/check-75bb03f.tar.xz}
rm -rf build && tar xJf "$PACK" || exit 9
machine
B=build/rmsnorm-bench
Q="--eps 1e-5 --no-check --min-samples 2 --max-time 0 --quiet"
# Every kernel a case launches (the tool's L2 flush between samples among them), no filter:
# cuDNN's backward at M=1024 H=65536 and M=16384 H=4096 (cuDNN ahead by 3.2 points on the
# H100), its forward at M=1024 H=65536 (ahead by 5.9) and M=16384 H=4096 (103.8% of copy, 3.9%
# faster than auto, where every Triton peer is at 98-100.5; cuDNN 99.0 against auto's 97.3 on
# the H200).
launch() {
  timeout 30 ncu --clock-control none --launch-count 14 --section LaunchStats \
    $B --kernel cudnn --dtype bf16 "$@" $Q --out $R/l-$2-$4-$6.run >$R/launch-$2-$4-$6.txt 2>&1
  echo "launch $* rc=$? $(el)"
  grep -E '^  [a-zA-Z_].*\(|Grid Size|Block Size|Cluster Size|Registers Per|Shared Memory Config|Dynamic Shared' \
    $R/launch-$2-$4-$6.txt | head -40
}
launch --op bwd --M 1024 --H 65536
launch --op bwd --M 16384 --H 4096
launch --op fwd --M 1024 --H 65536
launch --op fwd --M 16384 --H 4096
# cuDNN's kernels by a filter that leaves out the tool's helpers (read_flush_kernel, the guard
# scans' scan_kernel and hash_kernel), without lookahead: names not starting read, sc or ha.
NOT_OURS='^([^rsh]|r[^e]|s[^c]|h[^a]).*'
# Three launches in a row: each of cuDNN's kernels if its backward is two or three a call.
NCU_SKIP=4 NCU_COUNT=3 timeout 45 scripts/ncu-probe.sh $R cudnn-bwd "$NOT_OURS" -- --op bwd --kernel cudnn --dtype bf16 --M 1024 --H 65536
timeout 35 scripts/ncu-probe.sh $R auto-bwd "bwd_" -- --op bwd --kernel auto --dtype bf16 --M 1024 --H 65536
for f in $R/cudnn-bwd.txt $R/auto-bwd.txt; do
  echo "== $f"; grep -E '^  [a-zA-Z_].*\(|DRAM Throughput|Duration|Achieved Occupancy|Registers Per|Grid Size|Block Size|Cluster Size|Waves Per SM' "$f" | head -30
done
# DRAM bytes read and written inside the forward's kernel at M=16384 H=4096 (x and y 134.2 MB
# each): fewer written than y's bytes would mean dirty lines left in L2 when the kernel ends,
# which the cold timing does not charge.
for k in cudnn auto; do
  re=$NOT_OURS; [ $k = auto ] && re=fwd_
  timeout 30 ncu --clock-control none --kernel-name "regex:$re" --launch-skip 2 --launch-count 1 \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
    $B --op fwd --kernel $k --dtype bf16 --M 16384 --H 4096 $Q --out $R/m-$k.run >$R/bytes-$k.txt 2>&1
  echo "bytes $k rc=$? $(el)"; grep -E '^  [a-zA-Z_].*\(|dram__bytes|gpu__time_duration' $R/bytes-$k.txt
done
echo "done $(el)"
tar cJf "$OUT/r.tar.xz" -C /tmp r

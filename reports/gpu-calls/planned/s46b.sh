#!/usr/bin/env bash
# Planned in session 45 (2026-12-06): the baseline refreshed from the final code, issue 11's
# deliverable 3. `bash s46b.sh OP...` runs the default sweep (scripts/run.sh's: M 1 and 16384,
# H 128..16384 with 4097, three dtypes, both eps) of the built-in kernels for each OP, alone on
# the GPU (checked against the fp64 reference and timed), each bounded at SWEEP_S (default
# 270) seconds; their rows make the new reports/baselines/h200.csv (merged on the CPU machine,
# then `rmsnorm-bench compare` of the old one against it). H200 only: the baseline is an H200's.
# Unpacks .gpu/bundle.tar.xz (main's head, packed from a clean clone by scripts/pack-gpu.sh)
# over whatever build/ the machine holds, each call (a warm machine may hold another call's tool). The whole sweep took about 0.3 s a case (2026-12-03: 1494 cases in
# 470 s with cuDNN and cuBLAS); fwd has 420, add 336, bwd 420, add-bwd 420.
. reports/gpu-calls/planned/prelude.sh
rm -rf build && tar xJf .gpu/bundle.tar.xz || exit 9
machine
K=naive,row-vector,warp-row,chunked,staged,auto
for op in "$@"; do
  timeout "${SWEEP_S:-270}" build/rmsnorm-bench --op "$op" --kernel $K --quiet --out $R/sweep-$op >$R/sweep-$op.log 2>&1
  echo "sweep $op rc=$? $(el)"; grep -h "Totals" $R/sweep-$op/report.md; tail -2 $R/sweep-$op.log
done
tar cJf "$OUT/r.tar.xz" -C /tmp r

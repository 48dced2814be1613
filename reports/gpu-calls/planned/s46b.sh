#!/usr/bin/env bash
# Planned in session 45 (2026-12-06): the baseline refreshed from the final code, issue 11's
# deliverable 3. `bash s46b.sh OP...` runs the default sweep (scripts/run.sh's: M 1 and 16384,
# H 128..16384 with 4097, three dtypes, both eps) of the built-in kernels for each OP, alone on
# the GPU (checked against the fp64 reference and timed), each bounded at SWEEP_S (default
# 270) seconds; their rows make the new reports/baselines/h200.csv (merged on the CPU machine,
# then `rmsnorm-bench compare` of the old one against it). H200 only: the baseline is an H200's.
# Session 48's plan for it (about 1000 s of device time, one warm H200):
#   SWEEP_S=190 bash reports/gpu-calls/planned/s46b.sh fwd add bwd          (about 400 s)
#   SWEEP_S=170 BENCH_S=285 bash reports/gpu-calls/planned/s46b.sh add-bwd  (about 470 s,
#     carrying .gpu/bench.tar.xz)
# each bounded inside the call's 600 s (15 s unpack, the sweeps' bounds, the bench's + 45 s).
# Unpacks .gpu/bench.tar.xz (main's head's tool and the peer wheels, packed from a clean clone
# by `scripts/pack-gpu.sh bench`; session 51: the check bundle and the wheels together are over
# a call's 64 MiB) over whatever build/ the machine holds, each call (a warm machine may hold
# another call's tool). The whole sweep took about 0.3 s a case (2026-12-03: 1494 cases in
# 470 s with cuDNN and cuBLAS); fwd has 420, add 336, bwd 420, add-bwd 420.
. reports/gpu-calls/planned/prelude.sh
# PACK: the pack to unpack (.gpu/bench.tar.xz; the check bundle, .gpu/bundle.tar.xz, holds the
# same tool and serves the sweeps, not BENCH_S's peers).
rm -rf build && tar xJf "${PACK:-.gpu/bench.tar.xz}" || exit 9
machine
K=naive,row-vector,warp-row,chunked,staged,auto
# An argument OP:S bounds that op's sweep at S seconds (session 49: one call of all four ops,
# `fwd:140 add:110 bwd:150 add-bwd:150`, when the budget left holds one call and no more). Each
# sweep's rows also go straight to $OUT: a call cut by the device's limit returns them.
for arg in "$@"; do
  op=${arg%%:*}; s=${SWEEP_S:-270}; [ "$arg" != "$op" ] && s=${arg#*:}
  timeout "$s" build/rmsnorm-bench --op "$op" --kernel $K --quiet --out $R/sweep-$op >$R/sweep-$op.log 2>&1
  echo "sweep $op rc=$? $(el)"; grep -h "Totals" $R/sweep-$op/report.md; tail -2 $R/sweep-$op.log
  cp $R/sweep-$op/results.csv "$OUT/sweep-$op.csv"
done
# BENCH_S (unset: none): then scripts/gpu-bench.sh, the tool beside its peers on the headline
# shapes (README "Peers"), aiming at BENCH_S seconds, with the Liger and Helion wheels the pack
# holds.
if [ -n "${BENCH_S:-}" ]; then
  TOTAL_S=$BENCH_S timeout $((BENCH_S + 45)) scripts/gpu-bench.sh $R/bench >$R/bench.log 2>&1
  echo "gpu-bench rc=$? $(el)"; tail -4 $R/bench.log
fi
tar cJf "$OUT/r.tar.xz" -C /tmp r

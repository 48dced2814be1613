#!/usr/bin/env bash
# Ran in session 46 right after s47e.sh, the same H100, 15:19 UTC, 58 s (docs/perf-notes.md run 61).
# Planned in session 46 (2026-12-06): right after s47e.sh on its machine (build/ holds
# exp/overhang-col's f73f974 tool, build-before/ main's baa1bc1 tool): s47a.sh's one case past
# +-1% (add-bwd bf16 M=16384 misaligned H=4096, the branch 1.5% faster) again, with misaligned
# 1024, 2048 and 8192 beside it and the 16-bit bwd, ABBA, 4 rounds, each run bounded at 40 s.
. reports/gpu-calls/planned/prelude.sh
machine
scripts/ab-time.sh $R/ab -b main=build-before/rmsnorm-bench -b col=build/rmsnorm-bench -r 4 -T 40 \
  -c '--op bwd,add-bwd --kernel row-vector --dtype bf16 --M 16384 --H 1024,2048,4096,8192 --layout misaligned' >$R/ab.log 2>&1
echo "ab rc=$? $(el)"
head -40 $R/ab/summary.txt
tar cJf "$OUT/r.tar.xz" -C /tmp r

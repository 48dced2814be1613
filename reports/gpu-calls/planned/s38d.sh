#!/usr/bin/env bash
# Call D, planned in session 37 (2026-12-05; no device was lent then; renamed from C in session 38), right after A, B or C
# (main's build/ left on the machine): perf-notes run 55, branch exp/s37-add-late (f54f8f3), the
# knob RB_X_ADD=K on bf16's held add rows (bit 1 s stored late beside y, bit 2 plain stores, bit 4
# two vectors a thread). .gpu/exp-add.tar.xz holds the branch's tool (build-exp/; stamped
# 8fc18bc-dirty: built from f54f8f3's tree just before that commit). Checked first
# (every K over the held rows, validated), then timed ABBA against main, two rounds.
set -uo pipefail
# Files in /tmp/r, back as one tar at the end (a call returns 8 files at most; session 39).
R=/tmp/r
mkdir -p $R
T0=$(date +%s)
el() { echo "+$(( $(date +%s) - T0 ))s"; }
tar xJf .gpu/exp-add.tar.xz || exit 9
build-exp/rmsnorm-bench --version
build/rmsnorm-bench --version || { echo "main's build is not on the machine"; exit 8; }
CASES='--op add --kernel auto --dtype bf16 --M 4096,16384 --H 2048,4096,8192'
for k in 1 2 3 4 5 6 7; do
  RB_X_ADD=$k timeout 60 build-exp/rmsnorm-bench $CASES --quiet --out $R/check-k$k > $R/check-k$k.log 2>&1
  echo "K=$k check rc=$? $(grep -h Totals $R/check-k$k/report.md) $(el)"
done
b=(-b main=build/rmsnorm-bench)
tags=(x late plain late-plain two two-late two-plain all)  # K's bits by name (a tag ends in a letter)
for k in 1 2 3 4 5 6 7; do b+=(-b "${tags[$k]}=env RB_X_ADD=$k build-exp/rmsnorm-bench"); done
scripts/ab-time.sh $R/ab "${b[@]}" -T 100 -c "$CASES" > $R/ab.log 2>&1
echo "ab rc=$? $(el)"; head -120 $R/ab/summary.txt
echo "all done $(el)"
tar cJf $OUT/r.tar.xz -C /tmp r

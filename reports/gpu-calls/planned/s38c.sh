#!/usr/bin/env bash
# Call C, planned in session 38 (2026-12-05; no device was lent). It needs main's build/ and
# d280f13's tool in build-before/: the two bundles together pass a call's 64 MiB carry, so it
# runs right after a call that carried .gpu/bundle.tar.xz (planned/s42a.sh, session 41), on the
# same warm machine, and carries .gpu/before.tar.xz itself (unpacked when build-before/ is gone):
#  1. alone: the default sweep's add rows of chunked and auto (M 1 and 16384, checked and timed),
#     which replace theirs in reports/baselines/h200.csv (run 53 changed the M=16384 add
#     launches), and compare of the baseline before against the one after;
#  2. alone: run 54's timing, d280f13 against main, ABBA, 2 rounds (H=16384 left out of the
#     prediction's cases for the time left).
set -uo pipefail
# Files in /tmp/r, back as one tar at the end (a call returns 8 files at most; session 39).
R=/tmp/r
mkdir -p $R
T0=$(date +%s)
el() { echo "+$(( $(date +%s) - T0 ))s"; }
build/rmsnorm-bench --version || tar xJf .gpu/bundle.tar.xz ||
  { echo "main's build is not on the machine: run this right after s42a.sh"; exit 8; }
build-before/rmsnorm-bench --version || tar xJf .gpu/before.tar.xz || exit 8
build-before/rmsnorm-bench --version || exit 8
timeout 240 build/rmsnorm-bench --op add --kernel chunked,auto --quiet --out $R/add > $R/add.log 2>&1
echo "add rows rc=$? $(el)"; grep -h Totals $R/add/report.md
build/rmsnorm-bench merge --update reports/baselines/h200.csv $R/add/results.csv -o $R/h200.csv
echo "merge rc=$?"
build/rmsnorm-bench compare reports/baselines/h200.csv $R/h200.csv --md $R/compare.md > $R/compare.log 2>&1
echo "compare rc=$?"; tail -5 $R/compare.log
scripts/ab-time.sh $R/ab -b before=build-before/rmsnorm-bench -b rounds=build/rmsnorm-bench -T 150 \
  -c '--op fwd,add,bwd --kernel naive,chunked,auto --dtype bf16,fp32 --M 1,16384 --H 1024,4096,65536' > $R/ab.log 2>&1
echo "ab rc=$? $(el)"; head -150 $R/ab/summary.txt
echo "all done $(el)"
tar cJf $OUT/r.tar.xz -C /tmp r

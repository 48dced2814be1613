#!/usr/bin/env bash
# Call C, planned in session 38 (2026-12-05; no device was lent). It needs main's build/ and
# d280f13's tool in build-before/: the two bundles together pass a call's 64 MiB carry, so it
# runs right after a call that carried .gpu/bundle.tar.xz (`s40a.sh all`, session 42's first), on
# the same warm machine, and carries .gpu/before.tar.xz itself (unpacked when build-before/ is gone):
#  1. alone: the default sweep's add rows of chunked and auto (M 1 and 16384, checked and timed),
#     which replace theirs in reports/baselines/h200.csv (run 53 changed the M=16384 add
#     launches), and compare of the baseline before against the one after;
#  2. alone: run 54's timing, d280f13 against main, ABBA, 2 rounds (H=16384 left out of the
#     prediction's cases for the time left).
. reports/gpu-calls/planned/prelude.sh
build/rmsnorm-bench --version >/dev/null || { echo "main's build is not on the machine: run this right after s40a.sh"; exit 8; }
unpack build-before .gpu/before.tar.xz
build-before/rmsnorm-bench --version || exit 8
machine
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

#!/usr/bin/env bash
# Planned in session 40 (2026-12-05): what is left of session 38's call B (planned/s38b.sh) after
# s40a.sh, s40b.sh and s40c.sh ran. It carries .gpu/bundle.tar.xz (main's build, unpacked when
# the machine does not hold build/) and .gpu/before.tar.xz (d280f13's tool as build-before/):
#  1. the sanitizer passes not yet run on main's code: racecheck over the sansweep's main sweep
#     (s40b.sh cut it at 110 s after 1475 of 1800 cases, no hazard printed) and its rows sweep,
#     synccheck over both, initcheck over the rows sweep (memcheck over both and initcheck over
#     the main sweep came back clean in s40a.sh and s40b.sh);
#  2. beside them, the backward of fp32 M=1 H=2^28 through d280f13 (s40c.sh's cut left it out):
#     expected to fail the way its forward and add did;
#  3. beside them, gpu-check's step `wide` on the preset as session 40 widened it (fp32 H=4096 and bf16
#     H=4097 beside bf16 H=4096: three times s40b.sh's 20 cases, fp32's twice the bytes; expect
#     200-250 s on an H100, up to 34 GiB of device memory a case). Needs a bundle of a head at or
#     after that change.
set -uo pipefail
R=/tmp/r
mkdir -p $R
T0=$(date +%s)
el() { echo "+$(( $(date +%s) - T0 ))s"; }
build/rmsnorm-bench --version 2>/dev/null || tar xJf .gpu/bundle.tar.xz || exit 9
tar xJf .gpu/before.tar.xz || exit 9
build/rmsnorm-bench --version
build-before/rmsnorm-bench --version
SANITIZER_TOOLS=racecheck SANITIZER_TIMEOUT=260 STEPS=sansweep scripts/gpu-check.sh $R/sa >$R/sa.log 2>&1 &
(SANITIZER_TOOLS=synccheck SANITIZER_TIMEOUT=170 STEPS=sansweep scripts/gpu-check.sh $R/sb >$R/sb.log 2>&1
 SANITIZER_TOOLS=initcheck SANITIZER_TIMEOUT=170 SANSWEEP_ARGS= STEPS=sansweep scripts/gpu-check.sh $R/sc >$R/sc.log 2>&1) &
(timeout 200 build-before/rmsnorm-bench --op bwd --kernel naive,chunked --dtype fp32 --M 1 --H 268435456 \
  --no-time --quiet --out $R/long-before >$R/long-before.log 2>&1
 echo "d280f13 long rows bwd rc=$? $(el)" >$R/long-before.rc) &
STEPS=wide WIDE_TIMEOUT=330 scripts/gpu-check.sh $R/wd >$R/wd.log 2>&1
echo "wide rc=$? $(el)"; grep -h "wide tensors" $R/wd/summary.txt
grep -h "^WIDE\|^MUTANT\|FAILED" $R/wd/wide-tests.log | cut -c1-200 | head -70
wait
cat $R/long-before.rc
python3 - $R/long-before/results.csv <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(' ', r['op'], r['kernel'], r['eps'], r['status'], r['max_rel_err'], r['reason'][:120])
PY
for d in sa sb sc; do echo "== $d"; grep -h "steps\|sanitizers over" $R/$d/summary.txt; done
echo "all done $(el)"
tar cJf $OUT/r.tar.xz -C /tmp r

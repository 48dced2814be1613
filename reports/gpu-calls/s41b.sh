#!/usr/bin/env bash
# Ran in session 41 (2026-12-06 01:03-01:11 UTC, 462 s, the same H100 warm after s41a.sh) as
# `bash reports/gpu-calls/s41b.sh`, carrying .gpu/before.tar.xz. The GPU-test step was cut at its
# 460 s (LIMIT=500) with 110 of 112 tests passed, 0 failed: d280f13's long row beside it shared
# the GPU. The two unfinished, mutant_saved_rms and mutant_dw_partial_overwrite, passed alone in
# s41c.sh. d280f13's backward at fp32 M=1 H=2^28: 3 cases finished before its 200 s, 3 pass
# (max_rel_err 6.4e-7 to 7.0e-7), not the failure predicted. Results in reports/gpu-check.txt.
# Planned in session 41 (2026-12-06), right after s41a.sh on the same warm machine (main's build/
# left there by s41a.sh; it carries .gpu/before.tar.xz, d280f13's tool as build-before/, and the
# bundle is unpacked only when build/ is gone):
#  1. `s40a.sh all` on main's head: the GPU-test step of scripts/gpu-check.sh (every GPU test but
#     the wide one, the 26 mutants, the plugin tests) with memcheck's sansweep beside it, the GPU
#     check the project asks for after GPU-facing commits (3b5ebf3, 5324d05, a6c9490);
#  2. beside it, the backward of fp32 M=1 H=2^28 through d280f13 (s40c.sh's cut left it out;
#     s41a.sh's carry could not hold it): expected to fail the way its forward and add did.
set -uo pipefail
R=/tmp/r
mkdir -p $R
T0=$(date +%s)
el() { echo "+$(( $(date +%s) - T0 ))s"; }
tar xJf .gpu/before.tar.xz || exit 9
build-before/rmsnorm-bench --version
(timeout 200 build-before/rmsnorm-bench --op bwd --kernel naive,chunked --dtype fp32 --M 1 --H 268435456 \
  --no-time --quiet --out $R/long-before >$R/long-before.log 2>&1
 echo "d280f13 long rows bwd rc=$? $(el)" >$R/long-before.rc) &
LIMIT=${LIMIT:-500} bash reports/gpu-calls/s40a.sh all
wait
cat $R/long-before.rc
python3 - $R/long-before/results.csv <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(' ', r['op'], r['kernel'], r['eps'], r['status'], r['max_rel_err'], r['reason'][:120])
PY
echo "all done $(el)"
tar cJf $OUT/long.tar.xz -C /tmp r

#!/usr/bin/env bash
# Ran in session 51 as `bash reports/gpu-calls/planned/s50b.sh` right after s50a.sh (same warm
# H100, ending 03:10 UTC, 111 s): the 7 unfinished (five mutants, DwRepeatable Backward/0 and
# /1), 7 shards: gpu_tests rc=0 passed=7 failed=0; mutants_caught=5/5.
# Planned in session 50 (2026-12-06): right after s50a.sh, on the same warm machine (it keeps
# /tmp and build/ for 30 s between calls), the GPU tests that s50a's 480 s step left
# unfinished, in shards of their own (as s48b.sh did for s48a.sh), the plugin tests left out
# (s50a ran them beside its shards). The unfinished tests are those s50a's gpu-check.sh named
# in gpu-unfinished.txt; s50a's files move to /tmp/r50a first, since the prelude empties
# /tmp/r. Bounded inside 600 s, tar last.
set -uo pipefail
if [ -f /tmp/r/gc/gpu-unfinished.txt ]; then rm -rf /tmp/r50a && mv /tmp/r /tmp/r50a; fi
[ -f /tmp/r50a/gc/gpu-unfinished.txt ] || { echo "no s50a.sh GPU-test step on this machine"; exit 9; }
. reports/gpu-calls/planned/prelude.sh
machine
rerun_unfinished /tmp/r50a/gc/gpu-unfinished.txt 520  # its bound 520 s (timeout 540; ran with 550)
tar cJf "$OUT/r.tar.xz" -C /tmp r

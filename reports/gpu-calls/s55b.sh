#!/usr/bin/env bash
# Session 55 (2026-12-07 15:05-15:06 UTC, 56 s, warm after s55a.sh, on the 114 s of device time
# left): the four GPU tests s55a.sh left unfinished (its gpu-unfinished.txt, kept in /tmp by the
# warm machine), bounded at 55 s: rc=124, none ended (mutant_dw_partial_overwrite,
# mutant_dw_wrong_axis, mutant_no_correction, mutant_saved_as_rms; 150-200 s each on an H100 by
# reports/gpu-test-times.txt). Run as one command line, written here as it ran.
cp /tmp/r/gc/gpu-unfinished.txt /tmp/u.txt
. reports/gpu-calls/planned/prelude.sh
machine
rerun_unfinished /tmp/u.txt 55
tar cJf "$OUT/r.tar.xz" -C /tmp r

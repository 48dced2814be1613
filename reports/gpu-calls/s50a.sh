#!/usr/bin/env bash
# Ran in session 51 as `bash reports/gpu-calls/planned/s50a.sh` (the session's first start,
# naming nvidia-h100-x1: NVIDIA H100 80GB HBM3, driver 580.159.04), 2026-12-07 02:59-03:08 UTC,
# 545 s, carrying .gpu/bundle.tar.xz (a clean clone's build of 20e3c16, c43fc7e's tool as
# build-before/, 56.8 MB: the wheels left out, see scripts/pack-gpu.sh): the `same` step ran out
# of its 60 s (rc=124; s51a.sh ran it again with 180 s: 22464 rows, 0 differing keys); GPU
# tests rc=124 passed=109 failed=0 unfinished=7 (s50b.sh ran them), mutants 21/26 in the step,
# plugin mutants caught (288 and 720 of 1320). Results in reports/gpu-check.txt (20e3c16).
# Planned in session 49 (2026-12-06, 95 s of device time left): the GPU check of main's head
# after ca1f3af's (reports/gpu-check.txt). What changed on the GPU side since is the harness's
# plan keeping (perf-notes run 62: e08a47e GPU-run on an H100 by s49d.sh and s49e.sh; its last
# commit, plan_for no longer checking the problem again, not GPU-run) and, session 50, a
# provider's refusal kept for the problem like a plan (6776a09, with its GPU test
# Plans.RefusedOncePerProblemAcrossTheInputs). Any card (say which),
# first of the planned calls; carries .gpu/bundle.tar.xz: a clean clone's build of the head
# with c43fc7e's tool (the code before run 62) as build-before/ (scripts/pack-gpu.sh).
# Bounded inside 600 s, tar last:
#  1. gpu-check.sh's `same` step: the built-in strategies over four distributions, the head's
#     rows against c43fc7e's (s49e.sh: 22464 rows, 0 differing keys), 60 s;
#  2. the GPU-test step (every kernel's validation sweep, every mutant, Plans.*), 16 shards,
#     480 s; tests left unfinished go in a call of their own, as s48b.sh did.
. reports/gpu-calls/planned/prelude.sh
rm -rf build build-before && tar xJf .gpu/bundle.tar.xz || exit 9
machine
STEP_TIMEOUT=55 STEPS=same timeout 60 scripts/gpu-check.sh $R/same >$R/same.log 2>&1
echo "same rc=$? $(el)"; grep -h "same results" $R/same/summary.txt
# GC_S bounds the GPU-test step (480 s by default; less where the device time left is less);
# GC_FILTER (a gtest filter) and GC_SHARDS (16) narrow it.
GC_S=${GC_S:-480}
GTEST_FILTER=${GC_FILTER:-*} GPU_SHARDS=${GC_SHARDS:-16} STEP_TIMEOUT=$GC_S STEPS=gpu timeout $((GC_S + 20)) \
  scripts/gpu-check.sh $R/gc >$R/gc.log 2>&1
echo "gpu tests rc=$? $(el)"; head -8 $R/gc/summary.txt
tar cJf "$OUT/r.tar.xz" -C /tmp r

#!/usr/bin/env bash
# Session 49 (2026-12-06 22:02 UTC), right after s49d.sh on the same warm H100 (its build/ and
# build-before/ from .gpu/plan-reuse.tar.xz, branch exp/plan-reuse at e08a47e), typed as one
# command line in the device time left (97 s): gpu-check.sh's `same` step (the built-in
# strategies over four distributions, the branch's tool against main's) and the cudnn_fwd
# validation sweep (GPU test) alone, one process, cut at 50 s. Output: the call's own lines
# (no $OUT files).
build/rmsnorm-bench --version
STEP_TIMEOUT=55 STEPS=same timeout 65 scripts/gpu-check.sh /tmp/same >/tmp/same.log 2>&1
echo "same rc=$?"; grep -h "same results" /tmp/same/summary.txt
t=$(date +%s)
timeout 50 build/tests/rb_gpu_tests --gtest_filter='AllKernels/KernelPasses.ValidationSweep/cudnn_fwd' >/tmp/f.log 2>&1
echo "cudnn_fwd rc=$? $(( $(date +%s) - t )) s"; grep -h "^\[  FAILED\|^\[       OK \]" /tmp/f.log

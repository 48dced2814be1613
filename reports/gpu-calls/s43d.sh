#!/usr/bin/env bash
# Ran in session 43 (2026-12-06 06:20-06:25 UTC, 248 s, NVIDIA H100 80GB HBM3, driver
# 580.159.04) as `bash reports/gpu-calls/s43d.sh` (one command line then, this file its text),
# carrying .gpu/bundle.tar.xz (98d8691's build; unpacked only where the machine lacked build/):
# the 8 GPU tests that `s40a.sh all` left unfinished at its step's 480 s, as 8 shards balanced
# by reports/gpu-test-times.txt, without the plugin tests (they had passed). Results in
# reports/gpu-check.txt (98d8691).
set -uo pipefail
build/rmsnorm-bench --version 2>/dev/null || tar xJf .gpu/bundle.tar.xz
build/rmsnorm-bench --version
nvidia-smi --query-gpu=name --format=csv,noheader
GTEST_FILTER='AllKernels/KernelPasses.ValidationSweep/cublas_bwd:AllKernels/KernelPasses.ValidationSweep/cudnn_bwd:AllMutants/MutantCaught.ByValidationSweep/mutant_dw_partial_overwrite:AllMutants/MutantCaught.ByValidationSweep/mutant_dw_storage_accum:AllMutants/MutantCaught.ByValidationSweep/mutant_dw_unnormalized:AllMutants/MutantCaught.ByValidationSweep/mutant_mean_sub:AllMutants/MutantCaught.ByValidationSweep/mutant_residual_storage_dtype:AllMutants/MutantCaught.ByValidationSweep/mutant_saved_rms' \
  PLUGIN_TESTS=0 GPU_SHARDS=8 STEP_TIMEOUT=520 STEPS=gpu timeout 550 scripts/gpu-check.sh /tmp/gc2 >/tmp/gc2.log 2>&1
echo rc=$?
head -6 /tmp/gc2/summary.txt
grep -h "^MUTANT" /tmp/gc2/gpu-tests.*.log | cut -c1-170
grep -h "^\[  FAILED\|^\[       OK \]" /tmp/gc2/gpu-tests.*.log | grep -v MutantCaught
mv /tmp/gc2.log /tmp/gc2/
tar cJf "$OUT/gc2.tar.xz" -C /tmp gc2

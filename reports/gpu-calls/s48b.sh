#!/usr/bin/env bash
# Ran in session 48 right after s48a.sh (same warm H100, ending 17:39 UTC, 278 s): 7 passed,
# mutants 4/4. The 7 GPU tests that s48a.sh's GPU-test step left unfinished at its
# 480 s, as 7 shards balanced by reports/gpu-test-times.txt, without the plugin tests (they
# passed in s48a). Same warm machine and build/ as s48a (ca1f3af's clean-clone bundle; unpacked
# again only where the machine lacks build/). Results in reports/gpu-check.txt (ca1f3af).
set -uo pipefail
build/rmsnorm-bench --version 2>/dev/null || tar xJf .gpu/bundle.tar.xz
build/rmsnorm-bench --version
nvidia-smi --query-gpu=name --format=csv,noheader
GTEST_FILTER='AllKernels/KernelPasses.ValidationSweep/cudnn_bwd:AllKernels/KernelPasses.ValidationSweep/cudnn_fwd:AllMutants/MutantCaught.ByValidationSweep/mutant_dw_storage_accum:AllMutants/MutantCaught.ByValidationSweep/mutant_dw_unnormalized:AllMutants/MutantCaught.ByValidationSweep/mutant_residual_storage_dtype:AllMutants/MutantCaught.ByValidationSweep/mutant_saved_rms:Bwd/DwRepeatable.Backward/1' \
  PLUGIN_TESTS=0 GPU_SHARDS=7 STEP_TIMEOUT=520 STEPS=gpu timeout 550 scripts/gpu-check.sh /tmp/gc2 >/tmp/gc2.log 2>&1
echo rc=$?
head -6 /tmp/gc2/summary.txt
grep -h "^MUTANT" /tmp/gc2/gpu-tests.*.log | cut -c1-170
grep -h "^\[  FAILED\|^\[       OK \]" /tmp/gc2/gpu-tests.*.log | grep -v MutantCaught
mv /tmp/gc2.log /tmp/gc2/
tar cJf "$OUT/gc2.tar.xz" -C /tmp gc2

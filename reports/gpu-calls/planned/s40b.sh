#!/usr/bin/env bash
# Call A2, planned in session 39 (2026-12-05), right after s40a.sh, carrying .gpu/bundle.tar.xz
# too (unpacked only when the machine no longer holds s40a.sh's build/): every GPU test but
# the kernels' validation sweeps and the wide tensors (call B's), the 26 numerics mutants
# (their counts at M=19 and at many rows), LongRows (fp32 H=2^28), ReadOnlyInputs, DeviceFault,
# Chunked, Backward, cuDNN, cuBLAS among them; not the plugin tests (A1 ran them). Logs as in
# s40a.sh.
set -uo pipefail
T0=$(date +%s)
build/rmsnorm-bench --version 2>/dev/null || tar xJf .gpu/bundle.tar.xz || exit 9
build/rmsnorm-bench --version
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p /tmp/gc
GTEST_FILTER='-AllKernels/*' PLUGIN_TESTS=0 GPU_SHARDS=16 STEP_TIMEOUT=480 STEPS=gpu \
  timeout 520 scripts/gpu-check.sh /tmp/gc >/tmp/gc.log 2>&1
echo "step rc=$? +$(($(date +%s) - T0))s"
cat /tmp/gc/summary.txt 2>/dev/null | head -5
grep -h "^MUTANT" /tmp/gc/gpu-tests.*.log | cut -c1-160
grep -h "^\[  FAILED\|^\[       OK \]" /tmp/gc/gpu-tests.*.log | grep -v MutantCaught | sed 's/^\[ *\([A-Z]*\) *\] /\1 /' | sort | head -60
mv /tmp/gc.log /tmp/gc/
tar cJf $OUT/gc-b.tar.xz -C /tmp gc
echo "all done +$(($(date +%s) - T0))s"

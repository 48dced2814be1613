#!/usr/bin/env bash
# Planned in session 50 (2026-12-07, 344 s of device time left after 14 failed starts): s50a.sh
# cut to what its change touches, for a call of about 300 s. Any card (say which). The harness's
# plan and refusal keeping (runs 62 and 63) acts on every kernel's prepare, and the vendor and
# plugin kernels are the ones whose prepare does work or refuses, so:
#  1. gpu-check.sh's `same` step: the built-in strategies over four distributions, the head's
#     rows against c43fc7e's (build-before/: the code before run 62), 60 s;
#  2. the GPU tests of the plans, cuDNN and cuBLAS (their validation sweeps, their own tests and
#     the bisect against cuDNN), and the plugin tests beside them, 8 shards, GC_S (180) seconds.
# Carries .gpu/bundle.tar.xz as s50a.sh does. Tar last.
. reports/gpu-calls/planned/prelude.sh
rm -rf build build-before && tar xJf .gpu/bundle.tar.xz || exit 9
machine
STEP_TIMEOUT=55 STEPS=same timeout 60 scripts/gpu-check.sh $R/same >$R/same.log 2>&1
echo "same rc=$? $(el)"; grep -h "same results" $R/same/summary.txt
GC_S=${GC_S:-180}
GTEST_FILTER='Plans.*:Cudnn*:Cublas*:H/BisectCudnn.*:Shapes/CublasFwd.*:AllKernels/KernelPasses.ValidationSweep/cudnn_*:AllKernels/KernelPasses.ValidationSweep/cublas_*' \
  GPU_SHARDS=8 STEP_TIMEOUT=$GC_S STEPS=gpu timeout $((GC_S + 20)) scripts/gpu-check.sh $R/gc >$R/gc.log 2>&1
echo "gpu tests rc=$? $(el)"; head -8 $R/gc/summary.txt
grep -h "^\[  FAILED\|^\[       OK \] \(Plans\|AllKernels\)" $R/gc/gpu-tests.*.log
grep -h "tests ran\|PASSED\|FAILED  \] [0-9]" $R/gc/gpu-tests.plugin.log
tar cJf "$OUT/r.tar.xz" -C /tmp r

#!/usr/bin/env bash
# Planned in session 50 (2026-12-07, 344 s of device time left after 14 failed starts): s50a.sh
# cut to what its change touches, for a call of about 300 s. Any card (say which). The harness's
# plan and refusal keeping (runs 62 and 63) acts on every kernel's prepare, and the vendor and
# plugin kernels are the ones whose prepare does work or refuses, so s50a's two steps with its
# GPU-test step narrowed:
#  1. gpu-check.sh's `same` step: the built-in strategies over four distributions, the head's
#     rows against c43fc7e's (build-before/: the code before run 62), 60 s;
#  2. the GPU tests of the plans, cuDNN and cuBLAS (their validation sweeps, their own tests and
#     the bisect against cuDNN), and the plugin tests beside them, 8 shards, GC_S (180) seconds.
# Carries .gpu/bundle.tar.xz as s50a.sh does.
GC_FILTER='Plans.*:Cudnn*:Cublas*:H/BisectCudnn.*:Shapes/CublasFwd.*:AllKernels/KernelPasses.ValidationSweep/cudnn_*:AllKernels/KernelPasses.ValidationSweep/cublas_*' \
  GC_SHARDS=8 GC_S=${GC_S:-180} exec bash reports/gpu-calls/planned/s50a.sh

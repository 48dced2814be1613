// Shared by the GPU tests: RB_REQUIRE_GPU() skips the calling test, naming the CUDA error,
// when no device is usable (so the GPU test binaries pass, all skipped, on a CI machine).
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>

#include "harness/device.h"

#define RB_REQUIRE_GPU()                                                                  \
  do {                                                                                    \
    std::string why_;                                                                     \
    if (!::rb::cuda_device_available(&why_)) GTEST_SKIP() << "no CUDA device: " << why_; \
  } while (0)

// A test that writes inputs or an output's poison with cudaMemcpy / cudaMemset (the legacy
// default stream) and launches on a cudaStreamNonBlocking stream calls this in between: such
// a stream does not wait for the legacy stream, and those calls may return with the work
// still in flight (a pageable copy's DMA, a memset). Without it a late poison can land on
// outputs already written: the likely cause of the cuDNN tests' all-NaN y and dx beside a
// correct rrms (2026-12-01; docs/perf-notes.md run 23).
inline cudaError_t legacy_stream_done() { return cudaDeviceSynchronize(); }

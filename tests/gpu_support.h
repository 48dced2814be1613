// Shared by the GPU tests: RB_REQUIRE_GPU() skips the calling test, naming the CUDA error,
// when no device is usable (so the GPU test binaries pass, all skipped, on a CI machine).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "harness/device.h"

#define RB_REQUIRE_GPU()                                                                  \
  do {                                                                                    \
    std::string why_;                                                                     \
    if (!::rb::cuda_device_available(&why_)) GTEST_SKIP() << "no CUDA device: " << why_; \
  } while (0)

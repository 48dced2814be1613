// Vendor providers: kernels composed from NVIDIA's libraries, registered beside the
// built-in strategies through the same interface (kernels/registry.h).
//   cudnn   cuDNN's RMSNorm through the cuDNN frontend graph API; libcudnn is loaded at run
//           time, so one binary runs where cuDNN is missing (its cases skip, saying why).
//   cublas  the row reduction done by cuBLAS with fp32 compute, then one scaling kernel: a
//           second, independent accumulation order.
#pragma once

#include <string>
#include <vector>

#include "kernels/registry.h"

namespace rb::vendor {

// Run-time settings of the vendor providers, set by the CLI before any case runs.
struct VendorOptions {
  std::string cudnn_lib;            // --cudnn-lib: path of libcudnn.so.9 ("" = the loader's search)
  bool cudnn_all_engines = false;   // --cudnn-engines all: one row per engine configuration
};
void set_options(const VendorOptions& o);
const VendorOptions& options();

// The kernels each provider registers (a kernel whose library or headers are missing is
// still listed, with KernelInfo::unavailable saying why).
std::vector<KernelInfo> cudnn_kernels();
std::vector<KernelInfo> cublas_kernels();

}  // namespace rb::vendor

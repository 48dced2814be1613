// The kernel registry: every strategy (and every mutant) by name, with what it supports and
// how to launch it. A case a kernel cannot run is reported through supports() with a reason;
// the harness records it as a skip and never substitutes another kernel.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kernels/types.h"

namespace rb {

struct DtypeCombo {
  DType x;  // x and y
  DType w;
};

// What a launch reports back: the strategy that actually ran (auto names its pick).
struct LaunchInfo {
  std::string picked;
};

using SupportsFn = std::function<std::optional<std::string>(const FwdArgs&)>;
using FwdLaunchFn = std::function<cudaError_t(const FwdArgs&, cudaStream_t, LaunchInfo*)>;

struct KernelInfo {
  std::string name;
  std::string description;
  bool mutant = false;
  std::vector<Op> ops;
  std::vector<DtypeCombo> dtypes;
  std::int64_t min_H = 1;
  std::function<std::int64_t(DType)> max_H;  // inclusive, per x dtype
  std::string alignment;   // human-readable alignment needs
  SupportsFn supports;     // full check, includes dtype and H range
  FwdLaunchFn launch_fwd;
};

// All kernels, real ones first, mutants last.
const std::vector<KernelInfo>& kernel_registry();
const KernelInfo* find_kernel(const std::string& name);

// Checks shared by every kernel: dtype combo listed, H in range, strides >= H.
std::optional<std::string> check_common(const KernelInfo& k, const FwdArgs& a);

}  // namespace rb

// The kernel registry: every strategy (and every mutant) by name, with the ops it implements,
// what it supports and how to launch it. A case a kernel cannot run is reported through
// check_common() with a reason; the harness records it as a skip and never substitutes
// another kernel.
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

// What a case asks of a kernel, before any buffer exists.
struct Problem {
  Op op = Op::fwd;
  std::int64_t M = 0;
  std::int64_t H = 0;
  std::int64_t stride = 0;  // smallest row stride of the case's 2-D tensors, elements
  DType x = DType::f32;     // x (and y, dy)
  DType w = DType::f32;
  DType r = DType::f32;  // residual stream; ignored by ops without one
};

// What a launch reports back: the strategy that actually ran (auto names its pick).
struct LaunchInfo {
  std::string picked;
};

using SupportsFn = std::function<std::optional<std::string>(const Problem&)>;
using FwdLaunchFn = std::function<cudaError_t(const FwdArgs&, cudaStream_t, LaunchInfo*)>;
using AddLaunchFn = std::function<cudaError_t(const AddArgs&, cudaStream_t, LaunchInfo*)>;
using BwdLaunchFn = std::function<cudaError_t(const BwdArgs&, cudaStream_t, LaunchInfo*)>;
using WorkspaceFn = std::function<std::size_t(const BwdArgs&)>;

struct KernelInfo {
  std::string name;
  std::string description;
  bool mutant = false;
  std::vector<Op> ops;
  std::vector<DtypeCombo> dtypes;  // (x, w); ops with a residual stream take r = x or fp32
  std::int64_t min_H = 1;
  std::function<std::int64_t(const Problem&)> max_H;  // inclusive, by op and dtypes
  std::string alignment;                              // human-readable alignment needs
  SupportsFn supports;        // kernel-specific limits beyond the common checks (H ceiling)
  FwdLaunchFn launch_fwd;     // set iff ops holds fwd
  AddLaunchFn launch_add;     // set iff ops holds add
  BwdLaunchFn launch_bwd;     // set iff ops holds bwd / add-bwd (add-bwd: ds_out non-null)
  WorkspaceFn bwd_workspace;  // bytes of scratch a bwd launch needs (null = none)

  bool has_op(Op op) const;
};

// All kernels, real ones first, mutants last.
const std::vector<KernelInfo>& kernel_registry();
const KernelInfo* find_kernel(const std::string& name);

// Checks shared by every kernel: op implemented, dtype combo listed, H in range, strides
// >= H; then the kernel's own supports().
std::optional<std::string> check_common(const KernelInfo& k, const Problem& p);
// The forward's problem, for callers holding launch arguments, and its check.
Problem fwd_problem(const FwdArgs& a);
inline std::optional<std::string> check_common(const KernelInfo& k, const FwdArgs& a) {
  return check_common(k, fwd_problem(a));
}

}  // namespace rb

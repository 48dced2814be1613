// The kernel registry: every kernel, whoever provides it (built-in strategies, vendor
// libraries, user plugins, deliberately wrong mutants), behind one interface.
//
// A kernel states what it can run (ops, dtype combos, H range, alignment) and, for a case it
// accepts, prepares a Plan: the prepared state of one problem (a cuDNN graph, a cuBLAS
// handle, a launch configuration), its workspace size and its launch on a stream. The
// harness keeps a plan (or a refusal) for the cases of one problem, so timing measures the
// launch alone. A case a kernel cannot run is reported with a reason (check_common(), or
// Unsupported thrown by prepare with the provider's own message); the harness records it as
// a skip and never substitutes another kernel.
#pragma once

#include <cuda_runtime_api.h>

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "kernels/types.h"

namespace rb {

struct DtypeCombo {
  DType x;  // x and y
  DType w;
};

// What a case asks of a kernel, before any buffer exists: everything a plan may depend on.
// eps is not part of it (a launch argument), nor are the pointers.
struct Problem {
  Op op = Op::fwd;
  std::int64_t M = 0;
  std::int64_t H = 0;
  std::int64_t stride = 0;  // row stride of every 2-D tensor of the case, elements
  DType x = DType::f32;     // x (and y, dy)
  DType w = DType::f32;
  DType r = DType::f32;  // residual stream; ignored by ops without one
  // Bytes every base pointer is aligned to (16 at most): 16 for the contiguous and strided
  // layouts, the element size for a base offset by one element.
  std::int64_t base_align = 16;
  Convention conv = Convention::fp32;
  DType y = DType::f32;  // y's dtype (fwd, add): x's, or fp8

  // A problem in one expression; a negative stride means packed rows (stride H). y defaults
  // to x's dtype.
  static Problem of(Op op, std::int64_t M, std::int64_t H, DType x, DType w, DType r, std::int64_t stride = -1,
                    std::int64_t base_align = 16, Convention conv = Convention::fp32,
                    std::optional<DType> y = std::nullopt) {
    return {op, M, H, stride < 0 ? H : stride, x, w, r, base_align, conv, y.value_or(x)};
  }
};

// The launch arguments of one op family, as a plan receives them.
using LaunchArgs = std::variant<FwdArgs, AddArgs, BwdArgs>;

// A kernel prepared for one Problem. Owned by the harness for as long as it runs that case.
class Plan {
 public:
  virtual ~Plan() = default;
  // Bytes of device scratch every launch needs; the harness allocates it and passes it in
  // the arguments' workspace fields.
  virtual std::size_t workspace_bytes() const { return 0; }
  // The strategy or engine that runs (auto's pick, cuDNN's engine); the CSV's `picked`.
  virtual std::string picked() const = 0;
  // All of the op's work on stream s. Returns the launch error (no synchronisation).
  virtual cudaError_t launch(const LaunchArgs& args, cudaStream_t s) = 0;
};

// Thrown by prepare() for a case the provider refuses (its own message): recorded as skip.
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using SupportsFn = std::function<std::optional<std::string>(const Problem&)>;
// Prepares a plan for a problem that passed check_common. `variant` names one of the
// kernel's variants() ("" = the kernel's own choice). Throws Unsupported to skip.
using PrepareFn = std::function<std::unique_ptr<Plan>(const Problem&, const std::string& variant)>;
// The variants a case can be run under, one row each (cuDNN engine configurations with
// --cudnn-engines all); empty = just the kernel's own choice. Depends on the problem alone:
// the harness asks once per problem, like prepare.
using VariantsFn = std::function<std::vector<std::string>(const Problem&)>;

struct KernelInfo {
  std::string name;
  std::string provider = "builtin";  // builtin | cudnn | cublas | plugin
  std::string version;               // the provider's version ("" for built-ins: the tool's)
  std::string description;
  bool mutant = false;
  // A fault-injection mutant: it faults on the device (the context is lost, the run ends
  // with exit 4). Never part of a validation sweep's catch count.
  bool device_fault = false;
  // Non-empty: listed, but it cannot run in this build or on this machine (why, and how to
  // fix it). Every case of it is a skip with this reason; the default sweep leaves it out.
  std::string unavailable;
  std::vector<Op> ops;
  std::vector<DtypeCombo> dtypes;  // (x, w); ops with a residual stream take r = x or fp32
  std::int64_t min_H = 1;
  std::function<std::int64_t(const Problem&)> max_H;  // inclusive, by op and dtypes
  std::string alignment;                              // human-readable alignment needs
  // The conventions it implements (core/names.h) and whether y may be fp8 (fwd, add).
  std::vector<Convention> conventions{Convention::fp32};
  bool fp8_output = false;
  SupportsFn supports;  // kernel-specific limits beyond the common checks (null = none)
  VariantsFn variants;  // null = none
  PrepareFn prepare;

  bool has_op(Op op) const;
  // The name a variant's rows carry in the CSV's kernel column: "cudnn@eng3".
  std::string variant_name(const std::string& variant) const {
    return variant.empty() ? name : name + "@" + variant;
  }
};

// All kernels: built-ins, then vendor kernels, mutants, then plugins in load order. A
// deque, so a pointer from find_kernel stays valid when a plugin registers more.
const std::deque<KernelInfo>& kernel_registry();
// By name; a variant name ("cudnn@eng3") finds its kernel, with the variant in *variant.
const KernelInfo* find_kernel(const std::string& name, std::string* variant = nullptr);
// Adds a kernel (a plugin's). Throws std::invalid_argument on a duplicate name.
void register_kernel(KernelInfo k);

// Checks shared by every kernel: available, op implemented, dtype combo listed, convention
// and y dtype implemented, H in range, strides >= H; then the kernel's own supports().
std::optional<std::string> check_common(const KernelInfo& k, const Problem& p);
// The forward's problem, for callers holding launch arguments, and its check.
Problem fwd_problem(const FwdArgs& a);
inline std::optional<std::string> check_common(const KernelInfo& k, const FwdArgs& a) {
  return check_common(k, fwd_problem(a));
}

// Launch arguments with null pointers for a problem (for sizes computed from arguments).
FwdArgs fwd_args_for(const Problem& p);
AddArgs add_args_for(const Problem& p);
BwdArgs bwd_args_for(const Problem& p);

}  // namespace rb

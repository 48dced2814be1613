#include "kernels/registry.h"

#include "kernels/launchers.h"

namespace rb {
namespace {

using kern::FwdBug;

const std::vector<DtypeCombo> kFwdCombos = {{DType::f32, DType::f32},   {DType::f16, DType::f16},
                                            {DType::f16, DType::f32},   {DType::bf16, DType::bf16},
                                            {DType::bf16, DType::f32}};
constexpr std::int64_t kAnyH = std::int64_t{1} << 40;

std::string combo_list() {
  std::string s;
  for (const auto& c : kFwdCombos) {
    if (!s.empty()) s += ", ";
    s += std::string(dtype_name(c.x)) + "/" + std::string(dtype_name(c.w));
  }
  return s;
}

// A kernel whose limits are the common ones plus an H ceiling per x dtype.
KernelInfo make(std::string name, std::string desc, std::int64_t (*max_h)(DType),
                cudaError_t (*launch)(const FwdArgs&, cudaStream_t)) {
  KernelInfo k;
  k.name = std::move(name);
  k.description = std::move(desc);
  k.ops = {Op::fwd};
  k.dtypes = kFwdCombos;
  k.max_H = [max_h](DType x) { return max_h ? max_h(x) : kAnyH; };
  k.alignment = "any (per-row scalar peel to 16 B)";
  k.supports = [max_h, self = k.name](const FwdArgs& a) -> std::optional<std::string> {
    if (max_h && a.H > max_h(a.xdtype))
      return self + " holds rows up to H=" + std::to_string(max_h(a.xdtype)) + " in " +
             std::string(dtype_name(a.xdtype)) + "; H=" + std::to_string(a.H) + " is larger";
    return std::nullopt;
  };
  k.launch_fwd = [launch, self = k.name](const FwdArgs& a, cudaStream_t s, LaunchInfo* info) {
    if (info) info->picked = self;
    return launch(a, s);
  };
  return k;
}

KernelInfo make_mutant(std::string name, std::string desc, FwdBug bug) {
  KernelInfo k = make(std::move(name), std::move(desc), nullptr, nullptr);
  k.mutant = true;
  k.alignment = "any (scalar)";
  k.launch_fwd = [bug, self = k.name](const FwdArgs& a, cudaStream_t s, LaunchInfo* info) {
    if (info) info->picked = self;
    return kern::launch_fwd_mutant(bug, a, s);
  };
  return k;
}

std::vector<KernelInfo> build() {
  std::vector<KernelInfo> r;
  r.push_back(make("naive", "block per row, scalar loads, two passes over global memory: the baseline",
                   nullptr, kern::launch_fwd_naive));
  r.push_back(make("warp-row", "4-32 lanes per row, several rows per block, row in registers: small H",
                   kern::warp_row_max_H, kern::launch_fwd_warp_row));
  r.push_back(make("row-vector", "block per row, row in registers, 16 B vectors, one pass: mid H",
                   kern::row_vector_max_H, kern::launch_fwd_row_vector));
  r.push_back(make("chunked", "block per row, two vectorized passes in chunks: any H, for large H",
                   nullptr, kern::launch_fwd_chunked));
  KernelInfo a = make("auto", "picks warp-row / row-vector / chunked by (dtype, H)", nullptr, nullptr);
  a.launch_fwd = [](const FwdArgs& args, cudaStream_t s, LaunchInfo* info) -> cudaError_t {
    const std::string pick = kern::auto_pick_fwd(args);
    if (info) info->picked = pick;
    const KernelInfo* k = find_kernel(pick);
    return k ? k->launch_fwd(args, s, nullptr) : cudaErrorInvalidValue;
  };
  r.push_back(std::move(a));

  r.push_back(make_mutant("mutant-half-accum", "squares accumulated in the storage dtype", FwdBug::half_accum));
  r.push_back(make_mutant("mutant-eps-outside", "eps added outside the sqrt: 1/(sqrt(ms)+eps)", FwdBug::eps_outside));
  r.push_back(make_mutant("mutant-weight-row-offset", "weight indexed by (col + row) % H", FwdBug::weight_row_offset));
  r.push_back(make_mutant("mutant-tail-store", "tail store unmasked: writes up to H rounded to 8", FwdBug::tail_store));
  r.push_back(make_mutant("mutant-tail-load", "tail load unmasked: sums squares up to H rounded to 8", FwdBug::tail_load));
  r.push_back(make_mutant("mutant-mean-sub", "subtracts the row mean (a LayerNorm without bias)", FwdBug::mean_sub));
  r.push_back(make_mutant("mutant-pad-denominator", "mean divided by H rounded up to 8", FwdBug::pad_denominator));
  return r;
}

}  // namespace

const std::vector<KernelInfo>& kernel_registry() {
  static const std::vector<KernelInfo> r = build();
  return r;
}

const KernelInfo* find_kernel(const std::string& name) {
  for (const auto& k : kernel_registry())
    if (k.name == name) return &k;
  return nullptr;
}

std::optional<std::string> check_common(const KernelInfo& k, const FwdArgs& a) {
  bool combo = false;
  for (const auto& c : k.dtypes) combo = combo || (c.x == a.xdtype && c.w == a.wdtype);
  if (!combo)
    return k.name + " has no " + std::string(dtype_name(a.xdtype)) + "/" + std::string(dtype_name(a.wdtype)) +
           " (x/w) variant; it has " + combo_list();
  if (a.H < k.min_H) return "H=" + std::to_string(a.H) + " is below " + k.name + "'s minimum " + std::to_string(k.min_H);
  if (a.x_stride < a.H || a.y_stride < a.H) return "row stride smaller than H";
  if (a.M > 0x7fffffff) return "M above 2^31-1 rows (grid limit)";
  if (k.supports) return k.supports(a);
  return std::nullopt;
}

}  // namespace rb

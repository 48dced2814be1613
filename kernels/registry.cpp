#include "kernels/registry.h"

#include <algorithm>
#include <initializer_list>
#include <tuple>

#include "kernels/launchers.h"

namespace rb {
namespace {

using kern::AddBug;
using kern::BwdBug;
using kern::FwdBug;

const std::vector<DtypeCombo> kCombos = {{DType::f32, DType::f32},
                                         {DType::f16, DType::f16},
                                         {DType::f16, DType::f32},
                                         {DType::bf16, DType::bf16},
                                         {DType::bf16, DType::f32}};
constexpr std::int64_t kAnyH = std::int64_t{1} << 40;
const std::vector<Op> kAllOps = {Op::fwd, Op::bwd, Op::add, Op::add_bwd};

std::string combo_list() {
  std::string s;
  for (const auto& c : kCombos) {
    if (!s.empty()) s += ", ";
    s += std::string(dtype_name(c.x)) + "/" + std::string(dtype_name(c.w));
  }
  return s;
}

using MaxHFn = std::function<std::int64_t(const Problem&)>;

// A kernel with the given ops and an H ceiling (null = any H); launchers are attached after.
KernelInfo make(std::string name, std::string desc, std::vector<Op> ops, MaxHFn max_h) {
  KernelInfo k;
  k.name = std::move(name);
  k.description = std::move(desc);
  k.ops = std::move(ops);
  k.dtypes = kCombos;
  k.max_H = max_h ? max_h : MaxHFn([](const Problem&) { return kAnyH; });
  k.alignment = "any (per-row scalar peel to 16 B)";
  k.supports = [max_H = k.max_H, self = k.name](const Problem& p) -> std::optional<std::string> {
    const std::int64_t m = max_H(p);
    if (p.H > m)
      return self + " holds rows up to H=" + std::to_string(m) + " for " + std::string(op_name(p.op)) +
             " in " + std::string(dtype_name(p.x)) +
             (has_residual(p.op) ? "/r " + std::string(dtype_name(p.r)) : "") + "; H=" + std::to_string(p.H) +
             " is larger";
    return std::nullopt;
  };
  return k;
}

// Wraps plain launchers into registry launchers that report the kernel's own name.
template <class Args>
std::function<cudaError_t(const Args&, cudaStream_t, LaunchInfo*)> named(
    std::string self, std::function<cudaError_t(const Args&, cudaStream_t)> launch) {
  return
      [self = std::move(self), launch = std::move(launch)](const Args& a, cudaStream_t s, LaunchInfo* info) {
        if (info) info->picked = self;
        return launch(a, s);
      };
}

// auto: looks its pick up in the registry and launches it.
template <class Args>
std::function<cudaError_t(const Args&, cudaStream_t, LaunchInfo*)> dispatcher(
    std::string (*pick)(const Args&),
    std::function<cudaError_t(const Args&, cudaStream_t, LaunchInfo*)> KernelInfo::*launch) {
  return [pick, launch](const Args& a, cudaStream_t s, LaunchInfo* info) -> cudaError_t {
    const std::string name = pick(a);
    if (info) info->picked = name;
    const KernelInfo* k = find_kernel(name);
    return k && k->*launch ? (k->*launch)(a, s, nullptr) : cudaErrorInvalidValue;
  };
}

// Calls f(name, description, bug) for each row of a mutant table.
template <class Bug, class F>
void for_each_mutant(std::initializer_list<std::tuple<const char*, const char*, Bug>> rows, F f) {
  for (const auto& [name, desc, bug] : rows) f(name, desc, bug);
}

std::vector<KernelInfo> build() {
  std::vector<KernelInfo> r;

  // A strategy implementing every op: its launchers and the backward's workspace size.
  const auto every_op =
      [&](const char* name, const char* desc, MaxHFn max_h, cudaError_t (*fwd)(const FwdArgs&, cudaStream_t),
          cudaError_t (*add)(const AddArgs&, cudaStream_t), cudaError_t (*bwd)(const BwdArgs&, cudaStream_t),
          std::size_t (*ws)(const BwdArgs&)) {
        KernelInfo k = make(name, desc, kAllOps, std::move(max_h));
        k.launch_fwd = named<FwdArgs>(name, fwd);
        k.launch_add = named<AddArgs>(name, add);
        k.launch_bwd = named<BwdArgs>(name, bwd);
        k.bwd_workspace = ws;
        r.push_back(std::move(k));
      };

  every_op("naive",
           "block per row, scalar loads, two passes over global memory: the baseline "
           "(bwd: dw by one thread per column over all rows)",
           nullptr, kern::launch_fwd_naive, kern::launch_add_naive, kern::launch_bwd_naive,
           kern::bwd_naive_workspace_bytes);

  KernelInfo warp = make("warp-row", "4-32 lanes per row, several rows per block, row in registers: small H",
                         {Op::fwd}, [](const Problem& p) { return kern::warp_row_max_H(p.x); });
  warp.launch_fwd = named<FwdArgs>("warp-row", kern::launch_fwd_warp_row);
  r.push_back(std::move(warp));

  every_op(
      "row-vector",
      "row in registers, 16 B vectors, one read of each input: mid H (bwd: persistent grid, "
      "dw partials in registers)",
      [](const Problem& p) -> std::int64_t {
        switch (p.op) {
          case Op::fwd:
            return kern::row_vector_max_H(p.x);
          case Op::add:
            return kern::add_row_vector_max_H(p.x, p.r);
          case Op::bwd:
            return kern::bwd_row_vector_max_H(p.x);
          case Op::add_bwd:
            return kern::bwd_row_vector_max_H(p.r);
        }
        return 0;
      },
      kern::launch_fwd_row_vector, kern::launch_add_row_vector, kern::launch_bwd_row_vector,
      kern::bwd_row_vector_workspace_bytes);

  every_op("chunked",
           "two vectorized passes over the row in chunks: any H, for large H (bwd: dw partials in "
           "shared memory)",
           nullptr, kern::launch_fwd_chunked, kern::launch_add_chunked, kern::launch_bwd_chunked,
           kern::bwd_chunked_workspace_bytes);

  KernelInfo a =
      make("auto", "picks a strategy by (op, dtype, H) from measured crossovers", kAllOps, nullptr);
  a.launch_fwd = dispatcher<FwdArgs>(kern::auto_pick_fwd, &KernelInfo::launch_fwd);
  a.launch_add = dispatcher<AddArgs>(kern::auto_pick_add, &KernelInfo::launch_add);
  a.launch_bwd = dispatcher<BwdArgs>(kern::auto_pick_bwd, &KernelInfo::launch_bwd);
  a.bwd_workspace = [](const BwdArgs& args) -> std::size_t {
    const KernelInfo* k = find_kernel(kern::auto_pick_bwd(args));
    return k && k->bwd_workspace ? k->bwd_workspace(args) : 0;
  };
  r.push_back(std::move(a));

  // Mutants: scalar, any H, the ops of their bug's family. The reference is valid until the
  // next push; the caller sets the launcher at once.
  const auto mutant = [&](const char* name, const char* desc, std::vector<Op> ops) -> KernelInfo& {
    KernelInfo k = make(name, desc, std::move(ops), nullptr);
    k.mutant = true;
    k.alignment = "any (scalar)";
    r.push_back(std::move(k));
    return r.back();
  };
  for_each_mutant(
      {std::tuple{"mutant-half-accum", "squares accumulated in the storage dtype", FwdBug::half_accum},
       std::tuple{"mutant-eps-outside", "eps added outside the sqrt: 1/(sqrt(ms)+eps)", FwdBug::eps_outside},
       std::tuple{"mutant-weight-row-offset", "weight indexed by (col + row) % H", FwdBug::weight_row_offset},
       std::tuple{"mutant-tail-store", "tail store unmasked: writes up to H rounded to 8",
                  FwdBug::tail_store},
       std::tuple{"mutant-tail-load", "tail load unmasked: sums squares up to H rounded to 8",
                  FwdBug::tail_load},
       std::tuple{"mutant-mean-sub", "subtracts the row mean (a LayerNorm without bias)", FwdBug::mean_sub},
       std::tuple{"mutant-pad-denominator", "mean divided by H rounded up to 8", FwdBug::pad_denominator}},
      [&](const char* name, const char* desc, FwdBug bug) {
        mutant(name, desc, {Op::fwd}).launch_fwd = named<FwdArgs>(
            name, [bug](const FwdArgs& a, cudaStream_t s) { return kern::launch_fwd_mutant(bug, a, s); });
      });
  for_each_mutant(
      {std::tuple{"mutant-residual-storage-dtype",
                  "residual sum x + r rounded to x's storage dtype before use",
                  AddBug::residual_storage_dtype},
       std::tuple{"mutant-saved-rms", "saves rms = sqrt(mean(s^2) + eps) where rrms belongs",
                  AddBug::saved_rms}},
      [&](const char* name, const char* desc, AddBug bug) {
        mutant(name, desc, {Op::add}).launch_add = named<AddArgs>(
            name, [bug](const AddArgs& a, cudaStream_t s) { return kern::launch_add_mutant(bug, a, s); });
      });
  for_each_mutant(
      {std::tuple{"mutant-dw-wrong-axis", "dw reduced over columns: each row's sum broadcast to every column",
                  BwdBug::dw_wrong_axis},
       std::tuple{"mutant-no-correction", "dx = rrms * dy * w: the correction term dropped",
                  BwdBug::no_correction},
       std::tuple{"mutant-dw-storage-accum", "dw accumulated in w's storage dtype", BwdBug::dw_storage_accum},
       std::tuple{"mutant-saved-as-rms", "the saved rrms taken for rms (1 / saved used in dx and dw)",
                  BwdBug::saved_as_rms}},
      [&](const char* name, const char* desc, BwdBug bug) {
        KernelInfo& k = mutant(name, desc, {Op::bwd, Op::add_bwd});
        k.launch_bwd = named<BwdArgs>(
            name, [bug](const BwdArgs& a, cudaStream_t s) { return kern::launch_bwd_mutant(bug, a, s); });
        k.bwd_workspace = kern::bwd_mutant_workspace_bytes;
      });
  return r;
}

}  // namespace

bool KernelInfo::has_op(Op op) const { return std::find(ops.begin(), ops.end(), op) != ops.end(); }

const std::vector<KernelInfo>& kernel_registry() {
  static const std::vector<KernelInfo> r = build();
  return r;
}

const KernelInfo* find_kernel(const std::string& name) {
  for (const auto& k : kernel_registry())
    if (k.name == name) return &k;
  return nullptr;
}

Problem fwd_problem(const FwdArgs& a) {
  Problem p;
  p.op = Op::fwd;
  p.M = a.M;
  p.H = a.H;
  p.stride = std::min(a.x_stride, a.y_stride);
  p.x = a.xdtype;
  p.w = a.wdtype;
  p.r = a.xdtype;
  return p;
}

std::optional<std::string> check_common(const KernelInfo& k, const Problem& p) {
  if (!k.has_op(p.op)) {
    std::string ops;
    for (Op op : k.ops) ops += (ops.empty() ? "" : ", ") + std::string(op_name(op));
    return k.name + " does not implement " + std::string(op_name(p.op)) + " (it has " + ops + ")";
  }
  bool combo = false;
  for (const auto& c : k.dtypes) combo = combo || (c.x == p.x && c.w == p.w);
  if (!combo)
    return k.name + " has no " + std::string(dtype_name(p.x)) + "/" + std::string(dtype_name(p.w)) +
           " (x/w) variant; it has " + combo_list();
  if (has_residual(p.op) && p.r != p.x && p.r != DType::f32)
    return "residual dtype " + std::string(dtype_name(p.r)) + " with x " + std::string(dtype_name(p.x)) +
           ": the residual stream is x's dtype or fp32";
  if (p.H < k.min_H)
    return "H=" + std::to_string(p.H) + " is below " + k.name + "'s minimum " + std::to_string(k.min_H);
  if (p.stride < p.H) return "row stride smaller than H";
  if (p.M > 0x7fffffff) return "M above 2^31-1 rows (grid limit)";
  if (k.supports) return k.supports(p);
  return std::nullopt;
}

}  // namespace rb

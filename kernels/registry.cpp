#include "kernels/registry.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <initializer_list>
#include <tuple>

#include "kernels/launchers.h"
#include "kernels/vendor/vendor.h"

namespace rb {
namespace {

using kern::AddBug;
using kern::BwdBug;
using kern::FwdBug;
using kern::Fp8Bug;

const std::vector<DtypeCombo> kCombos = {{DType::f32, DType::f32},
                                         {DType::f16, DType::f16},
                                         {DType::f16, DType::f32},
                                         {DType::bf16, DType::bf16},
                                         {DType::bf16, DType::f32}};
constexpr std::int64_t kAnyH = std::int64_t{1} << 40;
const std::vector<Op> kAllOps = {Op::fwd, Op::bwd, Op::add, Op::add_bwd};

// A built-in strategy (or auto): every convention, and an fp8 y for fwd and add, through the
// epilogue every built-in kernel is templated on (kernels/epilogue.cuh). Mutants keep
// KernelInfo's defaults (fp32, no fp8 output).
KernelInfo& every_convention(KernelInfo& k) {
  k.conventions = {Convention::fp32, Convention::llama, Convention::gemma, Convention::zero_centered};
  k.fp8_output = true;
  return k;
}

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

// A plan of a built-in kernel: the same launcher for every problem of an op family, its
// workspace sized from the problem once. `Args` is the op family's argument struct.
template <class Args>
class LauncherPlan final : public Plan {
 public:
  using Launch = std::function<cudaError_t(const Args&, cudaStream_t)>;
  LauncherPlan(std::string picked, Launch launch, std::size_t workspace)
      : picked_(std::move(picked)), launch_(std::move(launch)), workspace_(workspace) {}
  std::size_t workspace_bytes() const override { return workspace_; }
  std::string picked() const override { return picked_; }
  cudaError_t launch(const LaunchArgs& args, cudaStream_t s) override {
    const Args* a = std::get_if<Args>(&args);
    return a ? launch_(*a, s) : cudaErrorInvalidValue;
  }

 private:
  std::string picked_;
  Launch launch_;
  std::size_t workspace_;
};

// The launchers of one built-in strategy, per op family (null where it lacks the family).
struct Launchers {
  std::function<cudaError_t(const FwdArgs&, cudaStream_t)> fwd;
  std::function<cudaError_t(const AddArgs&, cudaStream_t)> add;
  std::function<cudaError_t(const BwdArgs&, cudaStream_t)> bwd;
  std::size_t (*bwd_workspace)(const BwdArgs&) = nullptr;
};

// prepare() of a built-in kernel: binds the launcher of the problem's op family.
PrepareFn launcher_prepare(std::string self, Launchers l) {
  return [self = std::move(self), l = std::move(l)](const Problem& p, const std::string&) -> std::unique_ptr<Plan> {
    switch (p.op) {
      case Op::fwd:
        return std::make_unique<LauncherPlan<FwdArgs>>(self, l.fwd, 0);
      case Op::add:
        return std::make_unique<LauncherPlan<AddArgs>>(self, l.add, 0);
      case Op::bwd:
      case Op::add_bwd:
        break;
    }
    return std::make_unique<LauncherPlan<BwdArgs>>(self, l.bwd, l.bwd_workspace ? l.bwd_workspace(bwd_args_for(p)) : 0);
  };
}

// Calls f(name, description, bug) for each row of a mutant table.
template <class Bug, class F>
void for_each_mutant(std::initializer_list<std::tuple<const char*, const char*, Bug>> rows, F f) {
  for (const auto& [name, desc, bug] : rows) f(name, desc, bug);
}

// auto's plan: the plan of the strategy it picked, which it holds and runs.
class AutoPlan final : public Plan {
 public:
  explicit AutoPlan(std::unique_ptr<Plan> inner) : inner_(std::move(inner)) {}
  std::size_t workspace_bytes() const override { return inner_->workspace_bytes(); }
  std::string picked() const override { return inner_->picked(); }
  cudaError_t launch(const LaunchArgs& args, cudaStream_t s) override { return inner_->launch(args, s); }

 private:
  std::unique_ptr<Plan> inner_;
};

std::deque<KernelInfo> build() {
  std::deque<KernelInfo> r;

  // A strategy implementing every op: its launchers and the backward's workspace size.
  const auto every_op =
      [&](const char* name, const char* desc, MaxHFn max_h, cudaError_t (*fwd)(const FwdArgs&, cudaStream_t),
          cudaError_t (*add)(const AddArgs&, cudaStream_t), cudaError_t (*bwd)(const BwdArgs&, cudaStream_t),
          std::size_t (*ws)(const BwdArgs&)) {
        KernelInfo k = make(name, desc, kAllOps, std::move(max_h));
        k.prepare = launcher_prepare(name, Launchers{fwd, add, bwd, ws});
        r.push_back(std::move(every_convention(k)));
      };

  every_op("naive",
           "block per row, scalar loads, two passes over global memory: the baseline "
           "(bwd: dw by one thread per column over all rows)",
           nullptr, kern::launch_fwd_naive, kern::launch_add_naive, kern::launch_bwd_naive,
           kern::bwd_naive_workspace_bytes);

  KernelInfo warp = make("warp-row", "4-32 lanes per row, several rows per block, row in registers: small H",
                         {Op::fwd}, [](const Problem& p) { return kern::warp_row_max_H(p.x); });
  warp.prepare = launcher_prepare("warp-row", Launchers{kern::launch_fwd_warp_row, nullptr, nullptr, nullptr});
  r.push_back(std::move(every_convention(warp)));

  every_op(
      "row-vector",
      "row in registers, 16 B vectors, one read of each input: mid H (bwd: persistent grid, "
      "dw partials in registers; rows past a block's as slices of a thread-block cluster on sm_90+)",
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

  KernelInfo staged = make(
      "staged",
      "persistent grid, rows streamed through a shared-memory ring by cp.async (16 B at any row phase), "
      "dw partials in registers: bwd",
      {Op::bwd, Op::add_bwd},
      [](const Problem& p) { return kern::bwd_row_vector_block_H(p.op == Op::add_bwd ? p.r : p.x); });
  staged.prepare = launcher_prepare(
      "staged", Launchers{nullptr, nullptr, kern::launch_bwd_staged, kern::bwd_staged_workspace_bytes});
  r.push_back(std::move(every_convention(staged)));

  every_op("chunked",
           "two vectorized passes over the row in chunks: any H, for large H (bwd: dw partials in "
           "shared memory)",
           nullptr, kern::launch_fwd_chunked, kern::launch_add_chunked, kern::launch_bwd_chunked,
           kern::bwd_chunked_workspace_bytes);

  // auto holds the strategies it picks among (deque elements keep their addresses).
  std::array<const KernelInfo*, 5> strategies{};
  for (const KernelInfo& k : r)
    for (kern::Strategy st : {kern::Strategy::naive, kern::Strategy::warp_row, kern::Strategy::row_vector,
                              kern::Strategy::chunked, kern::Strategy::staged})
      if (k.name == kern::strategy_name(st)) strategies[static_cast<std::size_t>(st)] = &k;
  KernelInfo a = make("auto", "picks a strategy by (op, dtype, H, row alignment) from measured crossovers",
                      kAllOps, nullptr);
  a.prepare = [strategies](const Problem& p, const std::string&) -> std::unique_ptr<Plan> {
    const KernelInfo* k = strategies[static_cast<std::size_t>(kern::auto_pick(p))];
    return std::make_unique<AutoPlan>(k->prepare(p, ""));
  };
  r.push_back(std::move(every_convention(a)));

  for (std::vector<KernelInfo> vendor : {vendor::cudnn_kernels(), vendor::cublas_kernels()})
    for (KernelInfo& k : vendor) r.push_back(std::move(k));

  // Mutants: scalar, any H, the ops of their bug's family. The reference is valid until the
  // next push; the caller sets the launcher at once.
  const auto mutant = [&](const char* name, const char* desc, std::vector<Op> ops) -> KernelInfo& {
    KernelInfo k = make(name, desc, std::move(ops), nullptr);
    k.mutant = true;
    k.alignment = "any (scalar)";
    r.push_back(std::move(k));
    return r.back();
  };
  const auto fwd_mutant = [&](const char* name, const char* desc, FwdBug bug) -> KernelInfo& {
    KernelInfo& k = mutant(name, desc, {Op::fwd});
    k.prepare = launcher_prepare(
        name, Launchers{[bug](const FwdArgs& a, cudaStream_t s) { return kern::launch_fwd_mutant(bug, a, s); },
                        nullptr, nullptr, nullptr});
    return k;
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
       std::tuple{"mutant-pad-denominator", "mean divided by H rounded up to 8", FwdBug::pad_denominator},
       std::tuple{"mutant-no-eps", "eps forgotten: rsqrt(ms)", FwdBug::no_eps},
       std::tuple{"mutant-stride-ignored", "rows addressed at row * H, the row stride ignored",
                  FwdBug::stride_ignored},
       std::tuple{"mutant-warp-sum-only", "each warp normalises by its own warp's sum of squares",
                  FwdBug::warp_sum_only},
       std::tuple{"mutant-one-row-a-block", "a persistent grid's loop over rows forgotten: each block runs one row",
                  FwdBug::one_row_a_block},
       std::tuple{"mutant-offset-32bit", "row offsets in 32 bits: past 4 GiB a row aliases an earlier one",
                  FwdBug::offset_32bit}},
      fwd_mutant);
  // fp8 y: right under y in x's dtype, so their fp8 outputs are what they add.
  for_each_mutant(
      {std::tuple{"mutant-amax-plain-store", "fp8 y: each block's amax stored plainly, the last block wins",
                  Fp8Bug::amax_plain_store},
       std::tuple{"mutant-amax-after-scale", "fp8 y: amax taken of y * scale, not of y", Fp8Bug::amax_after_scale},
       std::tuple{"mutant-fp8-no-saturate", "fp8 y: y * scale converted without saturation (e4m3 NaN past 448)",
                  Fp8Bug::no_saturate}},
      [&](const char* name, const char* desc, Fp8Bug bug) {
        KernelInfo& k = mutant(name, desc, {Op::fwd});
        k.fp8_output = true;
        k.prepare = launcher_prepare(
            name, Launchers{[bug](const FwdArgs& a, cudaStream_t s) { return kern::launch_fp8_mutant(bug, a, s); },
                            nullptr, nullptr, nullptr});
      });
  // Device faults, not numerics bugs: a trap, and a kernel that never finishes.
  for_each_mutant(
      {std::tuple{"mutant-trap", "traps on the device at the last row (a fault, not a numerics bug)", FwdBug::trap},
       std::tuple{"mutant-hang", "never finishes: the last row waits for good (a hang, not a numerics bug)",
                  FwdBug::hang}},
      [&](const char* name, const char* desc, FwdBug bug) { fwd_mutant(name, desc, bug).device_fault = true; });
  for_each_mutant(
      {std::tuple{"mutant-residual-storage-dtype",
                  "residual sum x + r rounded to x's storage dtype before use",
                  AddBug::residual_storage_dtype},
       std::tuple{"mutant-saved-rms", "saves rms = sqrt(mean(s^2) + eps) where rrms belongs",
                  AddBug::saved_rms},
       std::tuple{"mutant-residual-not-updated", "the old residual r stored where x + r belongs",
                  AddBug::residual_not_updated},
       std::tuple{"mutant-norm-of-x", "y normalises x instead of x + r", AddBug::norm_of_x},
       std::tuple{"mutant-residual-in-place", "x + r also written over the input r (an in-place residual update)",
                  AddBug::residual_in_place}},
      [&](const char* name, const char* desc, AddBug bug) {
        mutant(name, desc, {Op::add}).prepare = launcher_prepare(
            name, Launchers{nullptr,
                            [bug](const AddArgs& a, cudaStream_t s) { return kern::launch_add_mutant(bug, a, s); },
                            nullptr, nullptr});
      });
  for_each_mutant(
      {std::tuple{"mutant-dw-wrong-axis", "dw reduced over columns: each row's sum broadcast to every column",
                  BwdBug::dw_wrong_axis},
       std::tuple{"mutant-no-correction", "dx = rrms * dy * w: the correction term dropped",
                  BwdBug::no_correction},
       std::tuple{"mutant-dw-storage-accum", "dw accumulated in w's storage dtype", BwdBug::dw_storage_accum},
       std::tuple{"mutant-saved-as-rms", "the saved rrms taken for rms (1 / saved used in dx and dw)",
                  BwdBug::saved_as_rms},
       std::tuple{"mutant-correction-without-w", "the correction's dot product sum(dy * x), w left out",
                  BwdBug::correction_without_w},
       std::tuple{"mutant-dw-unnormalized", "dw = sum of dy * x, x not normalised by rrms",
                  BwdBug::dw_unnormalized},
       std::tuple{"mutant-dw-partial-overwrite",
                  "each block's dw partial row overwritten by every row it takes (= where += belongs)",
                  BwdBug::dw_partial_overwrite}},
      [&](const char* name, const char* desc, BwdBug bug) {
        mutant(name, desc, {Op::bwd, Op::add_bwd}).prepare = launcher_prepare(
            name, Launchers{nullptr,
                            nullptr,
                            [bug](const BwdArgs& a, cudaStream_t s) { return kern::launch_bwd_mutant(bug, a, s); },
                            kern::bwd_mutant_workspace_bytes});
      });
  return r;
}

}  // namespace

bool KernelInfo::has_op(Op op) const { return std::find(ops.begin(), ops.end(), op) != ops.end(); }

namespace {
std::deque<KernelInfo>& mutable_registry() {
  static std::deque<KernelInfo> r = build();
  return r;
}
}  // namespace

const std::deque<KernelInfo>& kernel_registry() { return mutable_registry(); }

const KernelInfo* find_kernel(const std::string& name, std::string* variant) {
  const std::size_t at = name.find('@');
  const std::string base = at == std::string::npos ? name : name.substr(0, at);
  for (const auto& k : kernel_registry())
    if (k.name == base) {
      if (at != std::string::npos && !k.variants) return nullptr;  // a kernel without variants
      if (variant) *variant = at == std::string::npos ? std::string() : name.substr(at + 1);
      return &k;
    }
  return nullptr;
}

void register_kernel(KernelInfo k) {
  if (k.name.empty() || k.name.find('@') != std::string::npos)
    throw std::invalid_argument("kernel name '" + k.name + "' is empty or holds '@'");
  if (find_kernel(k.name)) throw std::invalid_argument("a kernel named " + k.name + " is already registered");
  if (!k.prepare) throw std::invalid_argument("kernel " + k.name + " has no prepare()");
  mutable_registry().push_back(std::move(k));
}

Problem fwd_problem(const FwdArgs& a) {
  return Problem::of(Op::fwd, a.M, a.H, a.xdtype, a.wdtype, a.xdtype, std::min(a.x_stride, a.y_stride), 16, a.conv,
                     a.ydtype);
}

std::optional<std::string> check_common(const KernelInfo& k, const Problem& p) {
  if (!k.unavailable.empty()) return k.name + " is unavailable: " + k.unavailable;
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
  if (std::find(k.conventions.begin(), k.conventions.end(), p.conv) == k.conventions.end()) {
    std::string have;
    for (Convention c : k.conventions) have += (have.empty() ? "" : ", ") + std::string(convention_name(c));
    return k.name + " does not implement the " + std::string(convention_name(p.conv)) + " convention (it has " +
           have + ")";
  }
  if (is_fp8(p.y) && !k.fp8_output)
    return k.name + " has no fp8 output (y " + std::string(dtype_name(p.y)) + ")";
  if (is_fp8(p.y) && !has_fp8_output(p.op))
    return std::string("an fp8 y is an output of fwd and add only, not ") + std::string(op_name(p.op));
  if (p.H < k.min_H)
    return "H=" + std::to_string(p.H) + " is below " + k.name + "'s minimum " + std::to_string(k.min_H);
  if (p.stride < p.H) return "row stride smaller than H";
  if (p.M > 0x7fffffff) return "M above 2^31-1 rows (grid limit)";
  if (k.supports) return k.supports(p);
  return std::nullopt;
}

}  // namespace rb

namespace rb {

FwdArgs fwd_args_for(const Problem& p) {
  FwdArgs a;
  a.M = p.M;
  a.H = p.H;
  a.x_stride = a.y_stride = p.stride;
  a.xdtype = p.x;
  a.wdtype = p.w;
  a.ydtype = p.y;
  a.conv = p.conv;
  return a;
}

AddArgs add_args_for(const Problem& p) {
  AddArgs a;
  a.M = p.M;
  a.H = p.H;
  a.x_stride = a.r_stride = a.y_stride = a.s_stride = p.stride;
  a.xdtype = p.x;
  a.wdtype = p.w;
  a.rdtype = p.r;
  a.ydtype = p.y;
  a.conv = p.conv;
  return a;
}

BwdArgs bwd_args_for(const Problem& p) {
  BwdArgs a;
  a.M = p.M;
  a.H = p.H;
  a.x_stride = a.dy_stride = a.ds_stride = a.dx_stride = p.stride;
  // add-bwd reads the residual stream s as x and writes dx in its dtype; dy is in x's.
  a.xdtype = p.op == Op::add_bwd ? p.r : p.x;
  a.dydtype = p.x;
  a.wdtype = p.w;
  a.conv = p.conv;
  return a;
}

}  // namespace rb

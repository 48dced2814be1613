#include "harness/case.h"

#include <set>
#include <tuple>

#include "kernels/registry.h"

namespace rb {

std::string_view layout_name(Layout l) {
  switch (l) {
    case Layout::contiguous:
      return "contiguous";
    case Layout::strided:
      return "strided";
    case Layout::misaligned:
      return "misaligned";
  }
  return "?";
}

std::optional<Layout> parse_layout(std::string_view s) {
  for (Layout l : all_layouts())
    if (layout_name(l) == s) return l;
  return std::nullopt;
}

const std::vector<Layout>& all_layouts() {
  static const std::vector<Layout> v{Layout::contiguous, Layout::strided, Layout::misaligned};
  return v;
}

std::int64_t layout_stride(Layout l, std::int64_t H) {
  return l == Layout::strided ? (H + 15) / 16 * 16 + 16 : H;
}

std::int64_t layout_offset(Layout l) { return l == Layout::misaligned ? 1 : 0; }

bool Case::same_data(const Case& o) const {
  return std::tie(op, dtype, wdtype, rdtype, M, H, layout, dist, seed) ==
         std::tie(o.op, o.dtype, o.wdtype, o.rdtype, o.M, o.H, o.layout, o.dist, o.seed);
}

std::vector<Case> expand(const Sweep& s) {
  std::vector<Case> out;
  std::set<decltype(Case{}.key())> seen;
  for (Op op : s.ops)
    for (DType dt : s.dtypes)
      for (const WDtypeChoice& wc : s.wdtypes)
        for (const RDtypeChoice& rc : s.rdtypes)
          for (std::int64_t H : s.Hs)
            for (std::int64_t M : s.Ms)
              for (Layout lay : s.layouts)
                for (Dist d : s.dists)
                  for (double e : s.eps)
                    for (const std::string& k : s.kernels) {
                      // A (kernel, op) pair the kernel does not implement is no case at all
                      // (warp-row has no backward): listing it as a skip in every sweep
                      // would bury the real skips.
                      if (const KernelInfo* ki = find_kernel(k); ki && !ki->has_op(op)) continue;
                      Case c;
                      c.op = op;
                      c.kernel = k;
                      c.dtype = dt;
                      c.wdtype = wc.resolve(dt);
                      c.rdtype = has_residual(op) ? rc.resolve(dt) : dt;
                      c.M = M;
                      c.H = H;
                      c.layout = lay;
                      c.eps = e;
                      c.dist = d;
                      c.seed = s.seed;
                      if (seen.insert(c.key()).second) out.push_back(std::move(c));
                    }
  return out;
}

std::vector<Case> take_shard(const std::vector<Case>& cases, int index, int count) {
  std::vector<Case> out;
  std::int64_t group = -1;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (i == 0 || !cases[i].same_data(cases[i - 1])) ++group;
    if (group % count == index) out.push_back(cases[i]);
  }
  return out;
}

std::vector<std::string> default_kernels() {
  std::vector<std::string> v;
  for (const KernelInfo& k : kernel_registry())
    if (!k.mutant && k.unavailable.empty()) v.push_back(k.name);
  return v;
}

Sweep default_bench_sweep() {
  Sweep s;
  s.kernels = default_kernels();
  s.dtypes = {DType::f32, DType::f16, DType::bf16};
  s.Ms = {1, 16384};
  s.Hs = {128, 1024, 2048, 4096, 4097, 8192, 16384};
  s.eps = {1e-5, 1e-6};
  s.dists = {Dist::normal};
  s.layouts = {Layout::contiguous};
  return s;
}

Sweep validation_sweep(const std::vector<std::string>& kernels) {
  Sweep s;
  s.kernels = kernels;
  s.dtypes = {DType::f32, DType::f16, DType::bf16};
  s.wdtypes = {WDtypeChoice{}, WDtypeChoice{DType::f32}};
  s.rdtypes = {RDtypeChoice{}, RDtypeChoice{DType::f32}};
  s.Ms = {19};
  s.Hs = {1, 3, 127, 128, 1000, 1024, 4096, 4097, 8192, 16384, 65536};
  s.eps = {1e-5};
  s.dists = ref::all_dists();
  s.layouts = all_layouts();
  return s;
}

}  // namespace rb

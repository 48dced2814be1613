#include "harness/case.h"

#include <algorithm>
#include <limits>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "core/unique.h"
#include "kernels/registry.h"

namespace rb {

std::int64_t layout_stride(Layout l, std::int64_t H) {
  // A row too long to pad (too_large refuses such sizes before any byte is counted) keeps the
  // largest int64 for its stride rather than wrap: still >= H, as a record's stride must be.
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  switch (l) {
    case Layout::strided:  // a gap of 16-31 elements: every row at row 0's 16-byte phase
      return H > kMax - 31 ? kMax : (H + 15) / 16 * 16 + 16;
    case Layout::skewed:  // one element more than H: each row one element further off 16 bytes
      return H == kMax ? kMax : H + 1;
    case Layout::contiguous:
    case Layout::misaligned:
      break;
  }
  return H;
}

std::int64_t layout_offset(Layout l) { return l == Layout::misaligned ? 1 : 0; }

std::optional<std::string> too_large(std::int64_t M, std::int64_t H) {
  if (M < 1 || H < 1) return std::nullopt;  // not a size this answers for (the options refuse them)
  // The widest any layout makes these rows: the largest stride and base offset of all of them
  // (today strided's and misaligned's), so a layout added later is bounded too; (M - 1) x
  // stride checked.
  std::int64_t stride = H, offset = 0;
  for (const Layout l : all_layouts()) {
    stride = std::max(stride, layout_stride(l, H));
    offset = std::max(offset, layout_offset(l));
  }
  std::int64_t rows = 0;
  if (!__builtin_mul_overflow(M - 1, stride, &rows) && rows <= kMaxSpanElements - offset - H) return std::nullopt;
  return fmt::format(
      "M={} rows of H={} columns span more than 2^56 elements a matrix (the most whose byte counts fit in 64 "
      "bits)",
      M, H);
}

// The convention and y dtype are part of the data: a weight offset changes the generated
// weight, y's dtype the output buffers, and the reference depends on both.
bool Case::same_data(const Case& o) const {
  return std::tie(op, dtype, wdtype, rdtype, M, H, layout, dist, seed, conv, y8, y_scale) ==
         std::tie(o.op, o.dtype, o.wdtype, o.rdtype, o.M, o.H, o.layout, o.dist, o.seed, o.conv, o.y8, o.y_scale);
}

namespace {

// The sweep's lists without repeats, and per op the kernels that implement it: every loop of
// the expansion then yields distinct cases, so counting is a product and the data groups of
// a shard can be picked without building the others.
struct UniqueSweep {
  std::vector<Op> ops;
  std::vector<DType> dtypes;
  std::vector<std::int64_t> Hs, Ms;
  std::vector<Layout> layouts;
  std::vector<Dist> dists;
  std::vector<double> eps;
  std::vector<std::string> kernels;
  std::vector<Convention> conventions;
  std::vector<YDtypeChoice> ydtypes;
  std::vector<double> y_scales;

  explicit UniqueSweep(const Sweep& s)
      : ops(unique_in_order(s.ops)),
        dtypes(unique_in_order(s.dtypes)),
        Hs(unique_in_order(s.Hs)),
        Ms(unique_in_order(s.Ms)),
        layouts(unique_in_order(s.layouts)),
        dists(unique_in_order(s.dists)),
        eps(unique_in_order(s.eps)),
        kernels(unique_in_order(s.kernels)),
        conventions(unique_in_order(s.conventions)),
        ydtypes(unique_in_order(s.ydtypes)),
        y_scales(unique_in_order(s.y_scales)) {}

  // y dtypes of an op: fwd and add have the choices, the others none (y absent: x's).
  std::vector<YDtypeChoice> ydtypes_for(Op op) const {
    if (!has_fp8_output(op))
      return ydtypes.empty() ? std::vector<YDtypeChoice>{} : std::vector<YDtypeChoice>{YDtypeChoice{}};
    return ydtypes;
  }
  // Scales of a y dtype: only an fp8 y has one (1 otherwise).
  std::vector<double> scales_for(const YDtypeChoice& y) const {
    if (!y) return y_scales.empty() ? std::vector<double>{} : std::vector<double>{1.0};
    return y_scales;
  }
  // (convention, y dtype, scale) triples of an op, in expansion order.
  std::vector<std::tuple<Convention, YDtypeChoice, double>> outputs_for(Op op) const {
    std::vector<std::tuple<Convention, YDtypeChoice, double>> v;
    for (Convention cv : conventions)
      for (const YDtypeChoice& y : ydtypes_for(op))
        for (double sc : scales_for(y)) v.emplace_back(cv, y, sc);
    return v;
  }

  // A (kernel, op) pair the kernel does not implement is no case at all (warp-row has no
  // backward): listing it as a skip in every sweep would bury the real skips.
  std::vector<std::string> kernels_for(Op op) const {
    std::vector<std::string> out;
    for (const std::string& k : kernels)
      if (const KernelInfo* ki = find_kernel(k); !ki || ki->has_op(op)) out.push_back(k);
    return out;
  }
};

// The weight (or residual) dtypes the choices resolve to for x dtype dt, without repeats.
std::vector<DType> resolved(const std::vector<WDtypeChoice>& choices, DType dt) {
  std::vector<DType> out;
  for (const WDtypeChoice& c : choices)
    if (std::find(out.begin(), out.end(), c.resolve(dt)) == out.end()) out.push_back(c.resolve(dt));
  return out;
}

std::vector<DType> residual_dtypes(const Sweep& s, Op op, DType dt) {
  // An op without a residual stream has one: x's dtype, whatever --rdtype says.
  if (!has_residual(op)) return s.rdtypes.empty() ? std::vector<DType>{} : std::vector<DType>{dt};
  return resolved(s.rdtypes, dt);
}

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<std::uint64_t>::max() : r;
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<std::uint64_t>::max() : r;
}

}  // namespace

std::vector<Op> ops_with_cases(const Sweep& s) {
  const UniqueSweep u(s);
  std::vector<Op> out;
  for (Op op : u.ops)
    if (!u.kernels_for(op).empty()) out.push_back(op);
  return out;
}

std::uint64_t count_cases(const Sweep& s) {
  const UniqueSweep u(s);
  std::uint64_t total = 0;
  for (Op op : u.ops) {
    const std::uint64_t kernels = u.kernels_for(op).size();
    for (DType dt : u.dtypes) {
      std::uint64_t n = saturating_mul(resolved(s.wdtypes, dt).size(), residual_dtypes(s, op, dt).size());
      n = saturating_mul(n, u.outputs_for(op).size());
      for (std::uint64_t f : {std::uint64_t(u.Hs.size()), std::uint64_t(u.Ms.size()),
                              std::uint64_t(u.layouts.size()), std::uint64_t(u.dists.size()), std::uint64_t(u.eps.size()), kernels})
        n = saturating_mul(n, f);
      total = saturating_add(total, n);
    }
  }
  return total;
}

std::uint64_t count_cases(const std::vector<Sweep>& sweeps) {
  std::uint64_t total = 0;
  for (const Sweep& s : sweeps) total = saturating_add(total, count_cases(s));
  return total;
}

namespace {

// Appends the cases of the data groups of s that fall in the shard; `group` counts the data
// groups so far (one per (op, dtypes, convention, y, H, M, layout, dist)), across sweeps.
void expand_into(const Sweep& s, int shard_index, int shard_count, std::int64_t& group, std::vector<Case>& out) {
  const UniqueSweep u(s);
  if (u.eps.empty()) return;
  for (Op op : u.ops) {
    const std::vector<std::string> kernels = u.kernels_for(op);
    if (kernels.empty()) continue;
    const auto outputs = u.outputs_for(op);
    for (DType dt : u.dtypes)
      for (DType wd : resolved(s.wdtypes, dt))
        for (DType rd : residual_dtypes(s, op, dt))
          for (const auto& [conv, y8, y_scale] : outputs)
            for (std::int64_t H : u.Hs)
              for (std::int64_t M : u.Ms)
                for (Layout lay : u.layouts)
                  for (Dist d : u.dists) {
                    if (++group % shard_count != shard_index) continue;
                    for (double e : u.eps)
                      for (const std::string& k : kernels) {
                        Case c;
                        c.op = op;
                        c.kernel = k;
                        c.dtype = dt;
                        c.wdtype = wd;
                        c.rdtype = rd;
                        c.M = M;
                        c.H = H;
                        c.layout = lay;
                        c.eps = e;
                        c.dist = d;
                        c.seed = s.seed;
                        c.conv = conv;
                        c.y8 = y8;
                        c.y_scale = y_scale;
                        out.push_back(std::move(c));
                      }
                  }
  }
}

}  // namespace

std::vector<Case> expand(const Sweep& s) { return expand(s, 0, 1); }

std::vector<Case> expand(const Sweep& s, int shard_index, int shard_count) {
  std::vector<Case> out;
  std::int64_t group = -1;
  expand_into(s, shard_index, shard_count, group, out);
  return out;
}

std::vector<Case> expand(const std::vector<Sweep>& sweeps, int shard_index, int shard_count) {
  std::vector<Case> out;
  std::int64_t group = -1;
  for (const Sweep& s : sweeps) expand_into(s, shard_index, shard_count, group, out);
  // Sweeps overridden alike (--convention fp32 on the validation preset) can repeat a case.
  std::set<decltype(Case{}.key())> seen;
  out.erase(std::remove_if(out.begin(), out.end(), [&](const Case& c) { return !seen.insert(c.key()).second; }),
            out.end());
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

std::vector<Sweep> validation_sweeps(const std::vector<std::string>& kernels) {
  std::vector<Sweep> v{validation_sweep(kernels)};
  // Conventions: every op, dtype combo and layout; H = 1 (a row of one), 127 (head and tail
  // without a vector body in 16-bit) and 4097 (a body with a one-element tail); normal rows
  // and offset ones (a non-zero mean: the 1 + w rounding and the normalised value's rounding
  // both show in every element).
  Sweep conv = validation_sweep(kernels);
  conv.conventions = {Convention::llama, Convention::gemma, Convention::zero_centered};
  conv.Hs = {1, 127, 4097};
  conv.dists = {Dist::normal, Dist::offset};
  v.push_back(conv);
  v.push_back(validation_fp8_sweep(kernels));
  for (Sweep& rows : validation_rows_sweeps(kernels)) v.push_back(std::move(rows));
  return v;
}

Sweep validation_fp8_sweep(const std::vector<std::string>& kernels) {
  // fp8 y: fwd and add under fp32, llama and gemma (zero-centered differs from gemma only in
  // the weight, which the convention sweep covers); a scale of 1 and 300 (|y| up to ~5 under
  // normal rows: 300 takes the largest past e4m3's 448, so saturation is exercised), on
  // normal, large (saturating at scale 300 in e4m3 too) and tiny rows (tiny rows give y of
  // order 1 as well: normalised, but their squares test the reduction's range).
  Sweep f8 = validation_sweep(kernels);
  f8.ops = {Op::fwd, Op::add};
  f8.conventions = {Convention::fp32, Convention::llama, Convention::gemma};
  f8.ydtypes = {DType::e4m3, DType::e5m2};
  f8.y_scales = {1.0, 300.0};
  f8.Hs = {1, 127, 4097};
  f8.dists = {Dist::normal, Dist::large, Dist::tiny};
  return f8;
}

std::vector<Sweep> validation_rows_sweeps(const std::vector<std::string>& kernels) {
  // Many rows: at M=19 a persistent grid (as many blocks as are resident, block b taking rows
  // b, b + P, b + 2P, ...) gives every block one row at most, so its loop over rows, what a
  // block carries from one row to the next (a dw partial row, shared memory reused) and the
  // last round's blocks past M go unchecked. M is a prime past one wave of every persistent
  // grid here (H200, 132 SMs): short rows (H = 1, 127) at M=100003, past the backward's groups
  // of 4 lanes a row (64 rows a 256-thread block, at most 8 blocks an SM: 67584 rows a wave);
  // long rows (H = 1000, 2049: a block or a cluster a row, and an SM holds 32 blocks at
  // most: 4224 rows a wave) at M=20011, which keeps a case's tensors near 40M elements.
  // bf16 and fp32 (the two element sizes: fp16's rows take bf16's blocks), x's weight and
  // residual dtype (the base sweep has the others), contiguous rows and skewed ones (rows at
  // varying 16-byte phases), normal inputs: the rows are what these sweeps add. (Their cost
  // is the host's: every GPU test of a kernel or mutant runs them, so the sizes are kept to
  // what a wave needs.)
  Sweep short_rows = validation_sweep(kernels);
  short_rows.dtypes = {DType::bf16, DType::f32};
  short_rows.wdtypes = {WDtypeChoice{}};
  short_rows.rdtypes = {RDtypeChoice{}};
  short_rows.dists = {Dist::normal};
  short_rows.layouts = {Layout::contiguous, Layout::skewed};
  short_rows.Ms = {100003};
  short_rows.Hs = {1, 127};
  Sweep long_rows = short_rows;
  long_rows.Ms = {20011};
  long_rows.Hs = {1000, 2049};
  return {short_rows, long_rows};
}

namespace {

// The fewest rows of H whose last row starts at element 2^31 or past it: one row more than
// ceil(2^31 / H). The row before the last then starts inside 2^31 elements.
std::int64_t rows_past_2_31(std::int64_t H) {
  constexpr std::int64_t kElements = std::int64_t{1} << 31;
  return (kElements + H - 1) / H + 1;
}

}  // namespace

std::vector<Sweep> wide_sweeps(const std::vector<std::string>& kernels) {
  Sweep vector_rows;
  vector_rows.kernels = kernels;
  vector_rows.dtypes = {DType::bf16, DType::f32};
  vector_rows.Hs = {4096};
  vector_rows.Ms = {rows_past_2_31(4096)};  // 2^19 + 1
  vector_rows.eps = {1e-5};
  vector_rows.dists = {Dist::normal};
  vector_rows.layouts = {Layout::contiguous};
  // Odd rows take other code than whole 16-byte vectors (scalar heads and tails, row-vector's
  // shifted columns, chunked's misaligned passes).
  Sweep odd_rows = vector_rows;
  odd_rows.dtypes = {DType::bf16};
  odd_rows.Hs = {4097};
  odd_rows.Ms = {rows_past_2_31(4097)};  // 524162: its last row starts at element 2^31 + 3969
  return {vector_rows, odd_rows};
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

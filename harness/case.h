// The case model: one (op, kernel, dtypes, M, H, layout, eps, distribution, seed) point of
// a sweep, and the sweep that expands into cases.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "kernels/types.h"
#include "reference/generate.h"

namespace rb {


// Row stride (elements) and base offset (elements) each layout uses for a row of H.
//   contiguous  stride H,                          offset 0
//   strided     stride roundup(H, 16) + 16,        offset 0  (rows aligned, gaps between)
//   misaligned  stride H,                          offset 1  (base not 16-byte aligned)
std::int64_t layout_stride(Layout l, std::int64_t H);
std::int64_t layout_offset(Layout l);

// The most elements one matrix of a case may span (offset + (M - 1) x stride + H, in the
// widest layout): 2^56, 256 PiB of fp32, far past any device. Below it every byte count of a
// case (its tensors, guards and workspace summed) fits in 64 bits; past it those sums wrap,
// and a wrapped size would pass the device budget and allocate too little.
constexpr std::int64_t kMaxSpanElements = std::int64_t{1} << 56;

// Why M rows of H columns are too large to count (the span in the widest layout above
// kMaxSpanElements), or nothing. Checked before any arithmetic that could overflow.
std::optional<std::string> too_large(std::int64_t M, std::int64_t H);

struct Case {
  Op op = Op::fwd;
  std::string kernel;
  DType dtype = DType::bf16;
  DType wdtype = DType::bf16;
  DType rdtype = DType::bf16;  // the residual stream's; equals dtype for ops without one
  std::int64_t M = 0;
  std::int64_t H = 0;
  Layout layout = Layout::contiguous;
  double eps = 1e-5;
  Dist dist = Dist::normal;
  std::uint64_t seed = 0;
  Convention conv = Convention::fp32;
  // y's dtype when it is fp8 (fwd and add), with the per-tensor scale y8 = sat(round(y *
  // y_scale)); empty: y has x's dtype and y_scale is unused (1).
  std::optional<DType> y8;
  double y_scale = 1.0;

  std::int64_t stride() const { return layout_stride(layout, H); }
  DType ydtype() const { return y8.value_or(dtype); }
  // Every field: equal keys are the same case.
  auto key() const {
    return std::make_tuple(op, kernel, dtype, wdtype, rdtype, M, H, layout, eps, dist, seed, conv, y8, y_scale);
  }
  // The inputs this case reads: cases with equal data keys share generated inputs.
  bool same_data(const Case& o) const;
};

// A weight dtype choice: the x dtype ("same") or a fixed one.
struct WDtypeChoice {
  std::optional<DType> fixed;  // empty = same as x
  DType resolve(DType x) const { return fixed.value_or(x); }
};

// The same choice for the residual stream's dtype.
using RDtypeChoice = WDtypeChoice;

// A y dtype choice: x's dtype (empty) or an fp8 one.
using YDtypeChoice = std::optional<DType>;

struct Sweep {
  std::vector<Op> ops{Op::fwd, Op::bwd, Op::add, Op::add_bwd};
  std::vector<std::string> kernels;
  std::vector<DType> dtypes;
  std::vector<WDtypeChoice> wdtypes{WDtypeChoice{}};
  std::vector<RDtypeChoice> rdtypes{RDtypeChoice{}};  // used by ops with a residual stream
  std::vector<Convention> conventions{Convention::fp32};
  std::vector<YDtypeChoice> ydtypes{YDtypeChoice{}};  // used by fwd and add
  std::vector<double> y_scales{1.0};                   // used by fp8 y dtypes
  std::vector<std::int64_t> Ms;
  std::vector<std::int64_t> Hs;
  std::vector<double> eps;
  std::vector<Dist> dists;
  std::vector<Layout> layouts;
  std::uint64_t seed = 0x5eed;
};

// Every combination, ordered so that cases sharing inputs are adjacent (op and data first,
// then eps, then kernel). Duplicate combinations (e.g. wdtype "same" and fp32 for fp32 x, or
// any rdtype for an op without a residual stream) appear once. A known kernel is paired only
// with the ops it implements.
std::vector<Case> expand(const Sweep& s);

// Only shard `shard_index` of `shard_count` of expand(s): the same cases as
// take_shard(expand(s), shard_index, shard_count), in the same order, without building the
// other shards' cases.
std::vector<Case> expand(const Sweep& s, int shard_index, int shard_count);

// The cases of several sweeps, one after the other, sharded as one list (data groups counted
// across the sweeps), a case that two sweeps share listed once.
std::vector<Case> expand(const std::vector<Sweep>& sweeps, int shard_index = 0, int shard_count = 1);

// expand(s).size(), counted without building a case (saturates at the largest uint64). For
// several sweeps, the sum (an upper bound where they share cases).
std::uint64_t count_cases(const Sweep& s);
std::uint64_t count_cases(const std::vector<Sweep>& sweeps);

// The ops of s that have cases (a kernel of s implements the op, or is unknown: an error
// row), in s's order, once each: the pairing expand(s) makes.
std::vector<Op> ops_with_cases(const Sweep& s);

// Shard `index` of `count` (0 <= index < count): the cases of every count-th data group
// (a run of adjacent cases sharing inputs), starting at group `index`. The shards of one
// case list are disjoint and together hold every case once, each shard keeps the list's
// order, and cases sharing inputs stay in one shard (so each shard generates them once).
std::vector<Case> take_shard(const std::vector<Case>& cases, int index, int count);

// Kernels run when none is named: every non-mutant kernel that is available here (built-in,
// vendor and loaded plugins), auto included.
std::vector<std::string> default_kernels();

// The default benchmark sweep: every op, H {128, 1024, 2048, 4096, 4097, 8192, 16384},
// M {1, 16384}, fp32/fp16/bf16 (w and the residual stream in x's dtype), eps {1e-5, 1e-6},
// normal, contiguous, default kernels.
Sweep default_bench_sweep();

// The validation sweeps every kernel (and mutant) must face, run one after the other:
//   [0] every op, awkward H, every distribution and layout, both weight dtypes, both
//       residual dtypes, small M, the fp32 convention (the base sweep);
//   [1] the other conventions (llama, gemma, zero-centered) over every op, dtype, weight and
//       residual dtype and layout, on the distributions and H where their roundings differ;
//   [2] fp8 y (e4m3, e5m2) of fwd and add under fp32, llama and gemma, with a scale of 1 and
//       one that saturates the largest outputs;
//   [3], [4] many rows (M = 100003 at H 1 and 127, 20011 at H 1000 and 2049: past one wave
//       of any persistent grid), so that blocks run several rows each: every op, bf16 and
//       fp32, contiguous and skewed rows.
// A mutant that survives them means the sweeps lack an input: extend them, never weaken the
// mutant.
std::vector<Sweep> validation_sweeps(const std::vector<std::string>& kernels);
Sweep validation_sweep(const std::vector<std::string>& kernels);  // [0]
Sweep validation_fp8_sweep(const std::vector<std::string>& kernels);  // [2]
std::vector<Sweep> validation_rows_sweeps(const std::vector<std::string>& kernels);  // [3], [4]

// The wide sweeps (`--preset wide`): tensors past 2^31 elements and 2^32 bytes, where index or
// offset arithmetic in 32 bits wraps. Every op, contiguous, w and the residual stream in x's
// dtype: [0] bf16 and fp32, H=4096, M=524289 = 2^19 + 1 (the last row starts at element 2^31,
// byte 2^32 in bf16 and 2^33 in fp32); [1] bf16 H=4097, M=524162 (odd rows: the last starts at
// element 2^31 + 3969). Up to 8 GiB a tensor: up to about 34 GiB of device memory a case (fp32
// add-bwd) and 26 GiB of host memory, so it is a preset of its own and not part of the
// validation preset.
std::vector<Sweep> wide_sweeps(const std::vector<std::string>& kernels);

}  // namespace rb

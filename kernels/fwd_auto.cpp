// auto: the dispatcher. Picks a strategy by (dtype, M, H): below the small-M table's largest
// M and H from that table (kernels/auto_by_m.inc, generated from a committed sweep), else
// by (dtype, H) from a table of measured crossovers at M=16384; and reports its pick. Every built-in strategy handles any stride and alignment, so
// alignment changes how a row is peeled, not which strategy runs.
// The table's rows come from sweeps on the H200 recorded in docs/perf-notes.md; an H past
// the last row goes to chunked, which takes any H.
#include <array>
#include <limits>

#include "kernels/launchers.h"

namespace rb::kern {

namespace {

struct ByM {
  Op op;
  bool fp32;              // x is fp32 (else fp16 / bf16, which share a table)
  std::int64_t M, H;      // the bucket's top: M in (previous M, M], H likewise
  Strategy kernel;
};

// Measured on the H200 (reports/auto/h200-by-m.csv, docs/perf-notes.md run 16).
constexpr ByM kByM[] = {
#include "kernels/auto_by_m.inc"
};

// The smallest bucket top >= v among the table's rows for (op, fp32), or 0 when v is past
// every one (the table does not cover it).
template <class Get>
std::int64_t bucket_top(Op op, bool fp32, std::int64_t v, Get get) {
  std::int64_t top = std::numeric_limits<std::int64_t>::max();
  for (const ByM& e : kByM)
    if (e.op == op && e.fp32 == fp32 && get(e) >= v && get(e) < top) top = get(e);
  return top == std::numeric_limits<std::int64_t>::max() ? 0 : top;
}

struct Bucket {
  std::int64_t up_to_H;  // inclusive
  Strategy kernel;
};

// fp16 and bf16 share a table: same bytes per element, same code paths. Crossovers from
// the H200 sweeps of 2026-11-29 (docs/perf-notes.md, run 7). fp32 at H=8192 moved to chunked
// when its rows of 32 KB took the shared-memory second pass: 95.9% of copy against
// row-vector's 93.3% (M=16384, 2026-11-30, run 19); between 6144 and 8192 the rows are
// shorter than that and row-vector led (run 7).
constexpr std::array<Bucket, 1> k16bit{{{1024, Strategy::warp_row}}};
constexpr std::array<Bucket, 3> kF32{
    {{512, Strategy::warp_row}, {6144, Strategy::chunked}, {8191, Strategy::row_vector}}};

template <std::size_t N>
Strategy pick(const std::array<Bucket, N>& table, std::int64_t H) {
  for (const Bucket& b : table)
    if (H <= b.up_to_H) return b.kernel;
  return Strategy::chunked;
}

}  // namespace

std::optional<Strategy> auto_pick_by_m(const Problem& p) {
  const bool fp32 = p.x == DType::f32;
  const std::int64_t M = bucket_top(p.op, fp32, p.M, [](const ByM& e) { return e.M; });
  const std::int64_t H = bucket_top(p.op, fp32, p.H, [](const ByM& e) { return e.H; });
  if (M == 0 || H == 0) return std::nullopt;
  for (const ByM& e : kByM)
    if (e.op == p.op && e.fp32 == fp32 && e.M == M && e.H == H) return e.kernel;
  return std::nullopt;
}

Strategy auto_pick_fwd(const Problem& p) {
  if (const auto s = auto_pick_by_m(p)) {
    // The bucket's winner, where it holds this row (warp-row and row-vector stop at an H).
    if (*s == Strategy::chunked || (*s == Strategy::warp_row && p.H <= warp_row_max_H(p.x)) ||
        (*s == Strategy::row_vector && p.H <= row_vector_max_H(p.x)))
      return *s;
  }
  return p.x == DType::f32 ? pick(kF32, p.H) : pick(k16bit, p.H);
}

const char* strategy_name(Strategy s) {
  switch (s) {
    case Strategy::naive:
      return "naive";
    case Strategy::warp_row:
      return "warp-row";
    case Strategy::row_vector:
      return "row-vector";
    case Strategy::chunked:
      return "chunked";
    case Strategy::staged:
      return "staged";
  }
  return "?";
}

Strategy auto_pick(const Problem& p) {
  switch (p.op) {
    case Op::fwd:
      return auto_pick_fwd(p);
    case Op::add:
      return auto_pick_add(p);
    case Op::bwd:
    case Op::add_bwd:
      break;
  }
  return auto_pick_bwd(p);
}

}  // namespace rb::kern

// auto: the dispatcher. Picks a strategy by (dtype, H) from a table of measured crossovers
// and reports its pick. Every built-in strategy handles any stride and alignment, so
// alignment changes how a row is peeled, not which strategy runs.
// The table's rows come from sweeps on the H200 recorded in docs/perf-notes.md; an H past
// the last row goes to chunked, which takes any H.
#include <array>

#include "kernels/launchers.h"

namespace rb::kern {

namespace {

struct Bucket {
  std::int64_t up_to_H;  // inclusive
  Strategy kernel;
};

// fp16 and bf16 share a table: same bytes per element, same code paths. Crossovers from
// the H200 sweeps of 2026-11-29 (docs/perf-notes.md, run 7).
constexpr std::array<Bucket, 1> k16bit{{{1024, Strategy::warp_row}}};
constexpr std::array<Bucket, 3> kF32{
    {{512, Strategy::warp_row}, {6144, Strategy::chunked}, {8192, Strategy::row_vector}}};

template <std::size_t N>
Strategy pick(const std::array<Bucket, N>& table, std::int64_t H) {
  for (const Bucket& b : table)
    if (H <= b.up_to_H) return b.kernel;
  return Strategy::chunked;
}

}  // namespace

Strategy auto_pick_fwd(const Problem& p) { return p.x == DType::f32 ? pick(kF32, p.H) : pick(k16bit, p.H); }

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

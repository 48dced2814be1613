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
  const char* kernel;
};

// fp16 and bf16 share a table: same bytes per element, same code paths. Crossovers from
// the H200 sweeps of 2026-11-29 (docs/perf-notes.md, run 7).
constexpr std::array<Bucket, 1> k16bit{{{1024, "warp-row"}}};
constexpr std::array<Bucket, 3> kF32{{{512, "warp-row"}, {6144, "chunked"}, {8192, "row-vector"}}};

template <std::size_t N>
std::string pick(const std::array<Bucket, N>& table, std::int64_t H) {
  for (const Bucket& b : table)
    if (H <= b.up_to_H) return b.kernel;
  return "chunked";
}

}  // namespace

std::string auto_pick_fwd(const FwdArgs& a) {
  return a.xdtype == DType::f32 ? pick(kF32, a.H) : pick(k16bit, a.H);
}

}  // namespace rb::kern

// auto (add): the dispatcher of the fused residual add. Picks a strategy by (x dtype, r dtype,
// H) and reports its pick. Every add strategy handles any stride and alignment, so
// alignment changes how a row is peeled, not which strategy runs.
// Measured on the H200 (default sweep of 2026-11-29, docs/perf-notes.md run 11, M=16384):
// row-vector (x and r read once, the row held as fp32 s in registers) beats chunked at every
// H it holds but one (16-bit H=1024: 88.8% against 91.0%), by the most at the top of its
// range (bf16 H=16384: 92.7% against 87.0%; fp32 H=8192: 92.5% against 87.3%). So it is the
// pick wherever it holds the row, chunked beyond. For small M the table measured at each M
// (auto_pick_by_m, kernels/auto_by_m.inc) comes first: there chunked wins at small H, by up to
// 40% at M <= 256 (docs/perf-notes.md run 16).
#include "kernels/launchers.h"

namespace rb::kern {
namespace {

// 16-bit x, r and w with 1024 to 1536 vectors a row (bf16 H 8185 to 12288): chunked runs
// 512-thread blocks of 2-3 vectors a thread there, which measured 94.5% of copy at bf16
// M=16384 H=8192 against row-vector's 93.9 (docs/perf-notes.md run 29).
bool chunked_wide_rows(const Problem& p) {
  const auto two = [](DType d) { return dtype_size(d) == 2; };
  const std::int64_t nv = (p.H + 7) / 8;
  return two(p.x) && two(p.r) && two(p.w) && nv >= 1024 && nv <= 1536;
}

}  // namespace

Strategy auto_pick_add(const Problem& p) {
  const bool row_vector_holds = p.H <= add_row_vector_max_H(p.x, p.r);
  if (const auto s = auto_pick_by_m(p); s && (*s == Strategy::chunked || (*s == Strategy::row_vector && row_vector_holds)))
    return *s;
  if (chunked_wide_rows(p)) return Strategy::chunked;
  return row_vector_holds ? Strategy::row_vector : Strategy::chunked;
}

}  // namespace rb::kern

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

Strategy auto_pick_add(const Problem& p) {
  const bool row_vector_holds = p.H <= add_row_vector_max_H(p.x, p.r);
  if (const auto s = auto_pick_by_m(p); s && (*s == Strategy::chunked || (*s == Strategy::row_vector && row_vector_holds)))
    return *s;
  return row_vector_holds ? Strategy::row_vector : Strategy::chunked;
}

}  // namespace rb::kern

// auto: the dispatcher. Picks a strategy by (dtype, H) and reports its pick; every built-in
// strategy handles any stride and alignment, so alignment only changes how a row is peeled,
// not which strategy runs.
//   H <= warp_row_max_H  (1K fp32, 2K fp16/bf16 less a vector)   -> warp-row
//   H <= row_vector_max_H (16K fp32, 32K fp16/bf16 less a vector)  -> row-vector
//   otherwise                                                       -> chunked
// Thresholds are the strategies' register limits; docs/perf-notes.md has the measurements
// behind them.
#include "kernels/launchers.h"

namespace rb::kern {

namespace {
// warp-row loses to row-vector once a row needs many vectors per lane: it wins below ~1K.
constexpr std::int64_t kWarpRowUpTo = 1024;
}  // namespace

std::string auto_pick_fwd(const FwdArgs& a) {
  if (a.H <= kWarpRowUpTo && a.H <= warp_row_max_H(a.xdtype)) return "warp-row";
  if (a.H <= row_vector_max_H(a.xdtype)) return "row-vector";
  return "chunked";
}

}  // namespace rb::kern

// auto (add): the dispatcher of the fused residual add. Picks a strategy by (x dtype, r dtype,
// H) and reports its pick. Every add strategy handles any stride and alignment, so
// alignment changes how a row is peeled, not which strategy runs.
// Not yet measured (no H200 sweep of the add op so far): the table follows the design.
// row-vector reads x and r once and holds the row in registers; it is picked while its
// blocks stay at <= 256 threads (H up to 8K in 16-bit, 4K in fp32), where 4 or more rows fit
// on an SM; its sub-warp groups (several rows a block) also make it the pick for small H,
// where naive and chunked leave most of a block idle. Past that, chunked: 512-thread blocks
// at 40 registers, 3 rows an SM, as the forward's chunked wins at large H
// (docs/perf-notes.md). r's dtype does not move the crossover in this table: the row is held
// as fp32 s either way.
#include "kernels/launchers.h"

namespace rb::kern {

namespace {

// Largest H row-vector is picked for, by x dtype (inclusive).
std::int64_t row_vector_up_to(DType x) { return x == DType::f32 ? 4096 : 8192; }

}  // namespace

std::string auto_pick_add(const AddArgs& a) {
  return a.H <= row_vector_up_to(a.xdtype) ? "row-vector" : "chunked";
}

}  // namespace rb::kern

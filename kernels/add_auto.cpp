// auto (add): the dispatcher of the fused residual add. Picks a strategy by (x dtype, r dtype,
// H) and reports its pick. Every add strategy handles any stride and alignment, so
// alignment changes how a row is peeled, not which strategy runs.
// Measured on the H200 (default sweep of 2026-11-29, docs/perf-notes.md run 11, M=16384):
// row-vector (x and r read once, the row held as fp32 s in registers) beats chunked at every
// H it holds but one (16-bit H=1024: 88.8% against 91.0%), by the most at the top of its
// range (bf16 H=16384: 92.7% against 87.0%; fp32 H=8192: 92.5% against 87.3%). So it is the
// pick wherever it holds the row, chunked beyond, but for 16-bit rows that give each of
// chunked's 512 threads 2 or 3 whole vectors (run 30: bf16 H=8192 95.5 against 93.5) and for
// rows chunked takes through shared memory (x and r together 64 KB and more; run 31: bf16
// H=16384 95.9 against 93.2, fp32 H=8192 96.1 against 93.2). For
// small M the table measured at each M (auto_pick_by_m, kernels/auto_by_m.inc) comes first:
// there chunked wins at small H, by up to 40% at M <= 256 (docs/perf-notes.md run 16).
#include "kernels/launchers.h"

namespace rb::kern {
namespace {

// 16-bit x, r and w whose row gives each of chunked's 512 threads 2 or 3 whole vectors (1024
// or 1536 vectors: bf16 H 8185-8192 and 12281-12288): chunked against row-vector at bf16
// M=16384, % of copy (docs/perf-notes.md run 30): H=8192 95.3-95.6 against 93.4-93.7 (fp16
// 95.6-96.0 against 93.3-93.5), H=12288 93.9-94.1 against 93.5-93.6, but H=10240 (2.5 vectors
// a thread) 93.8 against 94.0-94.2: row-vector keeps the rows in between.
bool chunked_wide_rows(const Problem& p) {
  if (dtype_size(p.x) != 2 || dtype_size(p.w) != 2 || dtype_size(p.r) != 2) return false;
  const std::int64_t threads = add_chunked_threads(p.x, p.w, p.r, p.H);
  const std::int64_t nv = row_vectors(p.H, dtype_size(p.x));
  return threads == 512 && nv % threads == 0 && (nv / threads == 2 || nv / threads == 3);
}

}  // namespace

Strategy auto_pick_add(const Problem& p) {
  const bool row_vector_holds = p.H <= add_row_vector_max_H(p.x, p.r);
  if (const auto s = auto_pick_by_m(p); s && (*s == Strategy::chunked || (*s == Strategy::row_vector && row_vector_holds)))
    return *s;
  if (chunked_wide_rows(p) || add_chunked_image_bytes(p.x, p.r, p.H) > 0) return Strategy::chunked;
  return row_vector_holds ? Strategy::row_vector : Strategy::chunked;
}

}  // namespace rb::kern

// auto (add): the dispatcher of the fused residual add. Picks a strategy by (x dtype, w dtype,
// r dtype, H) and reports its pick. Every add strategy handles any stride and alignment, so
// alignment changes how a row is peeled, not which strategy runs.
// Measured on the H200 (default sweep of 2026-11-29, docs/perf-notes.md run 11, M=16384):
// row-vector (x and r read once, the row held as fp32 s in registers) beat chunked's two reads
// through L1 at every H it holds but one (16-bit H=1024: 88.8% against 91.0%). chunked's
// 512-thread rows through shared memory (x and r together 32 KB and more) beat row-vector at
// every such row measured, all with x, w and r of one dtype (run 31, M=16384, % of copy: bf16
// H=8192 95.8 against 93.6, 10240 96.0 / 93.9, 12288 95.6 / 93.5, 16384 95.9 / 93.2; fp32
// H=4097 91.4 / 89.1, 6144 95.5 / 93.5, 8192 96.1 / 93.2), and so did its 16-bit rows of
// 64-256 threads with 3 vectors a thread and more once they took the image too (run 41, % of
// copy against row-vector: bf16 H=2048 93.3 / 91.0, 3072 95.2 / 92.6, 4096 94.6 / 92.7, 6144
// 95.9 / 93.6; fp16 alike; 8184, 4 vectors a thread in 256 threads, level: 89.5 / 89.8). So
// row-vector wherever it holds the row, chunked beyond and for those shared-memory rows of one
// dtype (mixed dtypes are not measured on it). For small M the table measured at each M
// (auto_pick_by_m, kernels/auto_by_m.inc) comes first: there chunked wins at small H, by up to 40% at M <= 256
// (docs/perf-notes.md run 16).
#include "kernels/launchers.h"

namespace rb::kern {

Strategy auto_pick_add(const Problem& p) {
  const bool row_vector_holds = p.H <= add_row_vector_max_H(p.x, p.r);
  if (const auto s = auto_pick_by_m(p); s && (*s == Strategy::chunked || (*s == Strategy::row_vector && row_vector_holds)))
    return *s;
  const bool one_dtype = p.w == p.x && p.r == p.x;
  // And where chunked holds many rows in registers (add_chunked_holds; run 53, M=16384: fp32
  // H=1024 94.2 -> 95.5% of copy, 4096 97.0 -> 97.4 against row-vector).
  if (one_dtype && (add_chunked_image_bytes(p.x, p.w, p.r, p.H) > 0 || add_chunked_holds(p.x, p.w, p.r, p.M, p.H)))
    return Strategy::chunked;
  return row_vector_holds ? Strategy::row_vector : Strategy::chunked;
}

}  // namespace rb::kern

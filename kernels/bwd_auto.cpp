// auto for the backward (bwd and add-bwd): picks a strategy by (x dtype, H, row alignment):
// row-vector (one read of each input, dw partials in registers; past one block's row, its
// slices as a thread-block cluster on sm_90+) wherever it holds the row, chunked (any H)
// otherwise. x is the residual stream's dtype for add-bwd, which is what bounds
// row-vector's registers. Measured on the H200 (docs/perf-notes.md, run 11): bf16 M=16384,
// row-vector 79% of copy at H=4096 and 78% at 8192 against chunked's 55%.
#include "kernels/launchers.h"

namespace rb::kern {

Strategy auto_pick_bwd(const Problem& p) {
  // x as the kernel reads it: the residual stream for add-bwd; dy is in the x dtype.
  const DType x = p.op == Op::add_bwd ? p.r : p.x;
  // Rows that do not all start on a 16-byte boundary (odd H: 4097) went to chunked while
  // row-vector moved them element by element (bf16 H=4097 28% of copy against chunked's 43%,
  // perf-notes run 11); row-vector now shifts its columns a block at a time so they load as
  // vectors again (kAny, perf-notes run 24). Shifted, a row needs up to 16 / sizeof(dy) - 1
  // columns more than H: past that, chunked (row-vector would run unshifted, element by
  // element: bf16 H=16383 29% of copy against chunked's 50%, run 24).
  const bool rows_aligned = (p.H * static_cast<std::int64_t>(dtype_size(p.x))) % 16 == 0 &&
                            (p.H * static_cast<std::int64_t>(dtype_size(x))) % 16 == 0;
  const std::int64_t shift_room = rows_aligned ? 0 : 16 / static_cast<std::int64_t>(dtype_size(p.x)) - 1;
  if (p.H + shift_room > bwd_row_vector_block_H(x)) {
    // Past one block's row: row-vector's clusters where the rows are aligned (bf16 M=1024,
    // % of copy against chunked: bwd H=65536 54.8 / 46.6, 131072 57.1 / 48.5, add-bwd
    // H=65536 59.1 / 56.7, fp32 bwd H=65536 65.2 / 61.3; M=16384 H=32768 66.5 / 58.9), chunked
    // where they are not (bwd H=65537 29.3 / 34.2, add-bwd 32.5 / 40.6, M=16384 H=32769 33.7 /
    // 37.3): perf-notes run 34.
    return rows_aligned && p.H <= bwd_row_vector_max_H(x) ? Strategy::row_vector : Strategy::chunked;
  }
  // add-bwd in 16-bit with misaligned rows: row-vector leads only between 2048 and 8192
  // (bf16 M=16384, % of copy, row-vector against chunked: H=1025 37.8 / 42.2, 2049 51.6 /
  // 48.1, 4097 60.8 / 49.4, 8193 43.1 / 52.7, 16377 58.0 / 58.0; run 24). The backward and
  // fp32 led at every H measured.
  if (!rows_aligned && p.op == Op::add_bwd && dtype_size(x) == 2 && (p.H <= 2048 || p.H > 8192))
    return Strategy::chunked;
  // staged (rows streamed through a shared-memory ring) led past 8192 in 16-bit until
  // row-vector's backward loaded the next row ahead: bwd bf16 M=16384 H=16384 row-vector
  // 88.9% of copy against staged's 77.0% (H200, 2026-12-01, perf-notes run 23).
  return Strategy::row_vector;
}

}  // namespace rb::kern

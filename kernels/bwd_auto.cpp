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
  // Rows that do not all start on a 16-byte boundary (odd H: 4097; a base pointer off 16
  // bytes; a stride that is not a whole number of 16 bytes) went to chunked while row-vector
  // moved them element by element (bf16 H=4097 28% of copy against chunked's 43%, perf-notes
  // run 11); row-vector now shifts its columns a block at a time so they load as vectors
  // again (kAny, perf-notes run 24). Shifted, a row needs up to 16 / sizeof(dy) - 1 columns
  // more than H: past that, chunked (row-vector would run unshifted, element by element:
  // bf16 H=16383 29% of copy against chunked's 50%, run 24). Aligned as row-vector's kernel
  // asks it (rows_aligned16: the base pointers and the row stride), not by H alone: with a
  // base one element off, H=16384 took row-vector at 49% of copy against chunked's 77-82
  // (H100, M=16384, bf16 bwd / add-bwd), fp32 H=8192 69 / 81 against 84 / 87 (perf-notes
  // run 60).
  const auto aligned = [&](DType t) {
    return rows_aligned16(static_cast<std::uint64_t>(p.base_align), p.stride,
                          static_cast<std::int64_t>(dtype_size(t)), p.M);
  };
  const bool rows_aligned = aligned(p.x) && aligned(x);
  const std::int64_t shift_room = rows_aligned ? 0 : 16 / static_cast<std::int64_t>(dtype_size(p.x)) - 1;
  const std::int64_t block = bwd_row_vector_block_H(x), span = p.H + shift_room;
  if (span > block) {
    // Past one block's row: row-vector's clusters where the rows are aligned (bf16 M=1024,
    // % of copy against chunked: bwd H=65536 54.8 / 46.6, 131072 57.1 / 48.5, add-bwd
    // H=65536 59.1 / 56.7, fp32 bwd H=65536 65.2 / 61.3; M=16384 H=32768 66.5 / 58.9), chunked
    // where they are not (bwd H=65537 29.3 / 34.2, add-bwd 32.5 / 40.6, M=16384 H=32769 33.7 /
    // 37.3): perf-notes run 34. Shifted fp32 rows go to row-vector from one and a half
    // blocks' span up to H of two blocks, where it was measured to lead (run 60, H100,
    // M=16384, % of copy, row-vector / chunked, bwd and add-bwd): H=12289 72.8 / 71.5 and
    // 80.3 / 78.2, 16377 65.9 / 62.3 and 78.9 / 70.9, misaligned 16384 66.9 / 62.0 and 80.1 /
    // 71.2; at H=8193 its two slices of half a block lost, 64.5 / 83.2 and 77.5 / 87.0, as did
    // misaligned 8192; in 16-bit misaligned 16384 48.8 / 76.7 and 49.3 / 82.0.
    if (rows_aligned) return p.H <= bwd_row_vector_max_H(x) ? Strategy::row_vector : Strategy::chunked;
    const bool fp32 = dtype_size(p.x) == 4 && dtype_size(x) == 4;
    return fp32 && 2 * span > 3 * block && p.H <= 2 * block && p.H <= bwd_row_vector_max_H(x)
               ? Strategy::row_vector
               : Strategy::chunked;
  }
  // Shifted rows within one block's row: row-vector, add-bwd in 16-bit too. That exception
  // (chunked at H <= 2048 and past 8192, run 24's table: add-bwd bf16 H=1025 37.8 / 42.2,
  // 8193 43.1 / 52.7) predates row-vector's shifted ring (run 56) and overhang (run 59). Run
  // 60 (H100, M=16384, % of copy, row-vector / chunked, bf16 add-bwd): H=1025 64.6 / 56.7,
  // 8193 82.2 / 70.4, 16377 76.3 / 75.2, misaligned 8192 80.8 / 78.1; chunked ahead by 0.6-1.5
  // points only at misaligned 1024 and 2048 and at H=12289.
  //
  // staged (rows streamed through a shared-memory ring) led past 8192 in 16-bit until
  // row-vector's backward loaded the next row ahead: bwd bf16 M=16384 H=16384 row-vector
  // 88.9% of copy against staged's 77.0% (H200, 2026-12-01, perf-notes run 23).
  return Strategy::row_vector;
}

}  // namespace rb::kern

// Host launchers and capability checks of the forward strategies (internal to kernels/;
// callers go through registry.h).
#pragma once

#include <cuda_runtime_api.h>

#include <optional>
#include <string>

#include "kernels/registry.h"
#include "kernels/types.h"

namespace rb::kern {

cudaError_t launch_fwd_naive(const FwdArgs& a, cudaStream_t s);

// Largest H the register-resident strategies hold, per x dtype.
std::int64_t row_vector_max_H(DType x);
cudaError_t launch_fwd_row_vector(const FwdArgs& a, cudaStream_t s);
// vpt in {2, 4, 8} vectors a thread, `rows` rows a block (block = rows * group <= 512).
cudaError_t launch_fwd_row_vector_cfg(const FwdArgs& a, cudaStream_t s, int vpt, int rows);

std::int64_t warp_row_max_H(DType x);
cudaError_t launch_fwd_warp_row(const FwdArgs& a, cudaStream_t s);

cudaError_t launch_fwd_chunked(const FwdArgs& a, cudaStream_t s);

// The built-in strategies `auto` chooses among.
enum class Strategy { naive, warp_row, row_vector, chunked, staged };
const char* strategy_name(Strategy s);

// auto: the strategy it picks for a problem, per op (kernels/*_auto.cpp).
Strategy auto_pick_fwd(const Problem& p);
// The small-M table's pick for fwd and add (kernels/auto_by_m.inc: the fastest strategy of a
// committed sweep at each (op, dtype class, M, H) bucket), or nothing past its largest M or H.
std::optional<Strategy> auto_pick_by_m(const Problem& p);

// Mutants (kernels/mutants/): deliberately wrong forward kernels.
enum class FwdBug {
  half_accum,
  eps_outside,
  weight_row_offset,
  tail_store,
  tail_load,
  mean_sub,
  pad_denominator,
  trap,  // a device fault (__trap on the last row), not a numerics bug
  hang,  // a kernel that never finishes (the last row waits for good), not a numerics bug
  no_eps,
  stride_ignored,
  warp_sum_only,
  one_row_a_block,  // a persistent grid (the resident blocks, at most M) whose loop over rows is forgotten
  offset_32bit      // rows addressed by a 32-bit byte offset: past 4 GiB a row aliases an earlier one
};
cudaError_t launch_fwd_mutant(FwdBug bug, const FwdArgs& a, cudaStream_t s);

// fp8 forward mutants (fp32 convention; right with y in x's dtype): each block's amax stored
// plainly (the last block wins); amax of y * scale instead of y; no saturation of y * scale.
enum class Fp8Bug { amax_plain_store, amax_after_scale, no_saturate };
cudaError_t launch_fp8_mutant(Fp8Bug bug, const FwdArgs& a, cudaStream_t s);

// 16-byte vectors a row of H elements spans, at most: ceil(H / V). With no head the body is
// floor(H / V) vectors; with a head of h >= 1 elements it is floor((H - h) / V), fewer.
inline std::int64_t row_vectors(std::int64_t H, std::size_t elem_size) {
  const std::int64_t v = static_cast<std::int64_t>(16 / elem_size);
  return (H + v - 1) / v;
}

// ---- add: fused residual add + RMSNorm (AddArgs) ------------------------------------------
// Every launcher handles any H >= 1, any row strides and any base alignment, and every
// (x, w, r) combo: w in {x, fp32}, r in {x, fp32}. M == 0 is a no-op.
cudaError_t launch_add_naive(const AddArgs& a, cudaStream_t s);
cudaError_t launch_add_chunked(const AddArgs& a, cudaStream_t s);
// Threads a block of chunked's add runs for rows of H (one row a block): 64 to 512.
std::int64_t add_chunked_threads(DType x, DType w, DType r, std::int64_t H);
// Bytes of shared memory a block of chunked's add takes for rows of H (x's and r's bodies),
// where its rows go through shared memory; 0 where they are read twice through L1.
std::size_t add_chunked_image_bytes(DType x, DType w, DType r, std::int64_t H);
// Whether chunked's add holds such rows in registers (kDecode) at many rows, not only in a launch
// of one wave: x, r and w of one dtype, rows of 4-16 KB in 16-bit and 4-32 KB in fp32, in
// whole 16-byte vectors, from 4096 rows (docs/perf-notes.md runs 51 and 53).
bool add_chunked_holds(DType x, DType w, DType r, std::int64_t M, std::int64_t H);
// How chunked's add holds the rows add_chunked_holds takes, under the fp32 convention with y in
// x's dtype, for x of dtype x and rows of H: vectors a thread (16-bit 2, fp32 4), and whether
// s is stored in pass 2 beside y (16-bit rows of up to 512 vectors) instead of in pass 1
// (docs/perf-notes.md run 65).
struct AddHeld {
  int vecs;
  bool late_s;
};
AddHeld add_held_shape(DType x, std::int64_t H);
// Register-resident rows: H up to add_row_vector_max_H(x, r).
std::int64_t add_row_vector_max_H(DType x, DType r);
cudaError_t launch_add_row_vector(const AddArgs& a, cudaStream_t s);
Strategy auto_pick_add(const Problem& p);

// Add mutants: the sum s = x + r formed in x's storage dtype (rounded to T before it is
// squared and stored); rms saved where rrms belongs; the old residual stored where s belongs;
// y normalising x instead of s; s also written over the residual input r (in place).
enum class AddBug { residual_storage_dtype, saved_rms, residual_not_updated, norm_of_x, residual_in_place };
cudaError_t launch_add_mutant(AddBug bug, const AddArgs& a, cudaStream_t s);

// ---- bwd and add-bwd (BwdArgs) ------------------------------------------------------------
// Each launcher has a workspace size (bytes of fp32 scratch the caller allocates and passes
// in BwdArgs::workspace; 0 = none), for the shape, strides and dtypes alone: the caller may
// ask with null pointers, and the size holds at any binding (aligned rows or not, ds_out or
// not). A launch is all of the op's kernels (dx and partials,
// then the column reduction of dw), on stream s. M == 0 writes dw = 0.
cudaError_t launch_bwd_naive(const BwdArgs& a, cudaStream_t s);
std::size_t bwd_naive_workspace_bytes(const BwdArgs& a);
cudaError_t launch_bwd_chunked(const BwdArgs& a, cudaStream_t s);
std::size_t bwd_chunked_workspace_bytes(const BwdArgs& a);
// The columns of a row one block of row-vector (and staged) holds: 16384 for a 16-bit x,
// 8192 for fp32.
std::int64_t bwd_row_vector_block_H(DType x);
// The longest row row-vector takes: one block's, or 8 times that where the device runs
// thread-block clusters (sm_90+): a longer row's slices then run as one cluster.
std::int64_t bwd_row_vector_max_H(DType x);
cudaError_t launch_bwd_row_vector(const BwdArgs& a, cudaStream_t s);
std::size_t bwd_row_vector_workspace_bytes(const BwdArgs& a);
// Whether every one of M rows of elem_size-byte elements, `stride` elements apart, starts
// 16-byte aligned, `base` being the base pointer's address or the bytes it is aligned to
// (Problem::base_align): row-vector's question for its shifted kernels, and auto's for it.
// One row's stride does not matter.
inline bool rows_aligned16(std::uint64_t base, std::int64_t stride, std::int64_t elem_size, std::int64_t M) {
  return base % 16 == 0 && (M <= 1 || (stride * elem_size) % 16 == 0);
}
// staged: row-vector's column ownership, rows streamed through a shared-memory ring by
// cp.async (any row phase moves 16-byte vectors); H up to bwd_row_vector_block_H.
cudaError_t launch_bwd_staged(const BwdArgs& a, cudaStream_t s);
std::size_t bwd_staged_workspace_bytes(const BwdArgs& a);
Strategy auto_pick_bwd(const Problem& p);  // bwd and add-bwd
Strategy auto_pick(const Problem& p);      // by p.op

// Backward mutants: dw reduced over the columns instead of the rows (each row's sum over
// columns, broadcast to every column); dx without the correction term (dx = rrms * dy * w);
// dw accumulated in w's storage dtype; the saved value taken for rms (dx and dw computed
// with 1 / saved instead of saved); the correction's dot product without w; dw summing dy * x
// without the rows' rrms; dw through a persistent grid's partial rows, each block's partial
// overwritten by every row it takes instead of summed.
enum class BwdBug {
  dw_wrong_axis,
  no_correction,
  dw_storage_accum,
  saved_as_rms,
  correction_without_w,
  dw_unnormalized,
  dw_partial_overwrite
};
cudaError_t launch_bwd_mutant(BwdBug bug, const BwdArgs& a, cudaStream_t s);
std::size_t bwd_mutant_workspace_bytes(const BwdArgs& a);

}  // namespace rb::kern

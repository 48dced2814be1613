// Deliberately wrong backward kernels (bwd and add-bwd): each one implements a classic
// RMSNorm-backward bug, so the validator can prove it catches it. Registered as mutant-*,
// never run by default. Structure is the backward `naive`'s (dx: a block per row, scalar;
// dw: a thread per column over all rows in order, so deterministic) with one bug each, all
// else correct (ds_out added for add-bwd):
//   dw_wrong_axis:    each row contributes the sum over its columns of dy * x * rrms,
//                     broadcast to every column (row sums go through the workspace: M fp32);
//   no_correction:    dx = rrms * dy * w (+ ds_out), the correction term dropped;
//   dw_storage_accum: dw's running sum rounded to w's storage dtype after every row;
//   saved_as_rms:     the saved rrms taken for rms: 1 / saved used wherever rrms belongs,
//                     in dx and dw;
//   correction_without_w: the correction's dot product sum(dy * x), w left out of it (right
//                     only where w = 1);
//   dw_unnormalized:  dw = sum over rows of dy * x, x not normalised (right only where a
//                     row's rms is 1);
//   dw_partial_overwrite: dw through a persistent grid's partial rows (P blocks, 4 an SM and
//                     at most M; block b takes rows b, b + P, ...), then a sum of the P
//                     partials of each column; each block writes its partial with = where +=
//                     belongs, so it keeps its last row's terms alone: right while every
//                     block has one row (M <= P).
#include "kernels/bwd_common.cuh"
#include "kernels/launchers.h"
#include "kernels/mutants/one_of.h"

namespace rb::kern {
namespace {

constexpr int kThreads = 256;

template <BwdBug B>
__device__ __forceinline__ float row_rrms(const BwdArgs& a, std::int64_t row) {
  const float saved = a.rrms[row];
  return B == BwdBug::saved_as_rms ? 1.f / saved : saved;
}

// The row's factor in dw's sum: its rrms, or 1 where dw_unnormalized forgets it.
template <BwdBug B>
__device__ __forceinline__ float dw_rrms(const BwdArgs& a, std::int64_t row) {
  return B == BwdBug::dw_unnormalized ? 1.f : row_rrms<B>(a, row);
}

template <class X, class G, class W, BwdBug B>
__global__ void __launch_bounds__(kThreads) bwd_mutant_dx_kernel(BwdArgs a) {
  __shared__ float scratch[32];
  const std::int64_t row = blockIdx.x;
  const std::int64_t H = a.H;
  const BwdRow<X, G, W> io(a, row);
  const float r = row_rrms<B>(a, row);

  if constexpr (B == BwdBug::dw_wrong_axis) {
    float t = 0.f;
    for (std::int64_t c = threadIdx.x; c < H; c += blockDim.x) t += to_f32(io.dy[c]) * to_f32(io.x[c]) * r;
    const float row_sum = block_sum(t, scratch);
    if (threadIdx.x == 0) static_cast<float*>(a.workspace)[row] = row_sum;
  }

  float corr = 0.f;
  if constexpr (B != BwdBug::no_correction) {
    float s = 0.f;
    for (std::int64_t c = threadIdx.x; c < H; c += blockDim.x)
      s += to_f32(io.dy[c]) * (B == BwdBug::correction_without_w ? 1.f : to_f32(io.w[c])) * to_f32(io.x[c]);
    corr = r * r * r / static_cast<float>(H) * block_sum(s, scratch);
  }
  for (std::int64_t c = threadIdx.x; c < H; c += blockDim.x) {
    const float g = to_f32(io.dy[c]) * to_f32(io.w[c]);
    float d = B == BwdBug::no_correction ? r * g : r * g - to_f32(io.x[c]) * corr;
    if (io.ds != nullptr) d += to_f32(io.ds[c]);
    io.dx[c] = from_f32<X>(d);
  }
}

template <class X, class G, class W, BwdBug B>
__global__ void __launch_bounds__(kThreads) bwd_mutant_dw_kernel(BwdArgs a) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= a.H) return;
  const X* x = static_cast<const X*>(a.x);
  const G* dy = static_cast<const G*>(a.dy);
  W* dw = static_cast<W*>(a.dw);
  if constexpr (B == BwdBug::dw_wrong_axis) {
    const float* row_sum = static_cast<const float*>(a.workspace);
    float acc = 0.f;
    for (std::int64_t row = 0; row < a.M; ++row) acc += row_sum[row];
    dw[c] = from_f32<W>(acc);
  } else if constexpr (B == BwdBug::dw_storage_accum) {
    W acc = from_f32<W>(0.f);
    for (std::int64_t row = 0; row < a.M; ++row)
      acc = from_f32<W>(to_f32(acc) + to_f32(dy[row * a.dy_stride + c]) * to_f32(x[row * a.x_stride + c]) *
                                          row_rrms<B>(a, row));
    dw[c] = acc;
  } else {
    float acc = 0.f;
    for (std::int64_t row = 0; row < a.M; ++row)
      acc += to_f32(dy[row * a.dy_stride + c]) * to_f32(x[row * a.x_stride + c]) * dw_rrms<B>(a, row);
    dw[c] = from_f32<W>(acc);
  }
}

// dw_partial_overwrite's blocks: 4 an SM, at most M (0 when M is 0).
std::int64_t partial_rows(std::int64_t M) {
  const std::int64_t P = static_cast<std::int64_t>(sm_count()) * 4;
  return M < P ? M : P;
}

// dw_partial_overwrite's partial rows: block b takes rows b, b + P, ... in order and writes
// each row's terms over its partial row (= where += belongs).
template <class X, class G>
__global__ void __launch_bounds__(kThreads) bwd_mutant_dw_partial_kernel(BwdArgs a) {
  const X* x = static_cast<const X*>(a.x);
  const G* dy = static_cast<const G*>(a.dy);
  float* part = static_cast<float*>(a.workspace) + static_cast<std::int64_t>(blockIdx.x) * a.H;
  for (std::int64_t row = blockIdx.x; row < a.M; row += gridDim.x)
    for (std::int64_t c = threadIdx.x; c < a.H; c += blockDim.x)
      part[c] = to_f32(dy[row * a.dy_stride + c]) * to_f32(x[row * a.x_stride + c]) * a.rrms[row];
}

// The sum of the P partial rows of each column, in order.
template <class W>
__global__ void __launch_bounds__(kThreads) bwd_mutant_dw_columns_kernel(BwdArgs a, std::int64_t P) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= a.H) return;
  const float* part = static_cast<const float*>(a.workspace);
  float acc = 0.f;
  for (std::int64_t p = 0; p < P; ++p) acc += part[p * a.H + c];
  static_cast<W*>(a.dw)[c] = from_f32<W>(acc);
}

template <class X, class G, class W, BwdBug B>
void launch_pair(const BwdArgs& a, cudaStream_t s) {
  if (a.M > 0) bwd_mutant_dx_kernel<X, G, W, B><<<static_cast<unsigned>(a.M), kThreads, 0, s>>>(a);
  const auto blocks = static_cast<unsigned>((a.H + kThreads - 1) / kThreads);
  if constexpr (B == BwdBug::dw_partial_overwrite) {
    const std::int64_t P = partial_rows(a.M);
    if (P > 0) bwd_mutant_dw_partial_kernel<X, G><<<static_cast<unsigned>(P), kThreads, 0, s>>>(a);
    bwd_mutant_dw_columns_kernel<W><<<blocks, kThreads, 0, s>>>(a, P);
  } else {
    bwd_mutant_dw_kernel<X, G, W, B><<<blocks, kThreads, 0, s>>>(a);
  }
}

}  // namespace

// The row sums of dw_wrong_axis (M fp32) or the partial rows of dw_partial_overwrite (P x H
// fp32), whichever is larger; the other bugs leave it unused (the size does not know the bug).
std::size_t bwd_mutant_workspace_bytes(const BwdArgs& a) {
  const std::int64_t floats = std::max(a.M, partial_rows(a.M) * a.H);
  return floats > 0 ? static_cast<std::size_t>(floats) * sizeof(float) : 0;
}

cudaError_t launch_bwd_mutant(BwdBug bug, const BwdArgs& a, cudaStream_t s) {
  if (a.H < 1 || a.M < 0) return cudaErrorInvalidValue;
  if ((bug == BwdBug::dw_wrong_axis || bug == BwdBug::dw_partial_overwrite) &&
      !workspace_ok(a, bwd_mutant_workspace_bytes(a)))
    return cudaErrorInvalidValue;
  return dispatch_bwd_dtypes(a.xdtype, a.dydtype, a.wdtype, [&](auto xt, auto gt, auto wt) -> cudaError_t {
    using X = decltype(xt);
    using G = decltype(gt);
    using W = decltype(wt);
    const bool known = one_of<BwdBug::dw_wrong_axis, BwdBug::no_correction, BwdBug::dw_storage_accum,
                              BwdBug::saved_as_rms, BwdBug::correction_without_w, BwdBug::dw_unnormalized,
                              BwdBug::dw_partial_overwrite>(
        bug, [&](auto b) { launch_pair<X, G, W, decltype(b)::value>(a, s); });
    return known ? cudaGetLastError() : cudaErrorInvalidValue;
  });
}

}  // namespace rb::kern

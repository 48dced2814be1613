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
//                     row's rms is 1).
#include "kernels/bwd_common.cuh"
#include "kernels/launchers.h"

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

template <class X, class G, class W, BwdBug B>
void launch_pair(const BwdArgs& a, cudaStream_t s) {
  if (a.M > 0) bwd_mutant_dx_kernel<X, G, W, B><<<static_cast<unsigned>(a.M), kThreads, 0, s>>>(a);
  const std::int64_t blocks = (a.H + kThreads - 1) / kThreads;
  bwd_mutant_dw_kernel<X, G, W, B><<<static_cast<unsigned>(blocks), kThreads, 0, s>>>(a);
}

}  // namespace

// The row sums of dw_wrong_axis; the other bugs leave it unused (the size does not know the
// bug).
std::size_t bwd_mutant_workspace_bytes(const BwdArgs& a) {
  return a.M > 0 ? static_cast<std::size_t>(a.M) * sizeof(float) : 0;
}

cudaError_t launch_bwd_mutant(BwdBug bug, const BwdArgs& a, cudaStream_t s) {
  if (a.H < 1 || a.M < 0) return cudaErrorInvalidValue;
  if (bug == BwdBug::dw_wrong_axis && !workspace_ok(a, bwd_mutant_workspace_bytes(a)))
    return cudaErrorInvalidValue;
  return dispatch_bwd_dtypes(a.xdtype, a.dydtype, a.wdtype, [&](auto xt, auto gt, auto wt) -> cudaError_t {
    using X = decltype(xt);
    using G = decltype(gt);
    using W = decltype(wt);
    switch (bug) {
      case BwdBug::dw_wrong_axis:
        launch_pair<X, G, W, BwdBug::dw_wrong_axis>(a, s);
        break;
      case BwdBug::no_correction:
        launch_pair<X, G, W, BwdBug::no_correction>(a, s);
        break;
      case BwdBug::dw_storage_accum:
        launch_pair<X, G, W, BwdBug::dw_storage_accum>(a, s);
        break;
      case BwdBug::saved_as_rms:
        launch_pair<X, G, W, BwdBug::saved_as_rms>(a, s);
        break;
      case BwdBug::correction_without_w:
        launch_pair<X, G, W, BwdBug::correction_without_w>(a, s);
        break;
      case BwdBug::dw_unnormalized:
        launch_pair<X, G, W, BwdBug::dw_unnormalized>(a, s);
        break;
    }
    return cudaGetLastError();
  });
}

}  // namespace rb::kern

// naive backward (bwd and add-bwd): the obviously right GPU baseline. Two kernels, no
// workspace:
//   dx: one block per row, scalar loads; pass 1 sums S = sum_j (dy[j] * w[j]) * x[j] over
//       the row (block_sum), pass 2 re-reads the row from global memory and writes
//       dx = rrms * g - x * (rrms^3 / H) * S (+ ds_out), g = dy * w_eff (w, or 1 + w under
//       gemma and zero-centered: epilogue.cuh's weight transform).
//   dw: one thread per column, adding dy * x * rrms over all M rows in row order.
// Any H >= 1, any row strides, any base alignment (nothing is vectorized). M == 0 writes
// dw = 0.
// Numerics: fp32 everywhere, the saved rrms read (never recomputed); dw is one fp32 chain
// per column in row order, so it is deterministic without partials.
#include "kernels/bwd_common.cuh"
#include "kernels/launchers.h"

namespace rb::kern {
namespace {

constexpr int kThreads = 256;

template <class X, class G, class W, Convention C>
__global__ void __launch_bounds__(kThreads) bwd_naive_dx_kernel(BwdArgs a) {
  __shared__ float scratch[32];
  const std::int64_t row = blockIdx.x;
  const std::int64_t H = a.H;
  const BwdRow<X, G, W> io(a, row);

  const float s = strided_sum(threadIdx.x, H, blockDim.x, [&](std::int64_t c) {
    return to_f32(io.dy[c]) * effective_weight<C, W>(to_f32(io.w[c])) * to_f32(io.x[c]);
  });
  const float S = block_sum(s, scratch);
  const float r = a.rrms[row];
  const float corr = r * r * r / static_cast<float>(H) * S;
  for (std::int64_t c = threadIdx.x; c < H; c += blockDim.x) {
    const float g = to_f32(io.dy[c]) * effective_weight<C, W>(to_f32(io.w[c]));
    float d = r * g - to_f32(io.x[c]) * corr;
    if (io.ds != nullptr) d += to_f32(io.ds[c]);
    io.dx[c] = from_f32<X>(d);
  }
}

template <class X, class G, class W>
__global__ void __launch_bounds__(kThreads) bwd_naive_dw_kernel(BwdArgs a) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= a.H) return;
  const X* x = static_cast<const X*>(a.x);
  const G* dy = static_cast<const G*>(a.dy);
  const float acc = strided_sum(0, a.M, 1, [&](std::int64_t row) {
    return to_f32(dy[row * a.dy_stride + c]) * to_f32(x[row * a.x_stride + c]) * a.rrms[row];
  });
  static_cast<W*>(a.dw)[c] = from_f32<W>(acc);
}

}  // namespace

std::size_t bwd_naive_workspace_bytes(const BwdArgs&) { return 0; }

cudaError_t launch_bwd_naive(const BwdArgs& a, cudaStream_t s) {
  if (a.H < 1 || a.M < 0) return cudaErrorInvalidValue;
  return dispatch_bwd(a, [&](auto xt, auto gt, auto wt, auto c) -> cudaError_t {
    using X = decltype(xt);
    using G = decltype(gt);
    using W = decltype(wt);
    if (a.M > 0)
      bwd_naive_dx_kernel<X, G, W, decltype(c)::value><<<static_cast<unsigned>(a.M), kThreads, 0, s>>>(a);
    const std::int64_t blocks = (a.H + kThreads - 1) / kThreads;
    bwd_naive_dw_kernel<X, G, W><<<static_cast<unsigned>(blocks), kThreads, 0, s>>>(a);
    return cudaGetLastError();
  });
}

}  // namespace rb::kern

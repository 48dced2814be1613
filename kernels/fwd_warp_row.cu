// warp-row: a group of 4-32 lanes of one warp per row, several rows per block, the row held
// in registers (16-byte vectors, up to 8 per lane). For small H (up to 1K fp32, 2K
// fp16/bf16), where a block per row would leave most threads idle and pay a block per row.
// The reduction is warp shuffles only: no shared memory, no barrier.
// Any H >= 1 in range, any row stride, any base alignment (scalar head/tail peel per row).
// Numerics: fp32 accumulation, eps inside the sqrt, w(H) by column, rrms = 1/rms saved.
#include "kernels/launchers.h"
#include "kernels/row_in_registers.cuh"

namespace rb::kern {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxVpt = 8;

template <class T, class W, int G, int VPT>
__global__ void __launch_bounds__(kThreads) fwd_warp_row_kernel(FwdArgs a) {
  const int rank = threadIdx.x % G;
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * (kThreads / G) + threadIdx.x / G;
  const bool active = row < a.M;
  const std::int64_t r = active ? row : 0;
  const T* xrow = static_cast<const T*>(a.x) + r * a.x_stride;
  T* yrow = static_cast<T*>(a.y) + r * a.y_stride;
  float* rrms = a.rrms ? a.rrms + r : nullptr;
  rmsnorm_row_in_registers<T, W, VPT>(xrow, static_cast<const W*>(a.w), yrow, rrms, a.H, a.eps, rank,
                                      G, active, [](float v) { return group_sum(v, G); });
}

template <class T, class W, int G, int VPT>
cudaError_t launch_g(const FwdArgs& a, cudaStream_t s) {
  constexpr int kRowsPerBlock = kThreads / G;
  const std::int64_t blocks = (a.M + kRowsPerBlock - 1) / kRowsPerBlock;
  fwd_warp_row_kernel<T, W, G, VPT><<<static_cast<unsigned>(blocks), kThreads, 0, s>>>(a);
  return cudaGetLastError();
}

}  // namespace

std::int64_t warp_row_max_H(DType x) {
  const std::int64_t v = static_cast<std::int64_t>(16 / dtype_size(x));
  return 32 * kMaxVpt * v - v;
}

cudaError_t launch_fwd_warp_row(const FwdArgs& a, cudaStream_t s) {
  if (a.M == 0) return cudaSuccess;
  return dispatch_fwd_dtypes(a.xdtype, a.wdtype, [&](auto t, auto w) -> cudaError_t {
    using T = decltype(t);
    using W = decltype(w);
    const std::int64_t nv = row_vectors(a.H, sizeof(T)) + 1;
    // Smallest group that holds the row with 4 vectors per lane; 8 per lane at 32 lanes.
    if (nv <= 4 * 4) return launch_g<T, W, 4, 4>(a, s);
    if (nv <= 8 * 4) return launch_g<T, W, 8, 4>(a, s);
    if (nv <= 16 * 4) return launch_g<T, W, 16, 4>(a, s);
    if (nv <= 32 * 4) return launch_g<T, W, 32, 4>(a, s);
    if (nv <= 32 * kMaxVpt) return launch_g<T, W, 32, kMaxVpt>(a, s);
    return cudaErrorInvalidConfiguration;
  });
}

}  // namespace rb::kern

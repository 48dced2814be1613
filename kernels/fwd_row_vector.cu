// row-vector: one block per row, the whole row held in registers (16-byte vectors, up to
// 4 per thread), read from global memory exactly once. Good from H ~1K up to 16K (fp32) or
// 32K (fp16/bf16); beyond that the registers would spill: use `chunked`.
// Any H >= 1, any row stride, any base alignment: each row peels a scalar head up to its
// first 16-byte boundary, so rows of odd H (4097) still load full vectors.
// Numerics: fp32 accumulation, eps inside the sqrt, w(H) by column, rrms = 1/rms saved.
#include "kernels/launchers.h"
#include "kernels/row_in_registers.cuh"

namespace rb::kern {
namespace {

constexpr int kMaxThreads = 1024;
constexpr int kMaxVpt = 4;

template <class T, class W, int VPT>
__global__ void __launch_bounds__(kMaxThreads) fwd_row_vector_kernel(FwdArgs a) {
  __shared__ float scratch[32];
  const std::int64_t row = blockIdx.x;
  const T* xrow = static_cast<const T*>(a.x) + row * a.x_stride;
  T* yrow = static_cast<T*>(a.y) + row * a.y_stride;
  float* rrms = a.rrms ? a.rrms + row : nullptr;
  rmsnorm_row_in_registers<T, W, VPT>(xrow, static_cast<const W*>(a.w), yrow, rrms, a.H, a.eps,
                                      threadIdx.x, blockDim.x, true,
                                      [&](float v) { return block_sum(v, scratch); });
}

template <class T, class W, int VPT>
cudaError_t launch_vpt(const FwdArgs& a, cudaStream_t s, int threads) {
  fwd_row_vector_kernel<T, W, VPT><<<static_cast<unsigned>(a.M), threads, 0, s>>>(a);
  return cudaGetLastError();
}

}  // namespace

std::int64_t row_vector_max_H(DType x) {
  return static_cast<std::int64_t>(kMaxThreads) * kMaxVpt * static_cast<std::int64_t>(16 / dtype_size(x)) -
         static_cast<std::int64_t>(16 / dtype_size(x));
}

cudaError_t launch_fwd_row_vector(const FwdArgs& a, cudaStream_t s) {
  if (a.M == 0) return cudaSuccess;
  return dispatch_fwd_dtypes(a.xdtype, a.wdtype, [&](auto t, auto w) -> cudaError_t {
    using T = decltype(t);
    using W = decltype(w);
    // +1: the head peel can leave the body straddling one more vector than H / V.
    const std::int64_t nv = row_vectors(a.H, sizeof(T)) + 1;
    // Fewest vectors per thread that keep the block at <= 512 threads (one vector per
    // thread below that), so loads in flight per SM stay high without spilling.
    int vpt = 1;
    while (vpt < kMaxVpt && (nv + vpt - 1) / vpt > 512) vpt *= 2;
    std::int64_t threads = (nv + vpt - 1) / vpt;
    threads = ((threads + 31) / 32) * 32;
    if (threads < 64) threads = 64;
    if (threads > kMaxThreads) return cudaErrorInvalidConfiguration;
    switch (vpt) {
      case 1: return launch_vpt<T, W, 1>(a, s, static_cast<int>(threads));
      case 2: return launch_vpt<T, W, 2>(a, s, static_cast<int>(threads));
      case 4: return launch_vpt<T, W, 4>(a, s, static_cast<int>(threads));
    }
    return cudaErrorInvalidConfiguration;
  });
}

}  // namespace rb::kern

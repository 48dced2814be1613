// row-vector: one block per row, the whole row held in registers as 16-byte vectors, 4 per
// thread (8 past 2K vectors, so a block stays at <= 512 threads), read from global memory
// exactly once. Good from H ~2K to ~8K in fp16/bf16 (docs/perf-notes.md); holds up to 32K
// (fp16/bf16) or 16K (fp32); beyond that use `chunked`.
// Any H >= 1, any row stride, any base alignment: each row peels a scalar head up to its
// first 16-byte boundary, so rows of odd H (4097) still load full vectors.
// Numerics: fp32 accumulation, eps inside the sqrt, w(H) by column, rrms = 1/rms saved.
#include "kernels/launchers.h"
#include "kernels/row_in_registers.cuh"

namespace rb::kern {
namespace {

constexpr int kMaxThreads = 512;
constexpr int kVpt = 4;     // vectors per thread: four 16-byte loads in flight each
constexpr int kMaxVpt = 8;  // for rows past kMaxThreads * kVpt vectors

template <class T, class W, int VPT>
__global__ void __launch_bounds__(kMaxThreads) fwd_row_vector_kernel(FwdArgs a) {
  __shared__ float scratch[32];
  const int rank = threadIdx.x, size = blockDim.x;
  const std::int64_t row = blockIdx.x;
  RowSlice<T, VPT, 1> slice;
  slice.load(static_cast<const T*>(a.x) + row * a.x_stride, a.H, rank, size, true);
  const float r = rsqrtf(block_sum(slice.sumsq(rank, size), scratch) / static_cast<float>(a.H) + a.eps);
  if (a.rrms != nullptr && rank == 0) a.rrms[row] = r;
  slice.store(static_cast<const W*>(a.w), static_cast<T*>(a.y) + row * a.y_stride, r, a.H, rank, size);
}

template <class T, class W, int VPT>
cudaError_t launch_vpt(const FwdArgs& a, cudaStream_t s, std::int64_t nv) {
  std::int64_t threads = ((nv + VPT - 1) / VPT + 31) / 32 * 32;
  if (threads < 32) threads = 32;  // a block reduction needs one whole warp
  if (threads > kMaxThreads) return cudaErrorInvalidConfiguration;
  fwd_row_vector_kernel<T, W, VPT><<<static_cast<unsigned>(a.M), static_cast<unsigned>(threads), 0, s>>>(a);
  return cudaGetLastError();
}

}  // namespace

std::int64_t row_vector_max_H(DType x) {
  return static_cast<std::int64_t>(kMaxThreads) * kMaxVpt * static_cast<std::int64_t>(16 / dtype_size(x));
}

cudaError_t launch_fwd_row_vector(const FwdArgs& a, cudaStream_t s) {
  if (a.M == 0) return cudaSuccess;
  return dispatch_fwd_dtypes(a.xdtype, a.wdtype, [&](auto t, auto w) -> cudaError_t {
    using T = decltype(t);
    using W = decltype(w);
    const std::int64_t nv = row_vectors(a.H, sizeof(T));
    if (nv <= static_cast<std::int64_t>(kMaxThreads) * kVpt) return launch_vpt<T, W, kVpt>(a, s, nv);
    return launch_vpt<T, W, kMaxVpt>(a, s, nv);
  });
}

}  // namespace rb::kern

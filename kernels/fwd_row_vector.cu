// row-vector: a block per row at a time, the whole row held in registers (16-byte vectors,
// up to 8 per thread, blocks of at most 512 threads), read from global memory exactly once.
// Persistent grid: each block walks rows with a stride and prefetches its next row into a
// second register set while it reduces and stores the current one.
// Good from H ~1K up to 16K (fp32) or 32K (fp16/bf16); beyond that use `chunked`.
// Any H >= 1, any row stride, any base alignment: each row peels a scalar head up to its
// first 16-byte boundary, so rows of odd H (4097) still load full vectors.
// Numerics: fp32 accumulation, eps inside the sqrt, w(H) by column, rrms = 1/rms saved.
#include "kernels/launchers.h"
#include "kernels/row_in_registers.cuh"

namespace rb::kern {
namespace {

constexpr int kMaxThreads = 512;
constexpr int kMaxVpt = 8;

template <class T, class W, int VPT>
__global__ void __launch_bounds__(kMaxThreads) fwd_row_vector_kernel(FwdArgs a) {
  __shared__ float scratch[32];
  const int rank = threadIdx.x, size = blockDim.x;
  const T* x = static_cast<const T*>(a.x);
  T* y = static_cast<T*>(a.y);
  const W* w = static_cast<const W*>(a.w);
  std::int64_t row = blockIdx.x;
  if (row >= a.M) return;
  RowSlice<T, VPT, 1> cur, next;
  cur.load(x + row * a.x_stride, a.H, rank, size, true);
  for (;;) {
    const std::int64_t next_row = row + gridDim.x;
    const bool more = next_row < a.M;
    if (more) next.load(x + next_row * a.x_stride, a.H, rank, size, true);
    const float r = rsqrtf(block_sum(cur.sumsq(rank, size), scratch) / static_cast<float>(a.H) + a.eps);
    if (a.rrms != nullptr && rank == 0) a.rrms[row] = r;
    cur.store(w, y + row * a.y_stride, r, a.H, rank, size);
    if (!more) break;
    cur = next;
    row = next_row;
  }
}

template <class T, class W, int VPT>
cudaError_t launch_vpt(const FwdArgs& a, cudaStream_t s, int threads) {
  const auto kernel = fwd_row_vector_kernel<T, W, VPT>;
  const int grid = persistent_grid(kernel, threads, a.M);
  if (grid <= 0) return cudaErrorInvalidConfiguration;
  kernel<<<grid, threads, 0, s>>>(a);
  return cudaGetLastError();
}

}  // namespace

std::int64_t row_vector_max_H(DType x) {
  // row_vectors(H) = ceil(H / V) + 1 <= kMaxThreads * kMaxVpt, so H <= (that - 1) * V
  const std::int64_t v = static_cast<std::int64_t>(16 / dtype_size(x));
  return (static_cast<std::int64_t>(kMaxThreads) * kMaxVpt - 1) * v;
}

cudaError_t launch_fwd_row_vector(const FwdArgs& a, cudaStream_t s) {
  if (a.M == 0) return cudaSuccess;
  return dispatch_fwd_dtypes(a.xdtype, a.wdtype, [&](auto t, auto w) -> cudaError_t {
    using T = decltype(t);
    using W = decltype(w);
    const std::int64_t nv = row_vectors(a.H, sizeof(T));
    // Fewest vectors per thread that keep the block at <= 512 threads.
    int vpt = 1;
    while (vpt < kMaxVpt && (nv + vpt - 1) / vpt > kMaxThreads) vpt *= 2;
    std::int64_t threads = (nv + vpt - 1) / vpt;
    threads = ((threads + 31) / 32) * 32;
    if (threads < 64) threads = 64;
    if (threads > kMaxThreads) return cudaErrorInvalidConfiguration;
    switch (vpt) {
      case 1: return launch_vpt<T, W, 1>(a, s, static_cast<int>(threads));
      case 2: return launch_vpt<T, W, 2>(a, s, static_cast<int>(threads));
      case 4: return launch_vpt<T, W, 4>(a, s, static_cast<int>(threads));
      case 8: return launch_vpt<T, W, 8>(a, s, static_cast<int>(threads));
    }
    return cudaErrorInvalidConfiguration;
  });
}

}  // namespace rb::kern

// row-vector: the whole row held in registers as 16-byte vectors, VPT per thread, read
// from global memory exactly once; a group of ceil(H / (8 or 4) / VPT) threads (whole
// warps) per row, `rows` rows per block (1 by default: more measured slower). Holds up
// to 32K (fp16/bf16) or 16K (fp32). On the H200 it wins only for fp32 around H=8K, where
// chunked's 512-thread blocks hold too few rows per SM (docs/perf-notes.md).
// Any H >= 1, any row stride, any base alignment: each row peels a scalar head up to its
// first 16-byte boundary, so rows of odd H (4097) still load full vectors.
// Numerics: fp32 accumulation, eps inside the sqrt, w(H) by column, rrms = 1/rms saved; y
// by the convention's epilogue (epilogue.cuh), in x's dtype or fp8 with amax.
#include "kernels/launchers.h"
#include "kernels/row_in_registers.cuh"

namespace rb::kern {
namespace {

constexpr int kMaxThreads = 512;  // per block
constexpr int kMaxVpt = 8;

template <class T, class W, Convention C, class Y, int VPT>
__global__ void __launch_bounds__(kMaxThreads) fwd_row_vector_kernel(FwdArgs a, int group, bool pdl) {
  if (pdl) pdl_begin();
  __shared__ float scratch[32];
  const int rank = threadIdx.x % group;
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / group) + threadIdx.x / group;
  const bool active = row < a.M;
  const std::int64_t r0 = active ? row : 0;
  RowSlice<T, VPT, 1> slice;
  slice.load(static_cast<const T*>(a.x) + r0 * a.x_stride, a.H, rank, group, active);
  const float total = segmented_block_sum(slice.sumsq(rank, group), scratch, group);
  if (!active) return;
  const float r = rsqrtf(total / static_cast<float>(a.H) + a.eps);
  if (a.rrms != nullptr && rank == 0) a.rrms[row] = r;
  Epilogue<C, T, W, Y> epi(a.scale);
  slice.store(epi, static_cast<const W*>(a.w), static_cast<Y*>(a.y) + row * a.y_stride, r, a.H, rank, group);
  epi.flush(a.amax);
}

template <class T, class W, Convention C, class Y, int VPT>
cudaError_t launch_vpt(const FwdArgs& a, cudaStream_t s, std::int64_t nv, int rows) {
  std::int64_t group = ((nv + VPT - 1) / VPT + 31) / 32 * 32;
  if (group < 32) group = 32;  // segments are whole warps
  if (group * rows > kMaxThreads) return cudaErrorInvalidConfiguration;
  const unsigned blocks = static_cast<unsigned>((a.M + rows - 1) / rows);
  const unsigned threads = static_cast<unsigned>(group * rows);
  return launch_per_rows(fwd_row_vector_kernel<T, W, C, Y, VPT>, blocks, threads, 0, s, a, static_cast<int>(group));
}

}  // namespace

std::int64_t row_vector_max_H(DType x) {
  return static_cast<std::int64_t>(kMaxThreads) * kMaxVpt * static_cast<std::int64_t>(16 / dtype_size(x));
}

cudaError_t launch_fwd_row_vector_cfg(const FwdArgs& a, cudaStream_t s, int vpt, int rows) {
  if (const cudaError_t e = begin_output(a, s); e != cudaSuccess) return e;
  if (a.M == 0) return cudaSuccess;
  return dispatch_fwd_dtypes(a.xdtype, a.wdtype, [&](auto t, auto w) -> cudaError_t {
    using T = decltype(t);
    using W = decltype(w);
    const std::int64_t nv = row_vectors(a.H, sizeof(T));
    const auto launch = [&](auto c, auto y) -> cudaError_t {
      using Y = decltype(y);
      constexpr Convention C = decltype(c)::value;
      switch (vpt) {
        case 4:
          return launch_vpt<T, W, C, Y, 4>(a, s, nv, rows);
        case 8:
          return launch_vpt<T, W, C, Y, 8>(a, s, nv, rows);
      }
      return cudaErrorInvalidConfiguration;
    };
    // vpt 2 is a tuning configuration (launch_fwd_row_vector never picks it): built for the
    // fp32 convention with y in x's dtype only, which bounds the build.
    if (vpt == 2)
      return dispatch_epilogue_fp32_only<T>(a.conv, a.ydtype, a.xdtype, [&](auto c, auto y) {
        return launch_vpt<T, W, decltype(c)::value, decltype(y), 2>(a, s, nv, rows);
      });
    return dispatch_epilogue<T, W>(a.conv, a.ydtype, a.xdtype, launch);
  });
}

cudaError_t launch_fwd_row_vector(const FwdArgs& a, cudaStream_t s) {
  // 4 vectors a thread (8 once a row needs more than a 512-thread block), one row a block.
  const std::int64_t nv = row_vectors(a.H, dtype_size(a.xdtype));
  return launch_fwd_row_vector_cfg(a, s, nv <= 4 * kMaxThreads ? 4 : 8, 1);
}

}  // namespace rb::kern

// Deliberately wrong forward kernels: each one implements a classic RMSNorm bug, so the
// validator can prove it catches it. Registered as mutant-* (listed by `list --all`), never
// run by default. Structure is `naive`'s (block per row, scalar) with one bug each; "padded"
// means H rounded up to a whole 8-element vector, as a vectorized kernel without a masked
// tail would see it. Besides launchers.h's list:
//   no_eps:         rsqrt(ms), eps forgotten: right wherever eps is small against ms, so only
//                   rows of zeros (an inf, then NaN) and tiny rows show it;
//   stride_ignored: rows of x and y addressed at row * H, as if every row were contiguous;
//   warp_sum_only:  each warp normalises by its own warp's sum of squares (the block's
//                   reduction across warps left out): right while a row fits one warp.
#include "kernels/common.cuh"
#include "kernels/launchers.h"

namespace rb::kern {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kPad = 8;

// Never set: mutant-hang's last row waits on it for good.
__device__ int g_never_set = 0;

template <class T, class W, FwdBug B>
__global__ void __launch_bounds__(kThreads) fwd_mutant_kernel(FwdArgs a) {
  __shared__ float scratch[32];
  const std::int64_t row = blockIdx.x;
  const std::int64_t x_stride = B == FwdBug::stride_ignored ? a.H : a.x_stride;
  const std::int64_t y_stride = B == FwdBug::stride_ignored ? a.H : a.y_stride;
  const T* x = static_cast<const T*>(a.x) + row * x_stride;
  const W* w = static_cast<const W*>(a.w);
  T* y = static_cast<T*>(a.y) + row * y_stride;
  const std::int64_t H = a.H;
  const std::int64_t padded = (H + kPad - 1) / kPad * kPad;
  const std::int64_t load_end = B == FwdBug::tail_load ? padded : H;
  const std::int64_t store_end = B == FwdBug::tail_store ? padded : H;
  const float denom = static_cast<float>(B == FwdBug::pad_denominator ? padded : H);

  // A device fault, not a numerics bug: the last row's block traps, which leaves the context
  // unusable (the harness must end the run with exit 4, every earlier row on disk).
  if constexpr (B == FwdBug::trap) {
    if (row == a.M - 1) __trap();
  }
  // A hang, not a numerics bug: the last row's block waits for a flag nothing sets (a
  // deadlocked kernel); the harness must give up after --kernel-timeout, exit 4, rows kept.
  if constexpr (B == FwdBug::hang) {
    if (row == a.M - 1)
      while (*static_cast<volatile int*>(&g_never_set) == 0) __nanosleep(1000);
  }

  float mean = 0.f;
  if constexpr (B == FwdBug::mean_sub) {
    float s = 0.f;
    for (std::int64_t c = threadIdx.x; c < H; c += blockDim.x) s += to_f32(x[c]);
    mean = block_sum(s, scratch) / static_cast<float>(H);
  }

  float sumsq = 0.f;
  if constexpr (B == FwdBug::half_accum) {
    // Squares rounded to and summed in the storage dtype.
    T acc = from_f32<T>(0.f);
    for (std::int64_t c = threadIdx.x; c < H; c += blockDim.x) {
      const T sq = from_f32<T>(to_f32(x[c]) * to_f32(x[c]));
      acc = from_f32<T>(to_f32(acc) + to_f32(sq));
    }
    sumsq = to_f32(acc);
  } else {
    for (std::int64_t c = threadIdx.x; c < load_end; c += blockDim.x) {
      const float v = to_f32(x[c]) - mean;
      sumsq += v * v;
    }
  }
  float total = B == FwdBug::warp_sum_only ? group_sum(sumsq, 32) : block_sum(sumsq, scratch);
  if constexpr (B == FwdBug::half_accum) total = to_f32(from_f32<T>(total));

  const float ms = total / denom;
  float r = rsqrtf(ms + a.eps);
  if constexpr (B == FwdBug::eps_outside) r = 1.f / (sqrtf(ms) + a.eps);
  if constexpr (B == FwdBug::no_eps) r = rsqrtf(ms);
  if (a.rrms != nullptr && threadIdx.x == 0) a.rrms[row] = r;
  for (std::int64_t c = threadIdx.x; c < store_end; c += blockDim.x) {
    const std::int64_t wc = B == FwdBug::weight_row_offset ? (c + row) % H : c;
    y[c] = from_f32<T>((to_f32(x[c]) - mean) * r * to_f32(w[wc]));
  }
}

template <class T, class W>
cudaError_t launch_bug(FwdBug bug, const FwdArgs& a, cudaStream_t s) {
  const unsigned grid = static_cast<unsigned>(a.M);
  switch (bug) {
    case FwdBug::half_accum: fwd_mutant_kernel<T, W, FwdBug::half_accum><<<grid, kThreads, 0, s>>>(a); break;
    case FwdBug::eps_outside: fwd_mutant_kernel<T, W, FwdBug::eps_outside><<<grid, kThreads, 0, s>>>(a); break;
    case FwdBug::weight_row_offset:
      fwd_mutant_kernel<T, W, FwdBug::weight_row_offset><<<grid, kThreads, 0, s>>>(a);
      break;
    case FwdBug::tail_store: fwd_mutant_kernel<T, W, FwdBug::tail_store><<<grid, kThreads, 0, s>>>(a); break;
    case FwdBug::tail_load: fwd_mutant_kernel<T, W, FwdBug::tail_load><<<grid, kThreads, 0, s>>>(a); break;
    case FwdBug::mean_sub: fwd_mutant_kernel<T, W, FwdBug::mean_sub><<<grid, kThreads, 0, s>>>(a); break;
    case FwdBug::pad_denominator:
      fwd_mutant_kernel<T, W, FwdBug::pad_denominator><<<grid, kThreads, 0, s>>>(a);
      break;
    case FwdBug::trap: fwd_mutant_kernel<T, W, FwdBug::trap><<<grid, kThreads, 0, s>>>(a); break;
    case FwdBug::hang: fwd_mutant_kernel<T, W, FwdBug::hang><<<grid, kThreads, 0, s>>>(a); break;
    case FwdBug::no_eps: fwd_mutant_kernel<T, W, FwdBug::no_eps><<<grid, kThreads, 0, s>>>(a); break;
    case FwdBug::stride_ignored:
      fwd_mutant_kernel<T, W, FwdBug::stride_ignored><<<grid, kThreads, 0, s>>>(a);
      break;
    case FwdBug::warp_sum_only:
      fwd_mutant_kernel<T, W, FwdBug::warp_sum_only><<<grid, kThreads, 0, s>>>(a);
      break;
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_fwd_mutant(FwdBug bug, const FwdArgs& a, cudaStream_t s) {
  if (a.M == 0) return cudaSuccess;
  return dispatch_fwd_dtypes(a.xdtype, a.wdtype, [&](auto t, auto w) -> cudaError_t {
    return launch_bug<decltype(t), decltype(w)>(bug, a, s);
  });
}

}  // namespace rb::kern

// Deliberately wrong forward kernels: each one implements a classic RMSNorm bug, so the
// validator can prove it catches it. Registered as mutant-* (listed by `list --all`), never
// run by default. Structure is `naive`'s (block per row, scalar) with one bug each; "padded"
// means H rounded up to a whole 8-element vector, as a vectorized kernel without a masked
// tail would see it. Besides launchers.h's list:
//   no_eps:         rsqrt(ms), eps forgotten: right wherever eps is small against ms, so only
//                   rows of zeros (an inf, then NaN) and tiny rows show it;
//   stride_ignored: rows of x and y addressed at row * H, as if every row were contiguous;
//   warp_sum_only:  each warp normalises by its own warp's sum of squares (the block's
//                   reduction across warps left out): right while a row fits one warp;
//   one_row_a_block: a persistent grid (as many blocks as are resident, at most M) whose
//                   loop over rows is forgotten: block b runs row b alone, so right while
//                   M fits one wave, and the rows past it keep whatever y held;
//   offset_32bit:   each row of x and y addressed by its byte offset taken in 32 bits
//                   (mod 2^32): right while a tensor spans less than 4 GiB, past that a
//                   row reads and writes an earlier row (only the wide preset shows it).
#include <cstdint>
#include <type_traits>

#include "kernels/common.cuh"
#include "kernels/launchers.h"
#include "kernels/mutants/one_of.h"

namespace rb::kern {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kPad = 8;

// Never set: mutant-hang's last row waits on it for good.
__device__ int g_never_set = 0;

// Where row `row` of a tensor starts as the mutant addresses it: offset_32bit wraps the byte
// offset at 4 GiB.
template <FwdBug B, class P>
__device__ P* row_start(P* base, std::int64_t row, std::int64_t stride) {
  if constexpr (B == FwdBug::offset_32bit) {
    using Byte = std::conditional_t<std::is_const_v<P>, const unsigned char, unsigned char>;
    const auto bytes = static_cast<std::uint32_t>(static_cast<std::uint64_t>(row * stride) * sizeof(P));
    return reinterpret_cast<P*>(reinterpret_cast<Byte*>(base) + bytes);
  }
  return base + row * stride;
}

template <class T, class W, FwdBug B>
__global__ void __launch_bounds__(kThreads) fwd_mutant_kernel(FwdArgs a) {
  __shared__ float scratch[32];
  const std::int64_t row = blockIdx.x;
  const std::int64_t x_stride = B == FwdBug::stride_ignored ? a.H : a.x_stride;
  const std::int64_t y_stride = B == FwdBug::stride_ignored ? a.H : a.y_stride;
  const T* x = row_start<B>(static_cast<const T*>(a.x), row, x_stride);
  const W* w = static_cast<const W*>(a.w);
  T* y = row_start<B>(static_cast<T*>(a.y), row, y_stride);
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
  const bool known = one_of<FwdBug::half_accum, FwdBug::eps_outside, FwdBug::weight_row_offset, FwdBug::tail_store,
                            FwdBug::tail_load, FwdBug::mean_sub, FwdBug::pad_denominator, FwdBug::trap, FwdBug::hang,
                            FwdBug::no_eps, FwdBug::stride_ignored, FwdBug::warp_sum_only, FwdBug::one_row_a_block,
                            FwdBug::offset_32bit>(
      bug, [&](auto b) {
        constexpr FwdBug B = decltype(b)::value;
        const auto kernel = fwd_mutant_kernel<T, W, B>;
        // one_row_a_block: the resident blocks, at most M, each running its first row only.
        const std::int64_t grid = B == FwdBug::one_row_a_block ? persistent_grid(kernel, kThreads, a.M) : a.M;
        kernel<<<static_cast<unsigned>(grid), kThreads, 0, s>>>(a);
      });
  return known ? cudaGetLastError() : cudaErrorInvalidValue;
}

}  // namespace

cudaError_t launch_fwd_mutant(FwdBug bug, const FwdArgs& a, cudaStream_t s) {
  if (a.M == 0) return cudaSuccess;
  return dispatch_fwd_dtypes(a.xdtype, a.wdtype, [&](auto t, auto w) -> cudaError_t {
    return launch_bug<decltype(t), decltype(w)>(bug, a, s);
  });
}

}  // namespace rb::kern

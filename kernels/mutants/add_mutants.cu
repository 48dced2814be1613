// Deliberately wrong fused residual add kernels: each one implements a classic bug of the
// fused op, so the validator can prove it catches it. Structure is the add `naive`'s (block
// per row, scalar, two passes) with one bug each; everything else is right.
//   residual_storage_dtype: the sum rounded to x's storage dtype, s = T(x + r), and that
//     rounded value squared, stored (as R) and normalized. Invisible in s when R is T
//     (one rounding to T either way); caught through s when R is fp32.
//   saved_rms: rms = sqrt(mean(s^2) + eps) saved where rrms = 1/rms belongs; y is right.
//   residual_not_updated: the residual stream's output keeps the old residual (r stored where
//     s = x + r belongs); y is right.
//   norm_of_x: y normalises x, not the sum (its rms and its values); s is stored right.
//   residual_in_place: y and s right, and s also written over the residual input r, as a
//     fused add written for an in-place residual stream does (only the runner's check that
//     inputs stay as uploaded catches it).
#include "kernels/add_common.cuh"
#include "kernels/launchers.h"
#include "kernels/mutants/one_of.h"

namespace rb::kern {
namespace {

constexpr int kThreads = 256;

// The row's sum at column j as this mutant forms it.
template <AddBug B, class T, class R>
__device__ __forceinline__ float mutant_sum(const T* x, const R* r, std::int64_t j) {
  const float v = add_elem(x, r, j);
  if constexpr (B == AddBug::residual_storage_dtype) return to_f32(from_f32<T>(v));
  if constexpr (B == AddBug::norm_of_x) return to_f32(x[j]);
  return v;
}

template <class T, class W, class R, AddBug B>
__global__ void __launch_bounds__(kThreads) add_mutant_kernel(AddArgs a) {
  __shared__ float scratch[32];
  const std::int64_t row = blockIdx.x;
  const AddRow<T, W, R> io(a, row);

  float sumsq = 0.f;
  for (std::int64_t c = threadIdx.x; c < a.H; c += blockDim.x) {
    const float v = mutant_sum<B>(io.x, io.r, c);  // as it is squared and normalised
    R stored = from_f32<R>(B == AddBug::norm_of_x ? add_elem(io.x, io.r, c) : v);
    if constexpr (B == AddBug::residual_not_updated) stored = io.r[c];
    io.s[c] = stored;
    sumsq += v * v;
  }
  const float ms = block_sum(sumsq, scratch) / static_cast<float>(a.H);
  const float rr = rsqrtf(ms + a.eps);
  if (a.rrms != nullptr && threadIdx.x == 0) a.rrms[row] = B == AddBug::saved_rms ? sqrtf(ms + a.eps) : rr;
  for (std::int64_t c = threadIdx.x; c < a.H; c += blockDim.x) {
    const float v = mutant_sum<B>(io.x, io.r, c);
    normalize_elem(v, rr, io.w, io.y, c);
    // The same thread read r[c] in both passes: y and s are right, r is left holding s.
    if constexpr (B == AddBug::residual_in_place) const_cast<R*>(io.r)[c] = from_f32<R>(v);
  }
}

template <class T, class W, class R>
cudaError_t launch_bug(AddBug bug, const AddArgs& a, cudaStream_t s) {
  const bool known = one_of<AddBug::residual_storage_dtype, AddBug::saved_rms, AddBug::residual_not_updated,
                            AddBug::norm_of_x, AddBug::residual_in_place>(bug, [&](auto b) {
    add_mutant_kernel<T, W, R, decltype(b)::value><<<static_cast<unsigned>(a.M), kThreads, 0, s>>>(a);
  });
  return known ? cudaGetLastError() : cudaErrorInvalidValue;
}

}  // namespace

cudaError_t launch_add_mutant(AddBug bug, const AddArgs& a, cudaStream_t s) {
  if (a.M == 0) return cudaSuccess;
  return dispatch_add_dtypes(a.xdtype, a.wdtype, a.rdtype, [&](auto t, auto w, auto r) -> cudaError_t {
    return launch_bug<decltype(t), decltype(w), decltype(r)>(bug, a, s);
  });
}

}  // namespace rb::kern

// Deliberately wrong fp8 outputs of the forward: each one a classic bug of an fp8 y with a
// per-tensor scale and an amax output (TransformerEngine's form: y8 = satfinite(y * scale),
// amax = max |y| before the scale), so the validator can prove it catches it. Registered as
// mutant-*, never run by default. Structure is the forward `naive`'s (block per row, scalar)
// under the fp32 convention; with y in x's dtype each is right (the bug is in the fp8 store),
// so only the validation preset's fp8 sweep shows them:
//   amax_plain_store: each block stores its row's amax with a plain store where a max over
//                     the tensor belongs: the last block to store wins;
//   amax_after_scale: amax taken of y * scale, not of y (right at scale 1);
//   no_saturate:      y * scale converted without saturation: past the format's largest
//                     finite value e4m3 gives NaN (e5m2 inf).
#include "kernels/block_row_rrms.cuh"
#include "kernels/epilogue.cuh"
#include "kernels/launchers.h"
#include "kernels/mutants/one_of.h"

namespace rb::kern {
namespace {

constexpr int kThreads = 256;

// The largest v over the block; `scratch` holds 32 floats of shared memory, free on entry.
__device__ __forceinline__ float block_max(float v, float* scratch) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float t = lane < blockDim.x / 32 ? scratch[lane] : 0.f;
  for (int o = 16; o > 0; o >>= 1) t = fmaxf(t, __shfl_xor_sync(0xffffffffu, t, o));
  return t;
}

template <class T, class W, class Y, Fp8Bug B>
__global__ void __launch_bounds__(kThreads) fp8_mutant_kernel(FwdArgs a) {
  __shared__ float scratch[32];
  const std::int64_t row = blockIdx.x;
  const T* x = static_cast<const T*>(a.x) + row * a.x_stride;
  const W* w = static_cast<const W*>(a.w);
  const float r = block_row_rrms(x, a.H, a.eps, scratch);
  if (a.rrms != nullptr && threadIdx.x == 0) a.rrms[row] = r;
  if constexpr (!kIsFp8<Y>) {
    Y* y = static_cast<Y*>(a.y) + row * a.y_stride;
    for (std::int64_t c = threadIdx.x; c < a.H; c += blockDim.x) y[c] = from_f32<Y>(to_f32(x[c]) * r * to_f32(w[c]));
  } else {
    auto* y = static_cast<unsigned char*>(a.y) + row * a.y_stride;
    const float scale = *a.scale;
    float m = 0.f;
    for (std::int64_t c = threadIdx.x; c < a.H; c += blockDim.x) {
      const float o = to_f32(x[c]) * r * to_f32(w[c]);
      m = fmaxf(m, fabsf(B == Fp8Bug::amax_after_scale ? o * scale : o));
      y[c] = static_cast<unsigned char>(
          __nv_cvt_float_to_fp8(o * scale, B == Fp8Bug::no_saturate ? __NV_NOSAT : __NV_SATFINITE, kFp8Kind<Y>));
    }
    if constexpr (B == Fp8Bug::amax_plain_store) {
      const float row_max = block_max(m, scratch);
      if (threadIdx.x == 0) *a.amax = row_max;
    } else {
      flush_amax(m, a.amax);
    }
  }
}

}  // namespace

cudaError_t launch_fp8_mutant(Fp8Bug bug, const FwdArgs& a, cudaStream_t s) {
  if (a.conv != Convention::fp32) return cudaErrorInvalidValue;
  if (const cudaError_t e = begin_output(a, s); e != cudaSuccess) return e;
  if (a.M == 0) return cudaSuccess;
  return dispatch_fwd(a, [&](auto t, auto w, auto c, auto y) -> cudaError_t {
    if constexpr (decltype(c)::value != Convention::fp32) {
      return cudaErrorInvalidValue;  // the fp32 convention only (registered so)
    } else {
      const bool known = one_of<Fp8Bug::amax_plain_store, Fp8Bug::amax_after_scale, Fp8Bug::no_saturate>(
          bug, [&](auto b) {
            fp8_mutant_kernel<decltype(t), decltype(w), decltype(y), decltype(b)::value>
                <<<static_cast<unsigned>(a.M), kThreads, 0, s>>>(a);
          });
      return known ? cudaGetLastError() : cudaErrorInvalidValue;
    }
  });
}

}  // namespace rb::kern

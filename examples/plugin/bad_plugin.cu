// Example plugin "example-bad": two WRONG forward kernels, on purpose. They load, register and
// run like any plugin kernel; the validation sweep must fail them. Never copy them.
//
//   example-eps-outside    rrms = 1 / (sqrt(mean(x^2)) + eps): eps outside the sqrt. Off by
//                          about eps / (2 * mean(x^2)) relative: invisible for O(1) inputs,
//                          large when mean(x^2) is near eps (the sweep's `tiny` inputs);
//                          on an all-zero row (`zero-row`) y is 0 either way, but the saved
//                          rrms is 1/eps instead of 1/sqrt(eps).
//   example-weight-by-row  y = x * rrms * w[(c + row) % H]: the weight indexed with a row
//                          offset. Right for row 0 only, so any sweep with M > 1 catches it.
//
// Otherwise written like good_plugin.cu: block per row, scalar loads, fp32 accumulation, any
// H, any stride, any alignment; fp32/fp32, fp16/fp16, bf16/bf16.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "rmsnorm_bench_plugin.h"

namespace {

constexpr int kThreads = 256;

enum class Bug { eps_outside, weight_by_row };

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ void store(float* p, float v) { *p = v; }
__device__ __forceinline__ void store(__half* p, float v) { *p = __float2half_rn(v); }
__device__ __forceinline__ void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }

template <Bug bug, class T>
__global__ void __launch_bounds__(kThreads) wrong_fwd_kernel(rb_fwd_args a) {
  __shared__ float scratch[32];
  const std::int64_t row = blockIdx.x;
  const T* x = static_cast<const T*>(a.x) + row * a.x_stride;
  const T* w = static_cast<const T*>(a.w);
  T* y = static_cast<T*>(a.y) + row * a.y_stride;

  float sq = 0.f;
  for (std::int64_t c = threadIdx.x; c < a.H; c += blockDim.x) sq += to_float(x[c]) * to_float(x[c]);
  for (int o = 16; o > 0; o /= 2) sq += __shfl_xor_sync(0xffffffffu, sq, o);
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = sq;
  __syncthreads();
  sq = threadIdx.x % 32 < blockDim.x / 32 ? scratch[threadIdx.x % 32] : 0.f;  // every warp: the total
  for (int o = 16; o > 0; o /= 2) sq += __shfl_xor_sync(0xffffffffu, sq, o);
  const float mean_sq = sq / static_cast<float>(a.H);

  const float rrms = bug == Bug::eps_outside ? 1.f / (sqrtf(mean_sq) + a.eps)  // WRONG
                                             : 1.f / sqrtf(mean_sq + a.eps);
  if (a.rrms && threadIdx.x == 0) a.rrms[row] = rrms;
  for (std::int64_t c = threadIdx.x; c < a.H; c += blockDim.x) {
    const std::int64_t wc = bug == Bug::weight_by_row ? (c + row) % a.H : c;  // WRONG for weight_by_row
    store(&y[c], to_float(x[c]) * rrms * to_float(w[wc]));
  }
}

template <Bug bug>
int wrong_fwd(const rb_fwd_args* a, void* stream) {
  if (a->M <= 0) return 0;
  if (a->wdtype != a->xdtype) return static_cast<int>(cudaErrorInvalidValue);
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  const unsigned rows = static_cast<unsigned>(a->M);
  switch (a->xdtype) {
    case RB_FP32:
      wrong_fwd_kernel<bug, float><<<rows, kThreads, 0, s>>>(*a);
      break;
    case RB_FP16:
      wrong_fwd_kernel<bug, __half><<<rows, kThreads, 0, s>>>(*a);
      break;
    case RB_BF16:
      wrong_fwd_kernel<bug, __nv_bfloat16><<<rows, kThreads, 0, s>>>(*a);
      break;
    default:
      return static_cast<int>(cudaErrorInvalidValue);
  }
  return static_cast<int>(cudaGetLastError());
}

const rb_dtype_combo kCombos[] = {{RB_FP32, RB_FP32}, {RB_FP16, RB_FP16}, {RB_BF16, RB_BF16}};
constexpr size_t kNumCombos = sizeof kCombos / sizeof kCombos[0];

const rb_kernel kKernels[] = {
    {"example-eps-outside", "WRONG on purpose: eps outside the sqrt", RB_OP_FWD, kCombos, kNumCombos, 1,
     INT64_MAX, 0, nullptr, nullptr, wrong_fwd<Bug::eps_outside>, nullptr, nullptr},
    {"example-weight-by-row", "WRONG on purpose: weight indexed by (col + row) % H", RB_OP_FWD, kCombos,
     kNumCombos, 1, INT64_MAX, 0, nullptr, nullptr, wrong_fwd<Bug::weight_by_row>, nullptr, nullptr},
};

const rb_plugin kPlugin = {
    RB_PLUGIN_ABI_VERSION, "example-bad", "1.0.0", sizeof kKernels / sizeof kKernels[0], kKernels,
};

}  // namespace

extern "C" const rb_plugin* rb_plugin_entry(void) { return &kPlugin; }

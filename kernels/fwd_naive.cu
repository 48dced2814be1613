// naive: one block per row, scalar loads, two passes over global memory (sum of squares,
// then normalize). The obviously right GPU baseline: any H >= 1, any stride, any alignment.
// Numerics: fp32 accumulation, eps inside the sqrt, w(H) by column, rrms = 1/rms saved; y
// by the convention's epilogue (epilogue.cuh), in x's dtype or fp8 with amax.
#include "kernels/block_row_rrms.cuh"
#include "kernels/epilogue.cuh"
#include "kernels/launchers.h"

namespace rb::kern {
namespace {

constexpr int kThreads = 256;

template <class T, class W, Convention C, class Y>
__global__ void __launch_bounds__(kThreads) fwd_naive_kernel(FwdArgs a) {
  __shared__ float scratch[32];
  const std::int64_t row = blockIdx.x;
  const T* x = static_cast<const T*>(a.x) + row * a.x_stride;
  const W* w = static_cast<const W*>(a.w);
  Y* y = static_cast<Y*>(a.y) + row * a.y_stride;
  Epilogue<C, T, W, Y> epi(a.scale);

  const float r = block_row_rrms(x, a.H, a.eps, scratch);
  if (a.rrms != nullptr && threadIdx.x == 0) a.rrms[row] = r;
  for (std::int64_t c = threadIdx.x; c < a.H; c += blockDim.x) epi.put(y, c, to_f32(x[c]), r, to_f32(w[c]));
  epi.flush(a.amax);
}

}  // namespace

cudaError_t launch_fwd_naive(const FwdArgs& a, cudaStream_t s) {
  if (const cudaError_t e = begin_output(a, s); e != cudaSuccess) return e;
  if (a.M == 0) return cudaSuccess;
  return dispatch_fwd(a, [&](auto t, auto w, auto c, auto y) -> cudaError_t {
    fwd_naive_kernel<decltype(t), decltype(w), decltype(c)::value, decltype(y)>
        <<<static_cast<unsigned>(a.M), kThreads, 0, s>>>(a);
    return cudaGetLastError();
  });
}

}  // namespace rb::kern

// naive (add): one block per row, scalar loads, two passes over global memory. Pass 1 forms
// s = x + r, stores it (residual_out) and sums its squares; pass 2 re-reads x and r, forms the
// same sum again and writes y. The obviously right GPU baseline: any H >= 1, any strides,
// any alignment.
// Numerics: s added in fp32 and used unrounded (the stored s is rounded to r's dtype), fp32
// accumulation, eps inside the sqrt, w(H) by column, rrms = 1/rms saved; y by the
// convention's epilogue (epilogue.cuh), in x's dtype or fp8 with amax.
#include "kernels/add_common.cuh"
#include "kernels/launchers.h"

namespace rb::kern {
namespace {

constexpr int kThreads = 256;

template <class T, class W, class R, Convention C, class Y>
__global__ void __launch_bounds__(kThreads) add_naive_kernel(AddArgs a) {
  __shared__ float scratch[32];
  const std::int64_t row = blockIdx.x;
  const AddRow<T, W, R, Y> io(a, row);
  Epilogue<C, T, W, Y> epi(a.scale);

  const float sumsq = strided_sum(threadIdx.x, a.H, blockDim.x, [&](std::int64_t c) {
    const float v = add_store_elem(epi, io.x, io.r, io.s, c);
    return v * v;
  });
  const float rr = rsqrtf(block_sum(sumsq, scratch) / static_cast<float>(a.H) + a.eps);
  if (a.rrms != nullptr && threadIdx.x == 0) a.rrms[row] = rr;
  for (std::int64_t c = threadIdx.x; c < a.H; c += blockDim.x)
    normalize_elem(epi, add_elem(epi, io.x, io.r, c), rr, io.w, io.y, c);
  epi.flush(a.amax);
}

}  // namespace

cudaError_t launch_add_naive(const AddArgs& a, cudaStream_t s) {
  if (const cudaError_t e = begin_output(a, s); e != cudaSuccess) return e;
  if (a.M == 0) return cudaSuccess;
  return dispatch_add(a, [&](auto t, auto w, auto r, auto c, auto y) -> cudaError_t {
    add_naive_kernel<decltype(t), decltype(w), decltype(r), decltype(c)::value, decltype(y)>
        <<<static_cast<unsigned>(a.M), kThreads, 0, s>>>(a);
    return cudaGetLastError();
  });
}

}  // namespace rb::kern

// chunked: one block per row, two passes over the row in chunks of blockDim 16-byte vectors:
// the first sums squares, the second re-reads x (mostly from L2) and writes y. Nothing is
// held across the passes, so any H works without spilling: for H beyond what `row-vector`
// holds in registers (16K fp32, 32K fp16/bf16). Costs a second read of each row.
// Any H >= 1, any row stride, any base alignment (scalar head/tail peel per row).
// Numerics: fp32 accumulation, eps inside the sqrt, w(H) by column, rrms = 1/rms saved.
#include "kernels/common.cuh"
#include "kernels/launchers.h"

namespace rb::kern {
namespace {

constexpr int kThreads = 512;
constexpr int kUnroll = 4;  // independent vector loads in flight per thread

template <class T, class W>
__global__ void __launch_bounds__(kThreads) fwd_chunked_kernel(FwdArgs a) {
  constexpr int V = kVec<T>;
  __shared__ float scratch[32];
  const std::int64_t row = blockIdx.x;
  const T* x = static_cast<const T*>(a.x) + row * a.x_stride;
  const W* w = static_cast<const W*>(a.w);
  T* y = static_cast<T*>(a.y) + row * a.y_stride;
  const std::int64_t H = a.H;
  const std::int64_t head = head_elems(x, H);
  const std::int64_t nvec = (H - head) / V;
  const std::int64_t body_end = head + nvec * V;
  const uint4* xv = reinterpret_cast<const uint4*>(x + head);

  float sumsq = 0.f;
  for (std::int64_t base = threadIdx.x; base < nvec; base += static_cast<std::int64_t>(kUnroll) * kThreads) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::int64_t i = base + static_cast<std::int64_t>(u) * kThreads;
      if (i < nvec) v[u] = xv[i];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::int64_t i = base + static_cast<std::int64_t>(u) * kThreads;
      if (i < nvec) {
        float f[V];
        unpack<T>(v[u], f);
#pragma unroll
        for (int k = 0; k < V; ++k) sumsq += f[k] * f[k];
      }
    }
  }
  sumsq += edge_sumsq(x, head, body_end, H, threadIdx.x, kThreads);
  const float r = rsqrtf(block_sum(sumsq, scratch) / static_cast<float>(H) + a.eps);
  if (a.rrms != nullptr && threadIdx.x == 0) a.rrms[row] = r;

  for (std::int64_t i = threadIdx.x; i < nvec; i += kThreads) {
    const std::int64_t c0 = head + i * V;
    float f[V], wf[V];
    unpack<T>(xv[i], f);
    load_weights<W, V>(w + c0, wf);
#pragma unroll
    for (int k = 0; k < V; ++k) f[k] = f[k] * r * wf[k];
    store_vec<T>(y + c0, pack<T>(f));
  }
  edge_normalize(x, w, y, head, body_end, H, r, threadIdx.x, kThreads);
}

}  // namespace

cudaError_t launch_fwd_chunked(const FwdArgs& a, cudaStream_t s) {
  if (a.M == 0) return cudaSuccess;
  return dispatch_fwd_dtypes(a.xdtype, a.wdtype, [&](auto t, auto w) -> cudaError_t {
    fwd_chunked_kernel<decltype(t), decltype(w)><<<static_cast<unsigned>(a.M), kThreads, 0, s>>>(a);
    return cudaGetLastError();
  });
}

}  // namespace rb::kern

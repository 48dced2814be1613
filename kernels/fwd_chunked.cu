// chunked: one block per row, two passes over the row in chunks of blockDim 16-byte vectors:
// the first sums squares (4 loads in flight a thread), the second re-reads x (from L1/L2:
// the row was just read) and writes y. Nothing is held across the passes, so any H works
// without spilling. Blocks of ~H/(4 vectors) threads, 64 to 512: measured best for large
// rows (fp16/bf16 past ~8K, fp32 from ~2K; docs/perf-notes.md). Re-reads each row once.
// Any H >= 1, any row stride, any base alignment (scalar head/tail peel per row).
// Numerics: fp32 accumulation, eps inside the sqrt, w(H) by column, rrms = 1/rms saved.
#include "kernels/common.cuh"
#include "kernels/launchers.h"

namespace rb::kern {
namespace {

constexpr int kMaxThreads = 512;
constexpr int kUnroll = 4;  // independent vector loads in flight per thread

template <class T, class W>
__global__ void __launch_bounds__(kMaxThreads) fwd_chunked_kernel(FwdArgs a) {
  const int nthreads = blockDim.x;
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
  for (std::int64_t base = threadIdx.x; base < nvec; base += static_cast<std::int64_t>(kUnroll) * nthreads) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::int64_t i = base + static_cast<std::int64_t>(u) * nthreads;
      if (i < nvec) v[u] = xv[i];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::int64_t i = base + static_cast<std::int64_t>(u) * nthreads;
      if (i < nvec) {
        float f[V];
        unpack<T>(v[u], f);
#pragma unroll
        for (int k = 0; k < V; ++k) sumsq += f[k] * f[k];
      }
    }
  }
  sumsq += edge_sumsq(x, head, body_end, H, threadIdx.x, nthreads);
  const float r = rsqrtf(block_sum(sumsq, scratch) / static_cast<float>(H) + a.eps);
  if (a.rrms != nullptr && threadIdx.x == 0) a.rrms[row] = r;

  for (std::int64_t i = threadIdx.x; i < nvec; i += nthreads) {
    const std::int64_t c0 = head + i * V;
    float f[V], wf[V];
    unpack<T>(xv[i], f);
    load_weights<W, V>(w + c0, wf);
#pragma unroll
    for (int k = 0; k < V; ++k) f[k] = f[k] * r * wf[k];
    store_vec<T>(y + c0, pack<T>(f));
  }
  edge_normalize(x, w, y, head, body_end, H, r, threadIdx.x, nthreads);
}

}  // namespace

cudaError_t launch_fwd_chunked(const FwdArgs& a, cudaStream_t s) {
  if (a.M == 0) return cudaSuccess;
  return dispatch_fwd_dtypes(a.xdtype, a.wdtype, [&](auto t, auto w) -> cudaError_t {
    using T = decltype(t);
    // One unrolled round of kUnroll vectors a thread covers the row where it can.
    const std::int64_t nv = (a.H + kVec<T> - 1) / kVec<T>;
    std::int64_t threads = ((nv + kUnroll - 1) / kUnroll + 31) / 32 * 32;
    threads = threads < 64 ? 64 : (threads > kMaxThreads ? kMaxThreads : threads);
    fwd_chunked_kernel<T, decltype(w)><<<static_cast<unsigned>(a.M), static_cast<unsigned>(threads), 0, s>>>(a);
    return cudaGetLastError();
  });
}

}  // namespace rb::kern

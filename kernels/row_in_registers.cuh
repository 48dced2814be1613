// One row held in the registers of a group of threads, read once from global memory.
// Shared by `row-vector` (the group is the whole block) and `warp-row` (the group is 4-32
// lanes of one warp, several rows per block).
//
// Per row: a scalar head up to the first 16-byte boundary of x's row, 16-byte vectors in the
// body, a scalar tail. So any H, any row stride and any base alignment keep full-width loads
// on the body. Squares are accumulated in fp32; eps is inside the sqrt; w is indexed by
// column only; the row's rrms (1/rms, fp32) is stored when requested.
#pragma once

#include "kernels/common.cuh"

namespace rb::kern {

// `rank` is this thread's index in the group of `size` threads; `reduce(float)` sums a value
// over the group and returns the total to every member. The group holds up to
// size * VPT vectors; the launcher guarantees (H / kVec<T>) <= size * VPT.
template <class T, class W, int VPT, class Reduce>
__device__ __forceinline__ void rmsnorm_row_in_registers(const T* __restrict__ xrow,
                                                         const W* __restrict__ w,
                                                         T* __restrict__ yrow, float* rrms_out,
                                                         std::int64_t H, float eps, int rank,
                                                         int size, bool active, Reduce reduce) {
  constexpr int V = kVec<T>;
  std::int64_t head = 0, nvec = 0, body_end = 0;
  if (active) {
    head = head_elems(xrow, H);
    nvec = (H - head) / V;
    body_end = head + nvec * V;
  }

  uint4 xv[VPT];
  float sumsq = 0.f;
#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    const std::int64_t vi = rank + static_cast<std::int64_t>(i) * size;
    if (vi < nvec) {
      xv[i] = *reinterpret_cast<const uint4*>(xrow + head + vi * V);
      float f[V];
      unpack<T>(xv[i], f);
#pragma unroll
      for (int k = 0; k < V; ++k) sumsq += f[k] * f[k];
    }
  }
  if (active) sumsq += edge_sumsq(xrow, head, body_end, H, rank, size);

  const float total = reduce(sumsq);
  if (!active) return;
  const float r = rsqrtf(total / static_cast<float>(H) + eps);
  if (rrms_out != nullptr && rank == 0) *rrms_out = r;

#pragma unroll
  for (int i = 0; i < VPT; ++i) {
    const std::int64_t vi = rank + static_cast<std::int64_t>(i) * size;
    if (vi < nvec) {
      const std::int64_t c0 = head + vi * V;
      float f[V], wf[V];
      unpack<T>(xv[i], f);
      load_weights<W, V>(w + c0, wf);
#pragma unroll
      for (int k = 0; k < V; ++k) f[k] = f[k] * r * wf[k];
      store_vec<T>(yrow + c0, pack<T>(f));
    }
  }
  edge_normalize(xrow, w, yrow, head, body_end, H, r, rank, size);
}

// Vectors (upper bound) a group must hold for one row: the body plus one vector of slack,
// since the head peel can shift the body by part of a vector.
inline std::int64_t row_vectors(std::int64_t H, std::size_t elem_size) {
  const std::int64_t v = static_cast<std::int64_t>(16 / elem_size);
  return (H + v - 1) / v;
}

}  // namespace rb::kern

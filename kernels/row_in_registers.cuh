// One row held in the registers of a group of threads, read from global memory once.
// Shared by `row-vector` (the group is the whole block) and `warp-row` (the group is 4-32
// lanes of one warp).
//
// Per row: a scalar head up to the first 16-byte boundary of x's row, 16-byte vectors in the
// body, a scalar tail. So any H, any row stride and any base alignment keep full-width loads
// on the body. Squares are accumulated in fp32; eps is inside the sqrt; w is indexed by
// column only; the row's rrms (1/rms, fp32) is stored when requested. y is written through
// the convention's epilogue (epilogue.cuh): x's dtype or fp8, at y's own alignment.
#pragma once

#include "kernels/epilogue.cuh"

namespace rb::kern {

// This thread's part of one row: up to VPT body vectors (raw, in the storage dtype) and up
// to E head and E tail elements. The launcher guarantees body vectors <= size * VPT and
// E * size >= kVec<T> - 1 (head and tail are each shorter than a vector).
template <class T, int VPT, int E>
struct RowSlice {
  static constexpr int V = kVec<T>;
  uint4 v[VPT];
  float edge[2 * E];  // head elements rank + e*size, then tail elements body_end + rank + e*size
  std::int64_t head, nvec, body_end;

  // kStream: x by streaming loads, else by default ones (load_once).
  template <bool kStream = true>
  __device__ __forceinline__ void load(const T* __restrict__ xrow, std::int64_t H, int rank, int size,
                                       bool active) {
    head = nvec = body_end = 0;
    if (active) {
      head = head_elems(xrow, H);
      nvec = (H - head) / V;
      body_end = head + nvec * V;
    }
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
      const std::int64_t vi = rank + static_cast<std::int64_t>(i) * size;
      if (vi < nvec) v[i] = load_once<kStream>(xrow + head + vi * V);
    }
#pragma unroll
    for (int e = 0; e < E; ++e) {
      const std::int64_t j = rank + static_cast<std::int64_t>(e) * size;
      edge[e] = j < head ? to_f32(xrow[j]) : 0.f;
      edge[E + e] = active && body_end + j < H ? to_f32(xrow[body_end + j]) : 0.f;
    }
  }

  __device__ __forceinline__ float sumsq(int rank, int size) const {
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
      if (rank + static_cast<std::int64_t>(i) * size < nvec) {
        float f[V];
        unpack<T>(v[i], f);
#pragma unroll
        for (int k = 0; k < V; ++k) s += f[k] * f[k];
      }
    }
#pragma unroll
    for (int e = 0; e < 2 * E; ++e) s += edge[e] * edge[e];
    return s;
  }

  // y = the epilogue's output of x * rrms * w over this thread's part of the row.
  template <St kSt = St::stream, class Epi, class W, class Y>
  __device__ __forceinline__ void store(Epi& epi, const W* __restrict__ w, Y* __restrict__ yrow, float r,
                                        std::int64_t H, int rank, int size) const {
#pragma unroll
    for (int i = 0; i < VPT; ++i) {
      const std::int64_t vi = rank + static_cast<std::int64_t>(i) * size;
      if (vi < nvec) {
        const std::int64_t c0 = head + vi * V;
        float f[V], wf[V];
        unpack<T>(v[i], f);
        load_weights<W, V>(w + c0, wf);
#pragma unroll
        for (int k = 0; k < V; ++k) f[k] = epi.value(f[k], r, wf[k]);
        epi.template store_vec<kSt>(yrow + c0, f);
      }
    }
#pragma unroll
    for (int e = 0; e < E; ++e) {
      const std::int64_t j = rank + static_cast<std::int64_t>(e) * size;
      if (j < head) epi.put(yrow, j, edge[e], r, to_f32(w[j]));
      if (body_end + j < H) epi.put(yrow, body_end + j, edge[E + e], r, to_f32(w[body_end + j]));
    }
  }
};

}  // namespace rb::kern

// Device building blocks of the fused residual add (s = x + r, y = rmsnorm(s) * w), on top of
// common.cuh. A row is walked in vectors of x: the scalar head up to x's first 16-byte
// boundary, then kVec<T> columns at a time, then a scalar tail. The residual r and its output
// s cover the same columns with their own element size (one 16-byte vector when R is as wide
// as T, two when r is fp32 under 16-bit x) and their own alignment, which can differ from
// x's. The vector helpers check their own address and fall back to element-wise access
// where it is not 16-byte aligned (uniform across a row, since all vector steps of a row
// share its phase); a kernel that checked a row's phase once (streams_aligned) promises the
// alignment instead (assume16) and runs without the tests.
// Numerics: s is formed in fp32 (to_f32(x) + to_f32(r)) and that fp32 value is what is
// squared and normalized; it is rounded to R only where it is stored (under llama it is
// rounded to R before it is squared: the overloads taking an epilogue, epilogue.cuh).
// y is written through the convention's epilogue: x's dtype or fp8 (Y).
#pragma once

#include "kernels/epilogue.cuh"

namespace rb::kern {

// A row's tensors in a (row `row`): x, r, s and y at the row's first column, each through its
// own stride; w, the one weight vector of every row. y is in x's dtype or fp8 (Y).
template <class T, class W, class R, class Y = T>
struct AddRow {
  const T* x;
  const R* r;
  const W* w;
  R* s;
  Y* y;
  __device__ __forceinline__ AddRow(const AddArgs& a, std::int64_t row)
      : x(static_cast<const T*>(a.x) + row * a.x_stride),
        r(static_cast<const R*>(a.r) + row * a.r_stride),
        w(static_cast<const W*>(a.w)),
        s(static_cast<R*>(a.s) + row * a.s_stride),
        y(static_cast<Y*>(a.y) + row * a.y_stride) {}
};

// p, promised 16-byte aligned when kAligned (the caller checked the row's phase once): the
// vector helpers then drop their per-access alignment test and its element-wise branch.
template <bool kAligned, class P>
__device__ __forceinline__ P* assume16(P* p) {
  if constexpr (kAligned)
    return static_cast<P*>(__builtin_assume_aligned(p, 16));
  else
    return p;
}

// Whether the streams r, s and y are all 16-byte aligned at column c (x's first 16-byte
// boundary of the row): then they are at every vector step c + i * kVec<T> of the row too,
// since a step is a whole number of 16-byte vectors of each. (w is left out: its phase
// changes from row to row whenever the row stride is not a multiple of 16 bytes, and its
// loads hit L1, so it keeps load_weights' per-row test. An fp8 y is left out too: a step
// is half a vector of it, and its stores test their own alignment, epilogue.cuh.)
template <class R, class Y>
__device__ __forceinline__ bool streams_aligned(const R* r, const R* s, const Y* y, std::int64_t c) {
  if constexpr (kIsFp8<Y>)
    return aligned16(r + c) && aligned16(s + c);
  else
    return aligned16(r + c) && aligned16(s + c) && aligned16(y + c);
}

// y at a vector step, promised 16-byte aligned when kAligned and y is in x's dtype (an fp8
// y's stores test their own alignment).
template <bool kAligned, class Y>
__device__ __forceinline__ Y* assume16_y(Y* p) {
  constexpr bool kAssume = kAligned && !kIsFp8<Y>;
  return assume16<kAssume>(p);
}

// 16-byte vectors of R covering the kVec<T> columns of one vector of x.
template <class T, class R>
inline constexpr int kResVecs = static_cast<int>(sizeof(R)) * kVec<T> / 16;

// The residual's kVec<T> columns from p = r + column, raw, into kResVecs<T, R> vectors:
// vector loads where p is 16-byte aligned, element by element otherwise. kStream: an
// evict-first load (the row is read once); otherwise the default caching load, which keeps
// the row in L1 for a second pass over it.
template <class T, class R, bool kStream>
__device__ __forceinline__ void load_residual(const R* p, uint4* out) {
  static_assert(sizeof(R) == sizeof(T) || (sizeof(R) == 4 && sizeof(T) == 2), "r is x's dtype or fp32");
  constexpr int kChunks = kResVecs<T, R>;
  if (aligned16(p)) {
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      out[c] = load_once<kStream>(reinterpret_cast<const uint4*>(p) + c);
    }
  } else {
    R* e = reinterpret_cast<R*>(out);
#pragma unroll
    for (int k = 0; k < kVec<T>; ++k) {
      if constexpr (kStream)
        e[k] = __ldcs(p + k);
      else
        e[k] = p[k];
    }
  }
}

// s = x + r in fp32 over one vector of x (raw xv) and its residual vectors rv.
template <class T, class R>
__device__ __forceinline__ void add_vec(const uint4& xv, const uint4* rv, float* s) {
  constexpr int V = kVec<T>;
  float rf[V];
  unpack<T>(xv, s);
#pragma unroll
  for (int c = 0; c < kResVecs<T, R>; ++c) unpack<R>(rv[c], rf + c * kVec<R>);
#pragma unroll
  for (int k = 0; k < V; ++k) s[k] += rf[k];
}

// Stores kVec<T> fp32 sums rounded to R at p = s + column (streaming vectors where p is
// aligned, element by element otherwise).
template <class T, class R>
__device__ __forceinline__ void store_residual(R* p, const float* s) {
#pragma unroll
  for (int c = 0; c < kResVecs<T, R>; ++c) store_vec<R>(p + c * kVec<R>, pack<R>(s + c * kVec<R>));
}

// s = x + r over one vector of x as the convention squares and normalises it (rounded to R
// under llama).
template <class T, class R, class E>
__device__ __forceinline__ void add_vec(const E& epi, const uint4& xv, const uint4* rv, float* s) {
  add_vec<T, R>(xv, rv, s);
#pragma unroll
  for (int k = 0; k < kVec<T>; ++k) s[k] = epi.template residual<R>(s[k]);
}

// y = the epilogue's output of s * rrms * w over one vector of columns, w and y at that
// vector's first column.
template <class E, class W, class Y>
__device__ __forceinline__ void normalize_vec(E& epi, const float* s, float rrms, const W* w, Y* y) {
  constexpr int V = E::kVecX;
  float wf[V], f[V];
  load_weights<W, V>(w, wf);
#pragma unroll
  for (int k = 0; k < V; ++k) f[k] = epi.value(s[k], rrms, wf[k]);
  epi.store_vec(y, f);
}

// y = s * rrms * w over one vector of columns, w and y at that vector's first column.
template <class T, class W>
__device__ __forceinline__ void normalize_vec(const float* s, float rrms, const W* w, T* y) {
  constexpr int V = kVec<T>;
  float wf[V], f[V];
  load_weights<W, V>(w, wf);
#pragma unroll
  for (int k = 0; k < V; ++k) f[k] = s[k] * rrms * wf[k];
  store_vec<T>(y, pack<T>(f));
}

// One column on the scalar path: the fp32 sum, and the same sum stored rounded to R.
template <class T, class R>
__device__ __forceinline__ float add_elem(const T* x, const R* r, std::int64_t j) {
  return to_f32(x[j]) + to_f32(r[j]);
}

template <class T, class R>
__device__ __forceinline__ float add_store_elem(const T* x, const R* r, R* s, std::int64_t j) {
  const float v = add_elem(x, r, j);
  s[j] = from_f32<R>(v);
  return v;
}

template <class T, class W>
__device__ __forceinline__ void normalize_elem(float v, float rrms, const W* w, T* y, std::int64_t j) {
  y[j] = from_f32<T>(v * rrms * to_f32(w[j]));
}

// The same three under a convention's epilogue: the sum as it is squared and normalised, and
// y through the epilogue.
template <class E, class T, class R>
__device__ __forceinline__ float add_elem(const E& epi, const T* x, const R* r, std::int64_t j) {
  return epi.template residual<R>(add_elem(x, r, j));
}

template <class E, class T, class R>
__device__ __forceinline__ float add_store_elem(const E& epi, const T* x, const R* r, R* s, std::int64_t j) {
  const float v = add_elem(epi, x, r, j);
  s[j] = from_f32<R>(v);
  return v;
}

template <class E, class W, class Y>
__device__ __forceinline__ void normalize_elem(E& epi, float v, float rrms, const W* w, Y* y,
                                               std::int64_t j) {
  epi.put(y, j, v, rrms, to_f32(w[j]));
}

}  // namespace rb::kern

// The end of every built-in forward (fwd and add): the convention's weight transform, the
// normalise-and-weight step and the store of y, in x's dtype or fp8 under a per-tensor
// scale with the running amax; and, for the backward, the weight transform alone. Kernels
// take the convention C and y's storage type Y as template parameters (dispatch_epilogue
// below turns the launch arguments into them), so each instantiation holds only its own
// arithmetic: the fp32 convention with y in x's dtype is exactly the arithmetic the kernels
// had before conventions existed (x * rrms * w in fp32, one rounding at the store).
//
// Conventions (core/names.h; X is x's storage type, W w's):
//   fp32           y = round_Y(x * rrms * w)
//   llama          n = round_X(x * rrms), y = round_Y(n * w) with the product in fp32 (exact
//                  for 16-bit n and w); fp8 y: y_pre = n * w rounded to the promoted dtype of
//                  x and w (x's, or fp32 for an fp32 w), then scaled. add: the
//                  sum s = x + r is rounded to the residual dtype before it is squared.
//   gemma          w_eff = 1 + w in fp32, y = round_Y(x * rrms * w_eff)
//   zero_centered  w_eff = round_W(1 + w), y = round_Y(x * rrms * w_eff)
// fp8 y (e4m3, e5m2): y8 = satfinite(rne(y_pre * scale)) (NaN stays NaN), and amax =
// max |y_pre| over the whole tensor, NaN ignored. Each warp folds its threads' maxima and
// one lane raises *amax by atomicMax on the float's bits (non-negative floats order as
// their bits do), unless *amax (read from L2) already holds as much; the launch zeroes
// *amax first (begin_output).
#pragma once

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_fp8.h>

#include <type_traits>

#include "kernels/common.cuh"

namespace rb::kern {

template <Convention C>
using ConvTag = std::integral_constant<Convention, C>;

template <class Y>
inline constexpr bool kIsFp8 = std::is_same_v<Y, __nv_fp8_e4m3> || std::is_same_v<Y, __nv_fp8_e5m2>;

template <class Y>
inline constexpr __nv_fp8_interpretation_t kFp8Kind =
    std::is_same_v<Y, __nv_fp8_e5m2> ? __NV_E5M2 : __NV_E4M3;

// The weight a convention multiplies by, from w's value (already in fp32).
template <Convention C, class W>
__device__ __forceinline__ float effective_weight(float w) {
  if constexpr (C == Convention::gemma)
    return 1.f + w;
  else if constexpr (C == Convention::zero_centered)
    return to_f32(from_f32<W>(1.f + w));
  else
    return w;
}

// V consecutive bytes (V = 4 or 8, packed little-endian in V / 4 words) at p, by store_out's
// kSt: one 8-byte store where p allows it, else 4-, 2- or 1-byte pieces. p's phase is the same
// for every vector step of a row, so the branch is uniform across it.
template <int V, St kSt>
__device__ __forceinline__ void store_bytes(unsigned char* p, const unsigned* words) {
  static_assert(V == 4 || V == 8, "fp8 y vectors are 4 or 8 bytes");
  const unsigned mis = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(p) & 7u);
  if constexpr (V == 8) {
    if (mis == 0) {
      store_out<kSt>(reinterpret_cast<uint2*>(p), make_uint2(words[0], words[1]));
      return;
    }
  }
  if ((mis & 3u) == 0) {
#pragma unroll
    for (int k = 0; k < V / 4; ++k) store_out<kSt>(reinterpret_cast<unsigned*>(p) + k, words[k]);
  } else if ((mis & 1u) == 0) {
#pragma unroll
    for (int k = 0; k < V / 2; ++k)
      store_out<kSt>(reinterpret_cast<unsigned short*>(p) + k,
                     static_cast<unsigned short>(words[k / 2] >> (16 * (k % 2))));
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k)
      store_out<kSt>(p + k, static_cast<unsigned char>(words[k / 4] >> (8 * (k % 4))));
  }
}

// Warp-aggregated amax update: the maxima of the threads that call it together are folded
// and one of them raises *amax. Callable from divergent code (a row's active lanes).
__device__ __forceinline__ void flush_amax(float m, float* amax) {
  namespace cg = cooperative_groups;
  const cg::coalesced_group g = cg::coalesced_threads();
  const unsigned bits = cg::reduce(g, __float_as_uint(m), cg::greater<unsigned>());
  // *amax only grows during the launch: a stale read can only let an atomic through.
  if (g.thread_rank() == 0 && __uint_as_float(bits) > __ldcg(amax))
    atomicMax(reinterpret_cast<unsigned*>(amax), bits);
}

// One thread's output stage under convention C for x of type X, w of type W and y of type Y
// (X or an fp8 type). Holds the scale and this thread's running amax with an fp8 y, nothing
// otherwise.
template <Convention C, class X, class W, class Y>
class Epilogue {
 public:
  static constexpr bool kFp8 = kIsFp8<Y>;
  static constexpr int kVecX = kVec<X>;  // elements of one vector step (store_vec)
  static_assert(kFp8 || std::is_same_v<X, Y>, "y is in x's dtype or fp8");

  __device__ __forceinline__ explicit Epilogue(const float* scale) {
    if constexpr (kFp8) scale_ = *scale;
  }

  // The residual stream's sum s = x + r (fp32) as it is squared and normalised: rounded to
  // R under llama, as it is stored.
  template <class R>
  __device__ __forceinline__ float residual(float s) const {
    if constexpr (C == Convention::llama)
      return to_f32(from_f32<R>(s));
    else
      return s;
  }

  // The fp32 value y rounds to Y from (fp8: before the scale), for x's (or s's) value v,
  // the row's rrms and w's value.
  __device__ __forceinline__ float value(float v, float rrms, float w) const {
    const float we = effective_weight<C, W>(w);
    if constexpr (C == Convention::llama) {
      const float p = to_f32(from_f32<X>(v * rrms)) * we;
      // The product in the promoted dtype of x and w (names.h): x's when w has x's dtype (a
      // 16-bit tensor product), fp32 when w is fp32. With y in x's dtype the store's rounding
      // is that one; an fp8 y rounds it here, before the scale.
      if constexpr (kFp8 && !std::is_same_v<W, float>)
        return to_f32(from_f32<X>(p));
      else
        return p;
    } else {
      return v * rrms * we;
    }
  }

  // y[j] = the output of value(v, rrms, w): one element (a row's scalar edges).
  __device__ __forceinline__ void put(Y* y, std::int64_t j, float v, float rrms, float w) {
    const float o = value(v, rrms, w);
    if constexpr (kFp8) {
      amax_ = fmaxf(amax_, fabsf(o));
      reinterpret_cast<unsigned char*>(y)[j] =
          static_cast<unsigned char>(__nv_cvt_float_to_fp8(o * scale_, __NV_SATFINITE, kFp8Kind<Y>));
    } else {
      y[j] = from_f32<X>(o);
    }
  }

  // y[0, kVec<X>) = the outputs of values v: one 16-byte vector of x's dtype (stored by kSt,
  // or element by element where y is not 16-byte aligned), or kVec<X> fp8 bytes.
  template <St kSt = St::stream>
  __device__ __forceinline__ void store_vec(Y* y, const float* v) {
    constexpr int V = kVec<X>;
    if constexpr (kFp8) {
      unsigned words[V / 4];
#pragma unroll
      for (int k = 0; k < V; k += 2) {
        amax_ = fmaxf(amax_, fmaxf(fabsf(v[k]), fabsf(v[k + 1])));
        const unsigned pair = __nv_cvt_float2_to_fp8x2(make_float2(v[k] * scale_, v[k + 1] * scale_),
                                                       __NV_SATFINITE, kFp8Kind<Y>);
        if (k % 4 == 0)
          words[k / 4] = pair;
        else
          words[k / 4] |= pair << 16;
      }
      store_bytes<V, kSt>(reinterpret_cast<unsigned char*>(y), words);
    } else {
      kern::store_vec<X, kSt>(y, pack<X>(v));
    }
  }

  // This thread's part of amax, into *amax (fp8 only; a no-op otherwise).
  __device__ __forceinline__ void flush(float* amax) const {
    if constexpr (kFp8) flush_amax(amax_, amax);
  }

 private:
  float scale_ = 1.f;
  float amax_ = 0.f;
};

// The scalar edges of a row peeled around the vector body, [0, head) and [body_end, H),
// spread over `size` threads: y = the epilogue's output of x * rrms * w.
template <class E, class T, class W, class Y>
__device__ __forceinline__ void edge_normalize(E& epi, const T* x, const W* w, Y* y, std::int64_t head,
                                               std::int64_t body_end, std::int64_t H, float r, int rank,
                                               int size) {
  for (std::int64_t j = rank; j < head; j += size) epi.put(y, j, to_f32(x[j]), r, to_f32(w[j]));
  for (std::int64_t j = body_end + rank; j < H; j += size) epi.put(y, j, to_f32(x[j]), r, to_f32(w[j]));
}

// ---- host side -----------------------------------------------------------------------------

// Before a forward launch (FwdArgs, AddArgs): with an fp8 y, checks that scale and amax are
// given and zeroes *amax on the stream (before any row, so M == 0 leaves amax = 0).
template <class Args>
cudaError_t begin_output(const Args& a, cudaStream_t s) {
  if (!is_fp8(a.ydtype)) return cudaSuccess;
  if (a.scale == nullptr || a.amax == nullptr) return cudaErrorInvalidValue;
  return cudaMemsetAsync(a.amax, 0, sizeof(float), s);
}

// Calls f(ConvTag<C>{}, Y{}) with the convention and y's storage type for x's type X and w's
// type W: Y is X (ydtype == xdtype) or an fp8 type. Conventions whose arithmetic is
// identical for these types share an instantiation: llama is fp32 for an fp32 x (every
// rounding it names is to fp32; the add's residual is fp32 too, since r is x's dtype or
// fp32), zero-centered is gemma for an fp32 w. Any other ydtype is an error.
template <class X, class W, class F>
cudaError_t dispatch_epilogue(Convention conv, DType ydtype, DType xdtype, F&& f) {
  const auto with_conv = [&](auto y) -> cudaError_t {
    switch (conv) {
      case Convention::fp32:
        return f(ConvTag<Convention::fp32>{}, y);
      case Convention::llama:
        if constexpr (std::is_same_v<X, float>)
          return f(ConvTag<Convention::fp32>{}, y);
        else
          return f(ConvTag<Convention::llama>{}, y);
      case Convention::gemma:
        return f(ConvTag<Convention::gemma>{}, y);
      case Convention::zero_centered:
        if constexpr (std::is_same_v<W, float>)
          return f(ConvTag<Convention::gemma>{}, y);
        else
          return f(ConvTag<Convention::zero_centered>{}, y);
    }
    return cudaErrorInvalidValue;
  };
  if (ydtype == xdtype) return with_conv(X{});
  if (ydtype == DType::e4m3) return with_conv(__nv_fp8_e4m3{});
  if (ydtype == DType::e5m2) return with_conv(__nv_fp8_e5m2{});
  return cudaErrorInvalidValue;
}

// Only the fp32 convention with y in x's dtype: for tuning-only launch configurations, kept
// out of the other instantiations to bound the build (the default configurations have all).
template <class X, class F>
cudaError_t dispatch_epilogue_fp32_only(Convention conv, DType ydtype, DType xdtype, F&& f) {
  const bool fp32 = conv == Convention::fp32 || (conv == Convention::llama && std::is_same_v<X, float>);
  if (!fp32 || ydtype != xdtype) return cudaErrorInvalidConfiguration;
  return f(ConvTag<Convention::fp32>{}, X{});
}

// The backward's convention: its weight transform only. fp32 and llama share a backward (a
// forward's intermediate roundings are not differentiated); zero-centered is gemma for an
// fp32 w. Calls f(ConvTag<C>{}).
template <class W, class F>
cudaError_t dispatch_weight_transform(Convention conv, F&& f) {
  switch (conv) {
    case Convention::fp32:
    case Convention::llama:
      return f(ConvTag<Convention::fp32>{});
    case Convention::gemma:
      return f(ConvTag<Convention::gemma>{});
    case Convention::zero_centered:
      if constexpr (std::is_same_v<W, float>)
        return f(ConvTag<Convention::gemma>{});
      else
        return f(ConvTag<Convention::zero_centered>{});
  }
  return cudaErrorInvalidValue;
}

// The launch arguments' types, each dispatch above in turn: f(T{}, W{}, ConvTag<C>{}, Y{})
// for a forward, f(T{}, W{}, R{}, ConvTag<C>{}, Y{}) for the add, f(X{}, G{}, W{},
// ConvTag<C>{}) for a backward (bwd_common.cuh's X, G, W).
template <class F>
cudaError_t dispatch_fwd(const FwdArgs& a, F&& f) {
  return dispatch_fwd_dtypes(a.xdtype, a.wdtype, [&](auto t, auto w) -> cudaError_t {
    return dispatch_epilogue<decltype(t), decltype(w)>(a.conv, a.ydtype, a.xdtype,
                                                       [&](auto c, auto y) { return f(t, w, c, y); });
  });
}

template <class F>
cudaError_t dispatch_add(const AddArgs& a, F&& f) {
  return dispatch_add_dtypes(a.xdtype, a.wdtype, a.rdtype, [&](auto t, auto w, auto r) -> cudaError_t {
    return dispatch_epilogue<decltype(t), decltype(w)>(a.conv, a.ydtype, a.xdtype,
                                                       [&](auto c, auto y) { return f(t, w, r, c, y); });
  });
}

template <class F>
cudaError_t dispatch_bwd(const BwdArgs& a, F&& f) {
  return dispatch_bwd_dtypes(a.xdtype, a.dydtype, a.wdtype, [&](auto x, auto g, auto w) -> cudaError_t {
    return dispatch_weight_transform<decltype(w)>(a.conv, [&](auto c) { return f(x, g, w, c); });
  });
}

}  // namespace rb::kern

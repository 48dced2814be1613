// Host-side storage types and exact conversions. Inputs are generated in the storage dtype
// on the host, so the reference upcasts exactly the values the GPU reads.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <cstring>

namespace rb::ref {

using half = Eigen::half;
using bfloat16 = Eigen::bfloat16;

// Round-to-nearest-even from float (Eigen's conversions).
template <class T>
inline T from_float(float v) { return static_cast<T>(v); }

template <class T>
inline double to_double(T v) { return static_cast<double>(static_cast<float>(v)); }
template <>
inline double to_double<double>(double v) { return v; }

template <class T>
inline std::uint32_t bits_of(T v) {
  if constexpr (sizeof(T) == 2) {
    std::uint16_t b;
    std::memcpy(&b, &v, 2);
    return b;
  } else {
    std::uint32_t b;
    std::memcpy(&b, &v, 4);
    return b;
  }
}

// Mantissa bits (excluding the implicit one) and minimum normal exponent, per storage type.
template <class T> struct DtypeTraits;
template <> struct DtypeTraits<float> { static constexpr int mant = 23; static constexpr int min_exp = -126; };
template <> struct DtypeTraits<half> { static constexpr int mant = 10; static constexpr int min_exp = -14; };
template <> struct DtypeTraits<bfloat16> { static constexpr int mant = 7; static constexpr int min_exp = -126; };

// One unit in the last place of T at magnitude |v| (subnormal spacing below the normal range).
// Defined for float, half and bfloat16. Inf gives inf, NaN gives NaN.
template <class T>
double ulp_at(double v);

// v as T's correct rounding sees it at the top of the range: +-inf when |v| is at or beyond
// the midpoint between T's largest finite value and the next power of two (the tie goes to
// inf: the largest finite mantissa is odd), else v unchanged. A finite reference beyond T's
// range has the correctly rounded output +-inf, so an output is judged against that.
template <class T>
double round_overflow(double v);

}  // namespace rb::ref

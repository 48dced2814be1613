// Host-side storage types and exact conversions. Inputs are generated in the storage dtype
// on the host, so the reference upcasts exactly the values the GPU reads.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <cstring>

#include "core/names.h"

namespace rb::ref {

using half = Eigen::half;
using bfloat16 = Eigen::bfloat16;

// OCP 8-bit floats, the fp8 output dtypes: storage only (one byte holding the bits, no
// arithmetic), as the harness reads a kernel's fp8 output and as the reference states what
// that output should be.
//   e4m3 (OCP "E4M3", torch's float8_e4m3fn, CUDA's __NV_E4M3): bias 7, 3 mantissa bits, no
//        infinities; S.1111.111 is NaN, so the largest finite value is S.1111.110 = 448.
//        Subnormals down to 2^-9, smallest normal 2^-6.
//   e5m2 (OCP "E5M2", __NV_E5M2): bias 15, 2 mantissa bits, IEEE-like: S.11111.00 is inf,
//        S.11111.xx (xx != 0) NaN. Largest finite 57344, subnormals down to 2^-16, smallest
//        normal 2^-14.
// Construction from a float or double rounds to nearest even and SATURATES: every value
// beyond the largest finite one, +-inf included, becomes +-max (448, 57344) with its sign;
// never inf. That is CUDA's __nv_cvt_float_to_fp8(v, __NV_SATFINITE, ...) (on sm_89+ the PTX
// cvt.rn.satfinite.{e4m3,e5m2}x2.f32: "|input| > MAX_NORM gives sign-preserved MAX_NORM",
// which infinities are; the header's host code does the same), the conversion the fp8
// output epilogue uses: y8 = saturate(round(y * scale)). NaN becomes 0x7F (NaN in both
// formats, sign dropped, as the host conversion canonicalises it); -0 and negative values
// that underflow keep their sign (0x80). Conversion is direct from double: no intermediate
// rounding to float (a float converts exactly to double, so from a float it is the same).
struct fp8_e4m3 {
  std::uint8_t bits = 0;

  fp8_e4m3() = default;
  explicit fp8_e4m3(double v);
  explicit fp8_e4m3(float v) : fp8_e4m3(static_cast<double>(v)) {}
  static constexpr fp8_e4m3 from_bits(std::uint8_t b) {
    fp8_e4m3 v;
    v.bits = b;
    return v;
  }
  // Exact: every fp8 value is a float.
  explicit operator double() const;
  explicit operator float() const { return static_cast<float>(static_cast<double>(*this)); }
};

struct fp8_e5m2 {
  std::uint8_t bits = 0;

  fp8_e5m2() = default;
  explicit fp8_e5m2(double v);
  explicit fp8_e5m2(float v) : fp8_e5m2(static_cast<double>(v)) {}
  static constexpr fp8_e5m2 from_bits(std::uint8_t b) {
    fp8_e5m2 v;
    v.bits = b;
    return v;
  }
  // Exact: every fp8 value is a float.
  explicit operator double() const;
  explicit operator float() const { return static_cast<float>(static_cast<double>(*this)); }
};

static_assert(sizeof(fp8_e4m3) == 1 && sizeof(fp8_e5m2) == 1, "fp8 storage is one byte");

// Round-to-nearest-even from float (Eigen's conversions for half and bfloat16; saturating
// for fp8, see above).
template <class T>
inline T from_float(float v) {
  return static_cast<T>(v);
}

template <class T>
inline double to_double(T v) {
  return static_cast<double>(static_cast<float>(v));
}
template <>
inline double to_double<double>(double v) {
  return v;
}
template <>
inline double to_double<fp8_e4m3>(fp8_e4m3 v) {
  return static_cast<double>(v);
}
template <>
inline double to_double<fp8_e5m2>(fp8_e5m2 v) {
  return static_cast<double>(v);
}

template <class T>
inline std::uint32_t bits_of(T v) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4, "bits_of: a 1, 2 or 4 byte type");
  if constexpr (sizeof(T) == 1) {
    std::uint8_t b;
    std::memcpy(&b, &v, 1);
    return b;
  } else if constexpr (sizeof(T) == 2) {
    std::uint16_t b;
    std::memcpy(&b, &v, 2);
    return b;
  } else {
    std::uint32_t b;
    std::memcpy(&b, &v, 4);
    return b;
  }
}

// Per storage type: mantissa bits (excluding the implicit one), minimum normal exponent,
// largest finite value, and whether conversion saturates at it (fp8) instead of going to
// +-inf (the IEEE types).
template <class T>
struct DtypeTraits;
template <>
struct DtypeTraits<float> {
  static constexpr int mant = mantissa_bits(DType::f32);
  static constexpr int min_exp = -126;
  static constexpr double max_finite = rb::max_finite(DType::f32);
  static constexpr bool saturates = false;
};
template <>
struct DtypeTraits<half> {
  static constexpr int mant = mantissa_bits(DType::f16);
  static constexpr int min_exp = -14;
  static constexpr double max_finite = rb::max_finite(DType::f16);
  static constexpr bool saturates = false;
};
template <>
struct DtypeTraits<bfloat16> {
  static constexpr int mant = mantissa_bits(DType::bf16);
  static constexpr int min_exp = -126;
  static constexpr double max_finite = rb::max_finite(DType::bf16);
  static constexpr bool saturates = false;
};
template <>
struct DtypeTraits<fp8_e4m3> {
  static constexpr int mant = mantissa_bits(DType::e4m3);
  static constexpr int min_exp = -6;
  static constexpr double max_finite = rb::max_finite(DType::e4m3);
  static constexpr bool saturates = true;
};
template <>
struct DtypeTraits<fp8_e5m2> {
  static constexpr int mant = mantissa_bits(DType::e5m2);
  static constexpr int min_exp = -14;
  static constexpr double max_finite = rb::max_finite(DType::e5m2);
  static constexpr bool saturates = true;
};

// One unit in the last place of T at magnitude |v| (subnormal spacing below the normal range).
// Defined for float, half, bfloat16, fp8_e4m3 and fp8_e5m2. Inf gives inf, NaN gives NaN.
template <class T>
double ulp_at(double v);

// v as T's correct rounding sees it at the top of the range, else v unchanged:
//   float, half, bfloat16: +-inf when |v| is at or beyond the midpoint between T's largest
//     finite value and the next power of two (the tie goes to inf: the largest finite
//     mantissa is odd). A finite reference beyond T's range has the correctly rounded output
//     +-inf, so an output is judged against that.
//   fp8_e4m3, fp8_e5m2: +-max_finite when |v| > max_finite, +-inf included (the saturating
//     conversion: never inf).
// NaN stays NaN.
template <class T>
double round_overflow(double v);

// The value of v correctly rounded to T (round to nearest, ties to the even mantissa, with
// T's subnormals), as a double: directly from the double, with no intermediate rounding to
// float (double -> float -> half can round twice). Beyond the largest finite value: +-inf
// for float, half and bfloat16 (as their conversions do), +-max_finite for the fp8 types
// (saturating, +-inf included). NaN stays NaN, signed zeros keep their sign. Defined for
// float, half, bfloat16, fp8_e4m3, fp8_e5m2 and double (the identity).
template <class T>
double round_to(double v);

}  // namespace rb::ref

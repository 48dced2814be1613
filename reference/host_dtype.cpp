// ulp_at<T>, round_overflow<T> and round_to<T> from DtypeTraits; the fp8 types' encoding
// and decoding.
#include "reference/host_dtype.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace rb::ref {
namespace {

// floor(log2 |v|) for finite non-zero v (exact: frexp reads the exponent).
int exponent_of(double magnitude) {
  int frexp_exponent = 0;
  std::frexp(magnitude, &frexp_exponent);  // magnitude = m * 2^e, m in [0.5, 1)
  return frexp_exponent - 1;
}

// The exponent of T's spacing at |v|, e - mant with e = max(floor(log2|v|), min_exp).
template <class T>
int spacing_exponent(double magnitude) {
  using Traits = DtypeTraits<T>;
  const int exponent = magnitude == 0.0 ? Traits::min_exp : std::max(exponent_of(magnitude), Traits::min_exp);
  return exponent - Traits::mant;
}

// Round to the nearest integer, ties to even, whatever the floating-point environment's
// rounding mode. Exact for the values round_to passes (below 2^(mant + 2)).
double round_half_even(double v) {
  const double down = std::floor(v);
  const double fraction = v - down;
  if (fraction > 0.5) return down + 1;
  if (fraction < 0.5) return down;
  return std::fmod(down, 2.0) == 0.0 ? down : down + 1;
}

// The fp8 formats' special codes. Both: the exponent field has 8 - 1 - mant bits and the
// bias is 1 - min_exp (7 and 15).
template <class T>
struct Fp8Format {
  static constexpr int mant = DtypeTraits<T>::mant;
  static constexpr int min_exp = DtypeTraits<T>::min_exp;
  static constexpr unsigned mant_mask = (1u << mant) - 1;
  static constexpr unsigned exp_field_max = 0x7Fu >> mant;  // all ones
  static constexpr bool has_inf = std::is_same_v<T, fp8_e5m2>;
  static constexpr std::uint8_t nan_bits = 0x7F;  // NaN in both formats
};

template <class T>
std::uint8_t encode_fp8(double v) {
  using F = Fp8Format<T>;
  if (std::isnan(v)) return F::nan_bits;
  const double rounded = round_to<T>(v);  // finite, |rounded| <= max_finite, exactly representable
  const std::uint8_t sign = std::signbit(rounded) ? 0x80 : 0x00;
  const double magnitude = std::fabs(rounded);
  if (magnitude == 0.0) return sign;
  const int exponent = exponent_of(magnitude);
  unsigned exp_field = 0, mantissa = 0;
  if (exponent < F::min_exp) {  // subnormal: magnitude = mantissa * 2^(min_exp - mant)
    mantissa = static_cast<unsigned>(std::ldexp(magnitude, F::mant - F::min_exp));
  } else {  // normal: magnitude = (2^mant + mantissa) * 2^(exponent - mant)
    exp_field = static_cast<unsigned>(exponent - F::min_exp + 1);
    mantissa = static_cast<unsigned>(std::ldexp(magnitude, F::mant - exponent)) - (1u << F::mant);
  }
  return static_cast<std::uint8_t>(sign | (exp_field << F::mant) | mantissa);
}

template <class T>
double decode_fp8(std::uint8_t bits) {
  using F = Fp8Format<T>;
  const double sign = (bits & 0x80) ? -1.0 : 1.0;
  const unsigned exp_field = (bits & 0x7Fu) >> F::mant;
  const unsigned mantissa = bits & F::mant_mask;
  if (exp_field == F::exp_field_max) {
    if (F::has_inf && mantissa == 0) return sign * std::numeric_limits<double>::infinity();
    if (F::has_inf || mantissa == F::mant_mask) return std::numeric_limits<double>::quiet_NaN();
  }
  if (exp_field == 0) return sign * std::ldexp(static_cast<double>(mantissa), F::min_exp - F::mant);
  return sign * std::ldexp(static_cast<double>((1u << F::mant) + mantissa),
                           static_cast<int>(exp_field) - 1 + F::min_exp - F::mant);
}

}  // namespace

fp8_e4m3::fp8_e4m3(double v) : bits(encode_fp8<fp8_e4m3>(v)) {}
fp8_e4m3::operator double() const { return decode_fp8<fp8_e4m3>(bits); }
fp8_e5m2::fp8_e5m2(double v) : bits(encode_fp8<fp8_e5m2>(v)) {}
fp8_e5m2::operator double() const { return decode_fp8<fp8_e5m2>(bits); }

// Spacing at |v| is 2^(max(floor(log2|v|), min_exp) - mant); below the normal range the
// spacing stays at the subnormal step 2^(min_exp - mant), which is also the answer for 0.
// Magnitudes above T's largest finite value get the spacing the exponent would have, so an
// error measured against an out-of-range reference stays finite. Inf gives inf, NaN NaN.
template <class T>
double ulp_at(double v) {
  const double magnitude = std::fabs(v);
  if (!std::isfinite(magnitude)) return magnitude;
  return std::ldexp(1.0, spacing_exponent<T>(magnitude));
}

template <class T>
double round_overflow(double v) {
  using Traits = DtypeTraits<T>;
  if (std::isnan(v)) return v;
  if constexpr (Traits::saturates) {
    return std::fabs(v) > Traits::max_finite ? std::copysign(Traits::max_finite, v) : v;
  } else {
    const double threshold = Traits::max_finite + ulp_at<T>(Traits::max_finite) / 2;
    return std::isfinite(v) && std::fabs(v) >= threshold ? std::copysign(INFINITY, v) : v;
  }
}

// |v| scaled so that T's spacing at |v| is 1 (exact: a power-of-two scaling of a double that
// stays far from the double range's ends), rounded to an integer, scaled back. At the top,
// a magnitude that rounds above max_finite is beyond it (the largest finite value and the
// next power of two are each a whole number of spacings away).
template <class T>
double round_to(double v) {
  if constexpr (std::is_same_v<T, double>) {
    return v;
  } else {
    using Traits = DtypeTraits<T>;
    if (std::isnan(v)) return v;
    const double magnitude = std::fabs(v);
    double rounded = Traits::max_finite * 2;  // stands for "beyond the range" (inf included)
    if (std::isfinite(magnitude)) {
      const int spacing = spacing_exponent<T>(magnitude);
      rounded = std::ldexp(round_half_even(std::ldexp(magnitude, -spacing)), spacing);
    }
    if (rounded > Traits::max_finite)
      rounded = Traits::saturates ? Traits::max_finite : std::numeric_limits<double>::infinity();
    return std::copysign(rounded, v);
  }
}

#define RB_INSTANTIATE_HOST_DTYPE(T)           \
  template double ulp_at<T>(double v);         \
  template double round_overflow<T>(double v); \
  template double round_to<T>(double v);

RB_INSTANTIATE_HOST_DTYPE(float)
RB_INSTANTIATE_HOST_DTYPE(half)
RB_INSTANTIATE_HOST_DTYPE(bfloat16)
RB_INSTANTIATE_HOST_DTYPE(fp8_e4m3)
RB_INSTANTIATE_HOST_DTYPE(fp8_e5m2)
template double round_to<double>(double v);
#undef RB_INSTANTIATE_HOST_DTYPE

}  // namespace rb::ref

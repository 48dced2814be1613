// ulp_at<T>: the spacing of T's representable values at magnitude |v|, from DtypeTraits.
#include "reference/host_dtype.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rb::ref {

// Spacing at |v| is 2^(max(floor(log2|v|), min_exp) - mant); below the normal range the
// spacing stays at the subnormal step 2^(min_exp - mant), which is also the answer for 0.
// Magnitudes above T's largest finite value get the spacing the exponent would have, so an
// error measured against an out-of-range reference stays finite. Inf gives inf, NaN NaN.
template <class T>
double ulp_at(double v) {
  using Traits = DtypeTraits<T>;
  const double magnitude = std::fabs(v);
  if (!std::isfinite(magnitude)) return magnitude;
  int exponent = Traits::min_exp;
  if (magnitude != 0.0) {
    int frexp_exponent = 0;
    std::frexp(magnitude, &frexp_exponent);  // magnitude = m * 2^e, m in [0.5, 1)
    exponent = std::max(frexp_exponent - 1, Traits::min_exp);
  }
  return std::ldexp(1.0, exponent - Traits::mant);
}

template <class T>
double round_overflow(double v) {
  const double max = static_cast<double>(static_cast<float>(std::numeric_limits<T>::max()));
  const double threshold = max + ulp_at<T>(max) / 2;
  return std::isfinite(v) && std::fabs(v) >= threshold ? std::copysign(INFINITY, v) : v;
}

template double round_overflow<float>(double v);
template double round_overflow<half>(double v);
template double round_overflow<bfloat16>(double v);

template double ulp_at<float>(double v);
template double ulp_at<half>(double v);
template double ulp_at<bfloat16>(double v);

}  // namespace rb::ref

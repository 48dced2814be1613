// RMSNorm forward in fp64. Every stored value (float, half, bfloat16) is exact in float and
// every float is exact in double, so the cast below loses nothing: the reference computes
// on exactly the values the GPU read.
#include "reference/rmsnorm_ref.h"

#include <Eigen/Core>
#include <cmath>
#include <stdexcept>
#include <string>

#include "reference/host_dtype.h"

namespace rb::ref {
namespace {

template <class T>
Eigen::ArrayXd upcast_row(const T* v, std::int64_t n) {
  const Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>> stored(v, static_cast<Eigen::Index>(n));
  return stored.template cast<float>().template cast<double>();
}

}  // namespace

template <class T, class W>
double rmsnorm_fwd_row(const T* x, const W* w, std::int64_t H, double eps, double* y) {
  if (H < 1) throw std::invalid_argument("rmsnorm_fwd_row: H must be >= 1, got " + std::to_string(H));
  const Eigen::ArrayXd xd = upcast_row(x, H);
  const Eigen::ArrayXd wd = upcast_row(w, H);
  const double mean_square = xd.square().mean();
  const double rrms = 1.0 / std::sqrt(mean_square + eps);
  Eigen::Map<Eigen::ArrayXd>(y, static_cast<Eigen::Index>(H)) = xd * rrms * wd;
  return rrms;
}

#define RB_INSTANTIATE_FWD(T, W) \
  template double rmsnorm_fwd_row<T, W>(const T*, const W*, std::int64_t, double, double*);

RB_INSTANTIATE_FWD(float, float)
RB_INSTANTIATE_FWD(float, half)
RB_INSTANTIATE_FWD(float, bfloat16)
RB_INSTANTIATE_FWD(half, float)
RB_INSTANTIATE_FWD(half, half)
RB_INSTANTIATE_FWD(half, bfloat16)
RB_INSTANTIATE_FWD(bfloat16, float)
RB_INSTANTIATE_FWD(bfloat16, half)
RB_INSTANTIATE_FWD(bfloat16, bfloat16)
#undef RB_INSTANTIATE_FWD

}  // namespace rb::ref

// RMSNorm forward, backward and fused residual add, in fp64. Every stored value (float, half,
// bfloat16) is exact in float and every float is exact in double, so the casts below lose
// nothing: the reference computes on exactly the values the GPU read. double inputs (for
// finite-difference tests) are copied as they are. The conventions' roundings are round_to
// (host_dtype.h), applied elementwise to fp64 intermediates.
#include "reference/rmsnorm_ref.h"

#include <Eigen/Core>
#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "reference/host_dtype.h"

namespace rb::ref {
namespace {

using Eigen::ArrayXd;

// The dtype of a tensor op between T and W in PyTorch: the common type if they agree, else
// fp32 (promote_types of two different floating types among fp32, fp16, bf16 is fp32).
template <class T, class W>
using promoted_t = std::conditional_t<std::is_same_v<T, W>, T, float>;

template <class T>
ArrayXd rounded_to(const ArrayXd& v) {
  if constexpr (std::is_same_v<T, double>)
    return v;
  else
    return v.unaryExpr([](double e) { return round_to<T>(e); });
}

// Always a fresh ArrayXd, double inputs included, so every dtype takes the same Eigen code
// path on identically aligned data: equal values give bitwise equal results.
template <class T>
ArrayXd upcast_row(const T* v, std::int64_t n) {
  const Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>> stored(v, static_cast<Eigen::Index>(n));
  if constexpr (std::is_same_v<T, double>)
    return stored;
  else
    return stored.template cast<float>().template cast<double>();
}

Eigen::Map<ArrayXd> row_out(double* p, std::int64_t n) { return {p, static_cast<Eigen::Index>(n)}; }

void check_h(const char* fn, std::int64_t H) {
  if (H < 1) throw std::invalid_argument(std::string(fn) + ": H must be >= 1, got " + std::to_string(H));
}

void check_rows(const char* fn, std::int64_t M, std::int64_t H, std::int64_t stride) {
  check_h(fn, H);
  if (M < 0) throw std::invalid_argument(std::string(fn) + ": M must be >= 0, got " + std::to_string(M));
  if (stride < H)
    throw std::invalid_argument(std::string(fn) + ": stride " + std::to_string(stride) + " < H " +
                                std::to_string(H));
}

double rrms_of(const ArrayXd& x, double eps) { return 1.0 / std::sqrt(x.square().mean() + eps); }

// The weight the normalised row is multiplied by: w itself, or 1 + w rounded as the
// convention rounds it (fp32 for gemma, W for zero_centered; 1 + w is exact or innocuously
// rounded in fp64, see the header).
template <class W>
ArrayXd effective_weight(const W* w, std::int64_t H, Convention conv) {
  const ArrayXd wd = upcast_row(w, H);
  switch (conv) {
    case Convention::gemma:
      return rounded_to<float>(1.0 + wd);
    case Convention::zero_centered:
      return rounded_to<W>(1.0 + wd);
    case Convention::fp32:
    case Convention::llama:
      return wd;
  }
  throw std::invalid_argument("rmsnorm reference: unknown Convention value " +
                              std::to_string(static_cast<int>(conv)));
}

// y before its final rounding: x * rrms * w_eff exactly, or llama's chain of roundings
// (n = round_T(x * rrms), then round_{promoted(T, W)}(n * w)). x holds T's values (for the add
// op, s as the convention rounded it).
template <class T, class W>
ArrayXd scaled_row(const ArrayXd& x, double rrms, const W* w, std::int64_t H, Convention conv) {
  if (conv == Convention::llama) {
    const ArrayXd normalised = rounded_to<T>(x * rrms);
    return rounded_to<promoted_t<T, W>>(normalised * upcast_row(w, H));
  }
  return x * rrms * effective_weight(w, H, conv);
}

// The RMSNorm backward of one row at x (see the header for the formulas), w being the
// effective weight (effective_weight). dw and dw_abs receive this row's contribution.
void norm_bwd(const ArrayXd& x, const ArrayXd& w, const ArrayXd& dy, double rrms, const BwdOut& out) {
  const std::int64_t H = x.size();
  const ArrayXd g = dy * w;
  const double rrms3_over_h = rrms * rrms * rrms / static_cast<double>(H);
  if (out.dx) row_out(out.dx, H) = rrms * g - x * (rrms3_over_h * (g * x).sum());
  if (out.dx_scale)
    row_out(out.dx_scale, H) = rrms * g.abs() + x.abs() * (rrms3_over_h * (g * x).abs().sum());
  if (out.dw || out.dw_abs) {
    const ArrayXd dw_row = dy * x * rrms;
    if (out.dw) row_out(out.dw, H) = dw_row;
    if (out.dw_abs) row_out(out.dw_abs, H) = dw_row.abs();
  }
}

// M rows through row_bwd(i, row_out), summing dw and dw_abs over rows in fp64.
template <class RowBwd>
void bwd_rows(std::int64_t M, std::int64_t H, std::int64_t stride, const BwdOut& out, RowBwd row_bwd) {
  ArrayXd dw_row(H), dw_abs_row(H);
  if (out.dw) row_out(out.dw, H).setZero();
  if (out.dw_abs) row_out(out.dw_abs, H).setZero();
  for (std::int64_t i = 0; i < M; ++i) {
    const BwdOut row{out.dx ? out.dx + i * stride : nullptr, out.dw ? dw_row.data() : nullptr,
                     out.dx_scale ? out.dx_scale + i * stride : nullptr,
                     out.dw_abs ? dw_abs_row.data() : nullptr};
    row_bwd(i, row);
    if (out.dw) row_out(out.dw, H) += dw_row;
    if (out.dw_abs) row_out(out.dw_abs, H) += dw_abs_row;
  }
}

}  // namespace

template <class T, class W>
double rmsnorm_fwd_row(const T* x, const W* w, std::int64_t H, double eps, double* y, Convention conv) {
  check_h("rmsnorm_fwd_row", H);
  const ArrayXd xd = upcast_row(x, H);
  const double rrms = rrms_of(xd, eps);
  row_out(y, H) = scaled_row<T>(xd, rrms, w, H, conv);
  return rrms;
}

template <class T>
double rrms_row(const T* x, std::int64_t H, double eps) {
  check_h("rrms_row", H);
  return rrms_of(upcast_row(x, H), eps);
}

template <class T, class W>
void rmsnorm_bwd_row(const T* x, const W* w, const T* dy, std::int64_t H, double rrms, const BwdOut& out,
                     Convention conv) {
  check_h("rmsnorm_bwd_row", H);
  norm_bwd(upcast_row(x, H), effective_weight(w, H, conv), upcast_row(dy, H), rrms, out);
}

template <class T, class W>
void rmsnorm_bwd_rows(const T* x, const W* w, const T* dy, const double* rrms, std::int64_t M, std::int64_t H,
                      std::int64_t stride, const BwdOut& out, Convention conv) {
  check_rows("rmsnorm_bwd_rows", M, H, stride);
  const ArrayXd wd = effective_weight(w, H, conv);
  bwd_rows(M, H, stride, out, [&](std::int64_t i, const BwdOut& row) {
    norm_bwd(upcast_row(x + i * stride, H), wd, upcast_row(dy + i * stride, H), rrms[i], row);
  });
}

template <class T, class R, class W>
double rmsnorm_add_fwd_row(const T* x, const R* r, const W* w, std::int64_t H, double eps, double* y,
                           double* s, Convention conv) {
  check_h("rmsnorm_add_fwd_row", H);
  const ArrayXd exact_sum = upcast_row(x, H) + upcast_row(r, H);
  const ArrayXd sd = conv == Convention::llama ? rounded_to<R>(exact_sum) : exact_sum;
  const double rrms = rrms_of(sd, eps);
  row_out(y, H) = scaled_row<T>(sd, rrms, w, H, conv);
  row_out(s, H) = sd;
  return rrms;
}

template <class T, class R, class W>
void rmsnorm_add_bwd_row(const R* s, const W* w, const T* dy, const R* ds_out, std::int64_t H, double rrms,
                         const BwdOut& out, Convention conv) {
  check_h("rmsnorm_add_bwd_row", H);
  norm_bwd(upcast_row(s, H), effective_weight(w, H, conv), upcast_row(dy, H), rrms, out);
  if (out.dx || out.dx_scale) {
    const ArrayXd ds = upcast_row(ds_out, H);
    if (out.dx) row_out(out.dx, H) += ds;
    if (out.dx_scale) row_out(out.dx_scale, H) += ds.abs();
  }
}

template <class T, class R, class W>
void rmsnorm_add_bwd_rows(const R* s, const W* w, const T* dy, const R* ds_out, const double* rrms,
                          std::int64_t M, std::int64_t H, std::int64_t stride, const BwdOut& out,
                          Convention conv) {
  check_rows("rmsnorm_add_bwd_rows", M, H, stride);
  bwd_rows(M, H, stride, out, [&](std::int64_t i, const BwdOut& row) {
    rmsnorm_add_bwd_row<T, R, W>(s + i * stride, w, dy + i * stride, ds_out + i * stride, H, rrms[i], row,
                                 conv);
  });
}

template <class W>
void effective_weight_row(const W* w, std::int64_t H, Convention conv, double* out) {
  check_h("effective_weight_row", H);
  Eigen::Map<ArrayXd>(out, H) = effective_weight(w, H, conv);
}

// Instantiations: every combination of float, half and bfloat16, plus all-double.

#define RB_INSTANTIATE_ONE(T)                                           \
  template double rrms_row<T>(const T*, std::int64_t, double);          \
  template void effective_weight_row<T>(const T*, std::int64_t, Convention, double*);

#define RB_INSTANTIATE_TW(T, W)                                                                          \
  template double rmsnorm_fwd_row<T, W>(const T*, const W*, std::int64_t, double, double*, Convention);  \
  template void rmsnorm_bwd_row<T, W>(const T*, const W*, const T*, std::int64_t, double, const BwdOut&, \
                                      Convention);                                                       \
  template void rmsnorm_bwd_rows<T, W>(const T*, const W*, const T*, const double*, std::int64_t,        \
                                       std::int64_t, std::int64_t, const BwdOut&, Convention);

#define RB_INSTANTIATE_TRW(T, R, W)                                                                         \
  template double rmsnorm_add_fwd_row<T, R, W>(const T*, const R*, const W*, std::int64_t, double, double*, \
                                               double*, Convention);                                        \
  template void rmsnorm_add_bwd_row<T, R, W>(const R*, const W*, const T*, const R*, std::int64_t, double,  \
                                             const BwdOut&, Convention);                                    \
  template void rmsnorm_add_bwd_rows<T, R, W>(const R*, const W*, const T*, const R*, const double*,        \
                                              std::int64_t, std::int64_t, std::int64_t, const BwdOut&,      \
                                              Convention);

#define RB_INSTANTIATE_TR(T, R) \
  RB_INSTANTIATE_TRW(T, R, float) RB_INSTANTIATE_TRW(T, R, half) RB_INSTANTIATE_TRW(T, R, bfloat16)

#define RB_INSTANTIATE_T(T)                                                             \
  RB_INSTANTIATE_ONE(T)                                                                 \
  RB_INSTANTIATE_TW(T, float)                                                           \
  RB_INSTANTIATE_TW(T, half) RB_INSTANTIATE_TW(T, bfloat16) RB_INSTANTIATE_TR(T, float) \
      RB_INSTANTIATE_TR(T, half) RB_INSTANTIATE_TR(T, bfloat16)

RB_INSTANTIATE_T(float)
RB_INSTANTIATE_T(half)
RB_INSTANTIATE_T(bfloat16)
RB_INSTANTIATE_ONE(double)
RB_INSTANTIATE_TW(double, double)
RB_INSTANTIATE_TRW(double, double, double)

#undef RB_INSTANTIATE_T
#undef RB_INSTANTIATE_TR
#undef RB_INSTANTIATE_TRW
#undef RB_INSTANTIATE_TW
#undef RB_INSTANTIATE_ONE

}  // namespace rb::ref

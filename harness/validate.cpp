#include "harness/validate.h"

#include <algorithm>
#include <cmath>

#include "harness/host_types.h"

namespace rb {

Tolerance fwd_tolerance(DType out) {
  switch (out) {
    case DType::f32:
      return {1e-5, 1e-5};
    case DType::f16:
      return {1e-3, 1e-3};
    case DType::bf16:
      return {1e-2, 1e-2};
    case DType::e4m3:
    case DType::e5m2:
      // One fp8 ulp relative (2^-3, 2^-2), over the normal range: see fp8_tolerance for the
      // per-element bound the checks use; this is the CSV's summary of it.
      return {0, std::ldexp(1.0, -mantissa_bits(out))};
  }
  return {0, 0};
}

Tolerance fp8_tolerance(double ulp) { return {ulp, 0}; }

Tolerance llama_tolerance(DType x, DType y) {
  Tolerance t = fwd_tolerance(y);
  t.rtol += std::ldexp(1.0, -mantissa_bits(x));
  return t;
}

Tolerance rrms_tolerance() { return fwd_tolerance(DType::f32); }

namespace {

constexpr double kU = 0x1p-24;  // fp32 unit roundoff

// Half the smallest subnormal of t: 2^(min_exp - mant) / 2.
double half_min_subnormal(DType t) {
  return with_host_type(t, [](auto v) {
    using Tr = ref::DtypeTraits<decltype(v)>;
    return std::ldexp(1.0, Tr::min_exp - Tr::mant - 1);
  });
}

}  // namespace

ScaledTolerance dx_tolerance(DType out, std::int64_t H) {
  return {half_min_subnormal(out), fwd_tolerance(out).rtol,
          kU * (8.0 + 2.0 * std::sqrt(static_cast<double>(H)))};
}

ScaledTolerance dw_tolerance(DType out, std::int64_t M) {
  return {half_min_subnormal(out), fwd_tolerance(out).rtol,
          kU * (4.0 + 4.0 * std::sqrt(static_cast<double>(M)))};
}

bool within_tolerance(double got, double ref, const Tolerance& t) {
  if (!std::isfinite(ref)) return std::isnan(ref) ? std::isnan(got) : got == ref;
  if (!std::isfinite(got)) return false;
  return std::fabs(got - ref) <= t.atol + t.rtol * std::fabs(ref);
}

void ErrorStats::add(std::int64_t row, std::int64_t col, double got, double ref, double ulp) {
  add(row, col, got, ref, ulp, tol_);
}

void ErrorStats::add(std::int64_t row, std::int64_t col, double got, double ref, double ulp,
                     const Tolerance& tol) {
  const bool ok = within_tolerance(got, ref, tol);
  // A non-finite value that matches a non-finite reference is no error at all.
  const double err = std::isfinite(got) && std::isfinite(ref) ? std::fabs(got - ref) : (ok ? 0.0 : INFINITY);
  max_abs = std::max(max_abs, err);
  if (std::fabs(ref) >= tol.atol && ref != 0) max_rel = std::max(max_rel, err / std::fabs(ref));
  if (ulp > 0) max_ulp = std::max(max_ulp, err / ulp);
  const double bound = tol.atol + tol.rtol * std::fabs(ref);
  const double ratio =
      std::isfinite(ref) ? (bound > 0 ? err / bound : (err > 0 ? INFINITY : 0.0)) : (ok ? 0.0 : INFINITY);
  if (ratio > worst_ratio || worst_row < 0) {
    worst_ratio = ratio;
    worst_row = row;
    worst_col = col;
  }
  if (!ok) {
    ++mismatches;
    if (first.size() < kKeep) first.push_back({row, col, got, ref});
  }
}

void ErrorStats::add_output(std::int64_t row, std::int64_t col, double got, double ref, double rounded, double ulp,
                            const Tolerance& t) {
  if (!std::isfinite(ref) || std::isfinite(rounded)) return add(row, col, got, ref, ulp, t);
  if (unrepresentable++ == 0) first_unrepresentable = {row, col, got, ref};
  if (got == rounded) ++matched_inf;
  add(row, col, got, rounded, ulp, t);
}

std::vector<std::int64_t> rows_to_check(std::int64_t M, std::int64_t H, std::int64_t max_elems) {
  std::vector<std::int64_t> rows;
  if (M <= 0) return rows;
  const std::int64_t budget = std::max<std::int64_t>(16, max_elems / std::max<std::int64_t>(H, 1));
  if (M <= budget) {
    rows.resize(static_cast<std::size_t>(M));
    for (std::int64_t r = 0; r < M; ++r) rows[static_cast<std::size_t>(r)] = r;
    return rows;
  }
  for (std::int64_t i = 0; i < budget; ++i) rows.push_back(i * (M - 1) / (budget - 1));
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

}  // namespace rb

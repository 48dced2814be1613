// Validation: the tolerance table, the per-element pass rule and the error metrics a case
// reports (max abs / rel / ULP error, mismatches, worst location, first mismatches).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/types.h"

namespace rb {

struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

// Forward output tolerances per output dtype (|out - ref| <= atol + rtol * |ref|):
//   fp32 1e-5 / 1e-5: the kernel's fp32 sum of H squares carries a relative error of about
//        log2(H) * 2^-24 (tree reduction), < 1e-6 at H = 65536; rsqrtf adds ~2 ulp.
//   fp16 1e-3 / 1e-3: one rounding of the output is 2^-11 = 4.9e-4 relative.
//   bf16 1e-2 / 1e-2: one rounding of the output is 2^-8 = 3.9e-3 relative.
// rrms is fp32 whatever the x dtype: the inputs are exact in fp32 and only the fp32 sum
// rounds, so it is held to the fp32 row.
Tolerance fwd_tolerance(DType out);
Tolerance rrms_tolerance();

// An fp8 y (e4m3, e5m2), per element: |y8 - sat(y * scale)| <= one fp8 ulp at the wanted
// value (`ulp`, the subnormal spacing near zero). The kernel's y before the fp8 rounding is
// within the fp32 row above of the exact y (a relative ~1e-6), and the scale adds one fp32
// rounding: both are 2^-17 of an e4m3 ulp or less. Rounding to fp8 then costs half an ulp,
// except where that tiny error puts the value on the other side of a rounding midpoint than
// the exact one: the other neighbour, less than one ulp away. So one ulp, and no more: a
// kernel that rounded twice (to x's dtype, then to fp8) or scaled after rounding is off by
// more on some elements; the saturated ones (the wanted value clamped to 448 or 57344) must
// be exactly the largest finite value or one ulp below.
Tolerance fp8_tolerance(double ulp);

// y under the llama convention: the forward's tolerance plus one ulp of x's dtype, relative
// (2^-10 fp16, 2^-7 bf16, 2^-23 fp32). llama rounds n = x * rrms to x's dtype; a kernel's
// fp32 rrms (within ~1e-6 of the exact one) can put x * rrms on the other side of a rounding
// midpoint than the exact value, which moves n, and y with it, by one ulp of x's dtype. At
// fp16 that ulp (up to 9.8e-4 relative) plus the final rounding's half ulp exceeds the fp16
// row's 1e-3 for |y| above ~2.
Tolerance llama_tolerance(DType x, DType y);

// Backward and residual tolerances. The error analysis, with the simulations behind the
// numbers, is in reference/rmsnorm_ref.h; in short, with u = 2^-24 (fp32 unit roundoff):
//   dx (T, or the residual dtype for add-bwd), per element:
//        |err| <= atol + rtol_T * |dx| + u * (8 + 2 * sqrt(H)) * dx_scale[h]
//     dx is a difference of two terms that cancel (at H = 1 to ~eps / x^2), so the fp32 error
//     is a multiple of u times the terms' sizes (dx_scale, the reference's sum of |terms|),
//     not of |dx|: simulated, |err| / (u * dx_scale) < 2.8 for every H from 1 to 65536, while
//     |err| / |dx| reached 0.17 at H = 1. rtol_T is the forward's rtol for the output dtype
//     (it covers the final rounding, half an ulp: 2^-24, 2^-11, 2^-8); the sqrt(H) term
//     covers S = sum g * x over rows whose products share a sign.
//   dw (W), per column, over all M rows:
//        |err| <= atol + rtol_W * |dw| + u * (4 + 4 * sqrt(M)) * dw_abs[h]
//     dw sums M terms t = dy * x * rrms; every term passes through a chain of at most M fp32
//     additions (per-block partials, then the column reduction), so the error grows like
//     sqrt(M) * u * sum |t| (dw_abs) for independent roundings: simulated at M = 1..65536 the
//     largest error was 1.8 u sqrt(M) dw_abs (at M = 1). It scales with sum |t|, not |dw|:
//     with random-sign dy, |dw| ~ sqrt(M) |t| while sum |t| ~ M |t|, and single columns
//     cancel to ~0, where any |dw|-relative bound fails correct kernels. dw accumulated in
//     bf16 misses this bound by ~17x at M = 16384.
//   atol (both): half the smallest subnormal of the output dtype, the most a correct final
//     rounding can lose on a value that cancels to ~0 (fp16: 2^-25; bf16, fp32: < 1e-40).
//   residual_out (R), per element: |err| <= ulp_R(s): the fp32 add rounds once and the store
//     to R once (half an ulp of R plus u |s|), so the bound is one ulp of R at |s|.
struct ScaledTolerance {
  double atol = 0;
  double rtol = 0;
  double scale_coef = 0;  // times the element's error scale (dx_scale, dw_abs)
  Tolerance at(double scale) const { return {atol + scale_coef * scale, rtol}; }
};
ScaledTolerance dx_tolerance(DType out, std::int64_t H);
ScaledTolerance dw_tolerance(DType out, std::int64_t M);

// The pass rule. NaN or Inf where the reference is finite always fails.
bool within_tolerance(double got, double ref, const Tolerance& t);

struct Mismatch {
  std::int64_t row = 0, col = 0;
  double got = 0, ref = 0;
};

// Accumulates one tensor's comparison.
class ErrorStats {
 public:
  explicit ErrorStats(Tolerance t) : tol_(t) {}
  // ulp: the spacing of the output dtype at |ref|.
  void add(std::int64_t row, std::int64_t col, double got, double ref, double ulp);
  // The same with this element's own tolerance (a scaled or per-element bound).
  void add(std::int64_t row, std::int64_t col, double got, double ref, double ulp, const Tolerance& t);

  // The same for an output element whose reference `ref` rounds to `rounded` in the output
  // dtype: where a finite reference lies beyond the dtype's range (rounded is +-inf, the
  // correctly rounded output), the element is judged against `rounded`; such elements are
  // counted in `unrepresentable`, and those that are that inf in `matched_inf`.
  void add_output(std::int64_t row, std::int64_t col, double got, double ref, double rounded, double ulp,
                  const Tolerance& t);

  const Tolerance& tol() const { return tol_; }
  std::int64_t mismatches = 0;
  std::int64_t unrepresentable = 0;
  std::int64_t matched_inf = 0;
  Mismatch first_unrepresentable{-1, -1, 0, 0};
  double max_abs = 0;
  double max_rel = 0;  // over elements with |ref| >= atol (relative error of ~0 is noise)
  double max_ulp = 0;
  // Element with the largest |err| / (atol + rtol |ref|); -1 when nothing was compared.
  std::int64_t worst_row = -1, worst_col = -1;
  double worst_ratio = -1;
  std::vector<Mismatch> first;  // up to kKeep, in the order found

  static constexpr std::size_t kKeep = 5;

 private:
  Tolerance tol_;
};

// Rows the reference checks for an M x H case: all rows when M * H <= max_elems, else a
// deterministic sample that always holds the first and last rows and spreads the rest
// evenly (at least 16 rows).
std::vector<std::int64_t> rows_to_check(std::int64_t M, std::int64_t H, std::int64_t max_elems);

}  // namespace rb

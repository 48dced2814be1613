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

  const Tolerance& tol() const { return tol_; }
  std::int64_t mismatches = 0;
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

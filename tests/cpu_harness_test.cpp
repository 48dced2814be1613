// The host-only parts of app/ and harness/ judged without a GPU: list and number parsing,
// tolerances and error metrics, the row sample, layouts and sweep expansion, the timing
// statistics and stopping rule, the bytes formula and the kernel registry's capability checks.
// Suites are named Harness* so `--gtest_filter='Harness*'` selects them.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "app/lists.h"
#include "harness/ops.h"
#include "harness/runner.h"
#include "kernels/launchers.h"
#include "harness/case.h"
#include "harness/tensor_hash.h"
#include "harness/timing.h"
#include "harness/validate.h"
#include "harness/wait.h"
#include "kernels/registry.h"
#include "reports/columns.h"
#include "tests/mutant_names.h"

namespace rb {
namespace {

using I64s = std::vector<std::int64_t>;
constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();

// The message of the std::invalid_argument `f` throws; fails the test if it throws nothing.
template <class F>
std::string invalid_argument_message(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  } catch (...) {
    ADD_FAILURE() << "threw something other than std::invalid_argument";
    return {};
  }
  ADD_FAILURE() << "did not throw";
  return {};
}

// ---------------------------------------------------------------------------------------
// app/lists.h

TEST(HarnessLists, SingleNumber) {
  EXPECT_EQ(parse_int_item("4096", 1), I64s{4096});
  EXPECT_EQ(parse_int_list("4096", 1), I64s{4096});
  EXPECT_EQ(parse_int_list("1", 1), I64s{1});
}

TEST(HarnessLists, CommaList) {
  EXPECT_EQ(parse_int_list("1024,4096,4097", 1), (I64s{1024, 4096, 4097}));
  // Order is the user's, not sorted.
  EXPECT_EQ(parse_int_list("4097,1024", 1), (I64s{4097, 1024}));
}

TEST(HarnessLists, GeometricRange) {
  EXPECT_EQ(parse_int_item("1024:16384:x2", 1), (I64s{1024, 2048, 4096, 8192, 16384}));
  EXPECT_EQ(parse_int_list("1024:16384:x2", 1), (I64s{1024, 2048, 4096, 8192, 16384}));
  EXPECT_EQ(parse_int_item("1:100:x10", 1), (I64s{1, 10, 100}));
  // STOP need not be a term; a one-term range is fine.
  EXPECT_EQ(parse_int_item("100:300:x2", 1), (I64s{100, 200}));
  EXPECT_EQ(parse_int_item("4096:4096:x2", 1), I64s{4096});
  // From 0 a factor never grows: refused, not counted forever (found by the lists fuzzer:
  // "0:0258077:x4" with minimum 0 hung the range count).
  EXPECT_THROW(count_int_item("0:258077:x4", 0), std::invalid_argument);
  EXPECT_THROW(parse_int_item("0:0:x2", 0), std::invalid_argument);
  EXPECT_EQ(parse_int_item("0:8:+4", 0), (I64s{0, 4, 8}));
}

TEST(HarnessLists, ArithmeticRange) {
  EXPECT_EQ(parse_int_item("128:512:+128", 1), (I64s{128, 256, 384, 512}));
  EXPECT_EQ(parse_int_item("1:5:+1", 1), (I64s{1, 2, 3, 4, 5}));
  EXPECT_EQ(parse_int_item("1:6:+2", 1), (I64s{1, 3, 5}));
}

TEST(HarnessLists, RepeatsDroppedKeepingFirstOccurrence) {
  EXPECT_EQ(parse_int_list("4096,1024,4096", 1), (I64s{4096, 1024}));
  EXPECT_EQ(parse_int_list("4096,1024:8192:x2", 1), (I64s{4096, 1024, 2048, 8192}));
  EXPECT_EQ(parse_int_list("128:512:+128,256:1024:x2", 1), (I64s{128, 256, 384, 512, 1024}));
}

TEST(HarnessLists, MinValueIsHonoured) {
  EXPECT_EQ(parse_int_list("0", 0), I64s{0});
  EXPECT_THROW(parse_int_list("0", 1), std::invalid_argument);
  EXPECT_THROW(parse_int_list("4096,0", 1), std::invalid_argument);
  EXPECT_THROW(parse_int_item("0:8:+1", 1), std::invalid_argument);
  EXPECT_THROW(parse_int_list("-4", 1), std::invalid_argument);
}

TEST(HarnessLists, MalformedInputThrows) {
  for (const char* bad : {"abc", "1024:", "16:8:x2", "1:8:x1", "1:8:*2", "", "1:8", "1:8:x", "1:8:+0",
                          "1:2:3:x2", "1024,,4096", "1024,", ",1024", "4096abc", "1.5", " 4096"}) {
    SCOPED_TRACE(std::string("input '") + bad + "'");
    EXPECT_THROW(parse_int_list(bad, 1), std::invalid_argument);
  }
  for (const char* bad : {"abc", "1024:", "16:8:x2", "1:8:x1", "1:8:*2", ""}) {
    SCOPED_TRACE(std::string("item '") + bad + "'");
    EXPECT_THROW(parse_int_item(bad, 1), std::invalid_argument);
  }
}

TEST(HarnessLists, ErrorMessagesSayWhatIsWrong) {
  std::string m = invalid_argument_message([] { parse_int_list("0", 1); });
  EXPECT_NE(m.find("'0'"), std::string::npos) << m;
  EXPECT_NE(m.find("minimum 1"), std::string::npos) << m;

  m = invalid_argument_message([] { parse_int_list("abc", 1); });
  EXPECT_NE(m.find("abc"), std::string::npos) << m;
  EXPECT_NE(m.find("not an integer"), std::string::npos) << m;

  m = invalid_argument_message([] { parse_int_list("16:8:x2", 1); });
  EXPECT_NE(m.find("16:8:x2"), std::string::npos) << m;
  EXPECT_NE(m.find("ends before it starts"), std::string::npos) << m;

  m = invalid_argument_message([] { parse_int_list("1:8:*2", 1); });
  EXPECT_NE(m.find("*2"), std::string::npos) << m;
  EXPECT_NE(m.find("xFACTOR"), std::string::npos) << m;

  m = invalid_argument_message([] { parse_int_list("1024:", 1); });
  EXPECT_NE(m.find("1024:"), std::string::npos) << m;
  EXPECT_NE(m.find("START:STOP"), std::string::npos) << m;

  m = invalid_argument_message([] { parse_int_list("", 1); });
  EXPECT_NE(m.find("not an integer"), std::string::npos) << m;
}

// A bad factor is reported against the step, not against START (which may hold the same
// number).
TEST(HarnessLists, BadFactorMessageNamesTheStep) {
  const std::string m = invalid_argument_message([] { parse_int_list("1:8:x1", 1); });
  EXPECT_NE(m.find("x1"), std::string::npos) << "message does not name the step: " << m;
}

// Ranges reaching near INT64_MAX must stop before the next term would overflow: a wrapped
// (negative) value would slip past the minimum check.
TEST(HarnessLists, HugeRangesDoNotOverflow) {
  auto check = [](const std::string& item, std::int64_t k, bool geometric) {
    SCOPED_TRACE(item);
    I64s v;
    try {
      v = parse_int_item(item, 1);
    } catch (const std::invalid_argument&) {
      return;  // refusing is acceptable
    }
    ASSERT_FALSE(v.empty());
    EXPECT_EQ(v.front(), 1);
    for (std::size_t i = 0; i < v.size(); ++i) {
      EXPECT_GE(v[i], 1) << "value " << i;
      if (i == 0) continue;
      if (geometric)
        EXPECT_TRUE(v[i] % k == 0 && v[i] / k == v[i - 1]) << v[i - 1] << " then " << v[i];
      else
        EXPECT_TRUE(v[i] > v[i - 1] && v[i] - v[i - 1] == k) << v[i - 1] << " then " << v[i];
    }
  };
  check("1:9223372036854775807:x3", 3, true);
  check("1:9223372036854775807:x1000", 1000, true);
  check("1:9223372036854775807:+9223372036854775807", kI64Max, false);
  // Factor 2 is covered by the existing guard: 2^0 .. 2^62.
  const I64s p2 = parse_int_item("1:9223372036854775807:x2", 1);
  ASSERT_EQ(p2.size(), 63u);
  EXPECT_EQ(p2.back(), std::int64_t{1} << 62);
}

TEST(HarnessLists, PositiveDouble) {
  EXPECT_DOUBLE_EQ(parse_positive_double("1e-5"), 1e-5);
  EXPECT_DOUBLE_EQ(parse_positive_double("0.5"), 0.5);
  EXPECT_DOUBLE_EQ(parse_positive_double("1e-6"), 1e-6);
  EXPECT_DOUBLE_EQ(parse_positive_double("1e-37"), 1e-37);
  EXPECT_DOUBLE_EQ(parse_positive_double("3e38"), 3e38);
  // Past fp32's normal range (the kernels' eps and scale are fp32): 0, a subnormal, inf.
  for (const char* bad : {"0", "-1", "nan", "inf", "-inf", "1e-5x", "", "abc", "-0", "0.0", "1e-50", "1e-39", "1e39",
                          "3.5e38"}) {
    SCOPED_TRACE(std::string("input '") + bad + "'");
    EXPECT_THROW(parse_positive_double(bad), std::invalid_argument);
  }
  const std::string m = invalid_argument_message([] { parse_positive_double("nan"); });
  EXPECT_NE(m.find("nan"), std::string::npos) << m;
}

// ---------------------------------------------------------------------------------------
// harness/validate.h

TEST(HarnessValidate, ForwardToleranceTable) {
  EXPECT_DOUBLE_EQ(fwd_tolerance(DType::f32).atol, 1e-5);
  EXPECT_DOUBLE_EQ(fwd_tolerance(DType::f32).rtol, 1e-5);
  EXPECT_DOUBLE_EQ(fwd_tolerance(DType::f16).atol, 1e-3);
  EXPECT_DOUBLE_EQ(fwd_tolerance(DType::f16).rtol, 1e-3);
  EXPECT_DOUBLE_EQ(fwd_tolerance(DType::bf16).atol, 1e-2);
  EXPECT_DOUBLE_EQ(fwd_tolerance(DType::bf16).rtol, 1e-2);
  EXPECT_DOUBLE_EQ(rrms_tolerance().atol, 1e-5);
  EXPECT_DOUBLE_EQ(rrms_tolerance().rtol, 1e-5);
}

// At the top of an output dtype's range the correctly rounded output of a finite exact
// value is +-inf: such an element is judged against that inf and reported, not failed as
// "Inf where the reference is finite". Just below the midpoint it rounds to the largest
// finite value and is judged as before.
TEST(HarnessValidate, ReferenceBeyondTheDtypesRangeIsJudgedAsItsRoundedInf) {
  EXPECT_EQ(ref::round_overflow<ref::half>(65504.0), 65504.0);
  EXPECT_EQ(ref::round_overflow<ref::half>(65519.99), 65519.99);
  EXPECT_EQ(ref::round_overflow<ref::half>(65520.0), INFINITY);  // the tie goes to inf
  EXPECT_EQ(ref::round_overflow<ref::half>(-1e6), -INFINITY);
  EXPECT_EQ(ref::round_overflow<ref::bfloat16>(3.3e38), 3.3e38);
  EXPECT_EQ(ref::round_overflow<ref::bfloat16>(3.4e38), INFINITY);
  EXPECT_EQ(ref::round_overflow<float>(3.4028235e38), 3.4028235e38);
  EXPECT_EQ(ref::round_overflow<float>(3.4028236e38 * 1.0000001), INFINITY);
  EXPECT_EQ(ref::round_overflow<ref::half>(1e-9), 1e-9);  // underflow: the tolerance's atol covers it

  const Tolerance t = fwd_tolerance(DType::f16);
  const double exact = 70000.0, rounded = ref::round_overflow<ref::half>(exact);
  ErrorStats ok(t);
  ok.add_output(3, 4, INFINITY, exact, rounded, ref::ulp_at<ref::half>(exact), t);
  EXPECT_EQ(ok.mismatches, 0);
  EXPECT_EQ(ok.unrepresentable, 1);
  EXPECT_EQ(ok.matched_inf, 1);
  EXPECT_EQ(ok.first_unrepresentable.row, 3);
  EXPECT_EQ(ok.first_unrepresentable.col, 4);
  EXPECT_EQ(ok.max_abs, 0.0);
  // The largest finite value, the wrong inf and NaN are all wrong there.
  for (double got : {65504.0, -static_cast<double>(INFINITY), static_cast<double>(NAN)}) {
    ErrorStats bad(t);
    bad.add_output(0, 0, got, exact, rounded, 1.0, t);
    EXPECT_EQ(bad.mismatches, 1) << got;
    EXPECT_EQ(bad.matched_inf, 0) << got;
  }
  // Inf where the rounded reference is finite still fails.
  ErrorStats finite(t);
  finite.add_output(0, 0, INFINITY, 60000.0, ref::round_overflow<ref::half>(60000.0), 32.0, t);
  EXPECT_EQ(finite.mismatches, 1);
  EXPECT_EQ(finite.unrepresentable, 0);
}

TEST(HarnessValidate, WithinToleranceBoundary) {
  // Dyadic numbers so atol + rtol * |ref| and |got - ref| are exact: the bound is 1.25.
  const Tolerance t{0.25, 0.5};
  const double ref = 2.0;
  EXPECT_TRUE(within_tolerance(2.0, ref, t));
  EXPECT_TRUE(within_tolerance(3.25, ref, t));  // exactly at the bound passes
  EXPECT_FALSE(within_tolerance(std::nextafter(3.25, 10.0), ref, t));
  EXPECT_TRUE(within_tolerance(0.75, ref, t));
  // Just past the bound below ref: |got - ref| is the double after 1.25.
  EXPECT_FALSE(within_tolerance(ref - std::nextafter(1.25, 10.0), ref, t));
  // |ref| is used: a negative reference gets the same bound.
  EXPECT_TRUE(within_tolerance(-3.25, -2.0, t));
  EXPECT_FALSE(within_tolerance(std::nextafter(-3.25, -10.0), -2.0, t));
  // ref 0: only atol.
  EXPECT_TRUE(within_tolerance(0.25, 0.0, t));
  EXPECT_FALSE(within_tolerance(0.2500001, 0.0, t));

  const Tolerance bf = fwd_tolerance(DType::bf16);
  EXPECT_TRUE(within_tolerance(1.015, 1.0, bf));
  EXPECT_FALSE(within_tolerance(1.025, 1.0, bf));
}

TEST(HarnessValidate, NonFiniteOutputs) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const Tolerance huge{1e300, 1e300};
  EXPECT_FALSE(within_tolerance(nan, 1.0, huge));
  EXPECT_FALSE(within_tolerance(inf, 1.0, huge));
  EXPECT_FALSE(within_tolerance(-inf, 1.0, huge));
  EXPECT_FALSE(within_tolerance(nan, 0.0, fwd_tolerance(DType::f32)));
  EXPECT_TRUE(within_tolerance(nan, nan, fwd_tolerance(DType::f32)));
  EXPECT_FALSE(within_tolerance(1.0, nan, huge));
  EXPECT_TRUE(within_tolerance(inf, inf, fwd_tolerance(DType::f32)));
  EXPECT_FALSE(within_tolerance(-inf, inf, huge));
  EXPECT_FALSE(within_tolerance(1.0, inf, huge));
}

TEST(HarnessValidate, ErrorStatsEmpty) {
  ErrorStats s(fwd_tolerance(DType::bf16));
  EXPECT_EQ(s.mismatches, 0);
  EXPECT_EQ(s.worst_row, -1);
  EXPECT_EQ(s.worst_col, -1);
  EXPECT_TRUE(s.first.empty());
  EXPECT_DOUBLE_EQ(s.tol().atol, 1e-2);
}

TEST(HarnessValidate, ErrorStatsCountsAndMaxima) {
  ErrorStats s(Tolerance{0.25, 0.5});
  s.add(0, 0, 2.0, 2.0, 0.125);     // exact
  s.add(0, 1, 3.0, 2.0, 0.125);     // err 1 (bound 1.25): pass, 8 ulp, rel 0.5
  s.add(1, 0, 5.0, 2.0, 0.25);      // err 3: mismatch, 12 ulp, rel 1.5
  s.add(1, 1, 0.5, 0.0, 1.0 / 64);  // err 0.5 (bound 0.25): mismatch, 32 ulp; |ref| < atol: no rel
  EXPECT_EQ(s.mismatches, 2);
  EXPECT_DOUBLE_EQ(s.max_abs, 3.0);
  EXPECT_DOUBLE_EQ(s.max_ulp, 32.0);
  EXPECT_DOUBLE_EQ(s.max_rel, 1.5);
  ASSERT_EQ(s.first.size(), 2u);
  EXPECT_EQ(s.first[0].row, 1);
  EXPECT_EQ(s.first[0].col, 0);
  EXPECT_DOUBLE_EQ(s.first[0].got, 5.0);
  EXPECT_DOUBLE_EQ(s.first[0].ref, 2.0);
  EXPECT_EQ(s.first[1].row, 1);
  EXPECT_EQ(s.first[1].col, 1);
}

TEST(HarnessValidate, WorstIsLargestRatioNotLargestAbsError) {
  // A: abs error 10 against ref 1000: ratio 10 / 10.01, within tolerance.
  // B: abs error 0.05 against ref 0: ratio 5, a mismatch. B is the worst, A has max_abs.
  for (bool a_first : {true, false}) {
    SCOPED_TRACE(a_first ? "A first" : "B first");
    ErrorStats s(Tolerance{1e-2, 1e-2});
    auto add_a = [&] { s.add(3, 7, 1010.0, 1000.0, 0.5); };
    auto add_b = [&] { s.add(5, 2, 0.05, 0.0, 1e-3); };
    s.add(0, 0, 1.0, 1.0, 1e-3);
    if (a_first) {
      add_a();
      add_b();
    } else {
      add_b();
      add_a();
    }
    s.add(9, 9, 1.001, 1.0, 1e-3);
    EXPECT_DOUBLE_EQ(s.max_abs, 10.0);
    EXPECT_EQ(s.worst_row, 5);
    EXPECT_EQ(s.worst_col, 2);
    EXPECT_NEAR(s.worst_ratio, 5.0, 1e-9);
    EXPECT_EQ(s.mismatches, 1);
    EXPECT_NEAR(s.max_ulp, 50.0, 1e-9);
  }
}

TEST(HarnessValidate, ErrorStatsKeepsFirstMismatchesInOrder) {
  ErrorStats s(Tolerance{1e-3, 1e-3});
  const int n = static_cast<int>(ErrorStats::kKeep) + 4;
  for (int i = 0; i < n; ++i) {
    s.add(i, 100 - i, 1.0, 1.0, 1e-3);    // passes, never kept
    s.add(i, 2 * i, 2.0 + i, 1.0, 1e-3);  // mismatch
  }
  EXPECT_EQ(s.mismatches, n);
  ASSERT_EQ(s.first.size(), ErrorStats::kKeep);
  for (std::size_t i = 0; i < s.first.size(); ++i) {
    EXPECT_EQ(s.first[i].row, static_cast<std::int64_t>(i));
    EXPECT_EQ(s.first[i].col, static_cast<std::int64_t>(2 * i));
    EXPECT_DOUBLE_EQ(s.first[i].got, 2.0 + static_cast<double>(i));
    EXPECT_DOUBLE_EQ(s.first[i].ref, 1.0);
  }
  // The worst is the last one added (largest error), not one of the kept.
  EXPECT_EQ(s.worst_row, n - 1);
}

TEST(HarnessValidate, ErrorStatsNonFiniteOutputIsMismatch) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  ErrorStats s(fwd_tolerance(DType::f16));
  s.add(0, 0, 1.5, 1.0, 1e-3);
  s.add(2, 3, nan, 1.0, 1e-3);
  s.add(4, 1, std::numeric_limits<double>::infinity(), 1.0, 1e-3);
  EXPECT_EQ(s.mismatches, 3);
  EXPECT_TRUE(std::isinf(s.max_abs));
  EXPECT_EQ(s.worst_row, 2);
  EXPECT_EQ(s.worst_col, 3);
  ASSERT_EQ(s.first.size(), 3u);
  EXPECT_TRUE(std::isnan(s.first[1].got));
}

// A non-finite output matching a non-finite reference (NaN vs NaN, Inf vs Inf) adds no
// error, so it neither inflates max_abs nor hides the real worst mismatch.
TEST(HarnessValidate, MatchingNonFiniteValuesAddNoError) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  ErrorStats s(fwd_tolerance(DType::f32));
  s.add(0, 0, nan, nan, 1e-7);
  s.add(1, 1, inf, inf, 1e-7);
  s.add(2, 5, 1.5, 1.0, 1e-7);
  EXPECT_EQ(s.mismatches, 1);
  EXPECT_DOUBLE_EQ(s.max_abs, 0.5);
  EXPECT_EQ(s.worst_row, 2);
  EXPECT_EQ(s.worst_col, 5);
}

TEST(HarnessValidate, RowsToCheckAllRowsWhenSmall) {
  EXPECT_EQ(rows_to_check(5, 128, 1 << 20), (I64s{0, 1, 2, 3, 4}));
  EXPECT_EQ(rows_to_check(1, 1 << 24, 1 << 20), I64s{0});
  EXPECT_TRUE(rows_to_check(0, 128, 1 << 20).empty());
  // M * H exactly at the budget: still every row.
  const I64s all = rows_to_check(1024, 1024, 1 << 20);
  ASSERT_EQ(all.size(), 1024u);
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i], static_cast<std::int64_t>(i));
}

void expect_valid_sample(const I64s& rows, std::int64_t M) {
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows.front(), 0);
  EXPECT_EQ(rows.back(), M - 1);
  EXPECT_GE(rows.size(), 16u);
  for (std::size_t i = 1; i < rows.size(); ++i)
    EXPECT_LT(rows[i - 1], rows[i]) << "not sorted/unique at " << i;
  for (std::int64_t r : rows) {
    EXPECT_GE(r, 0);
    EXPECT_LT(r, M);
  }
}

TEST(HarnessValidate, RowsToCheckSamplesLargeCases) {
  struct P {
    std::int64_t M, H, max_elems;
  };
  for (const P& p : {P{16384, 4096, 1 << 22}, P{1000000, 4096, 1 << 22}, P{16384, 65536, 1 << 22},
                     P{17, 1 << 24, 1 << 20}, P{1000, 1 << 24, 1 << 20}, P{99, 4097, 40000}}) {
    SCOPED_TRACE(::testing::Message() << "M=" << p.M << " H=" << p.H << " max_elems=" << p.max_elems);
    const I64s rows = rows_to_check(p.M, p.H, p.max_elems);
    expect_valid_sample(rows, p.M);
    const std::int64_t budget_rows = std::max<std::int64_t>(16, p.max_elems / p.H);
    EXPECT_LT(static_cast<std::int64_t>(rows.size()), p.M);
    EXPECT_LE(static_cast<std::int64_t>(rows.size()), budget_rows);
    EXPECT_GE(static_cast<std::int64_t>(rows.size()), budget_rows * 9 / 10);
    // Spread evenly: no gap much larger than the average one.
    const double avg_gap = static_cast<double>(p.M - 1) / static_cast<double>(rows.size() - 1);
    for (std::size_t i = 1; i < rows.size(); ++i)
      EXPECT_LE(static_cast<double>(rows[i] - rows[i - 1]), std::ceil(avg_gap) + 1) << "gap at " << i;
    EXPECT_EQ(rows, rows_to_check(p.M, p.H, p.max_elems)) << "not deterministic";
  }
}

// ---------------------------------------------------------------------------------------
// harness/case.h

TEST(HarnessCase, LayoutStrideAndOffset) {
  for (std::int64_t H : {1, 3, 15, 16, 127, 128, 1000, 4096, 4097, 65536}) {
    SCOPED_TRACE(H);
    EXPECT_EQ(layout_stride(Layout::contiguous, H), H);
    EXPECT_EQ(layout_stride(Layout::misaligned, H), H);
    const std::int64_t s = layout_stride(Layout::strided, H);
    EXPECT_GT(s, H);
    EXPECT_EQ(s % 16, 0);
    EXPECT_LE(s, H + 32);
    EXPECT_EQ(layout_stride(Layout::skewed, H), H + 1);
    EXPECT_LE(layout_stride(Layout::skewed, H), s);  // strided stays the widest (too_large's test models it)
  }
  EXPECT_EQ(layout_offset(Layout::contiguous), 0);
  EXPECT_EQ(layout_offset(Layout::strided), 0);
  EXPECT_EQ(layout_offset(Layout::misaligned), 1);
  EXPECT_EQ(layout_offset(Layout::skewed), 0);
  EXPECT_EQ(layout_stride(Layout::skewed, kI64Max), kI64Max);  // saturates rather than wrap
}

// What each layout is for: strided rows keep row 0's 16-byte phase for every element size (a
// gap, not a shift), skewed rows of whole 16-byte vectors (H=4096 and 1024, where contiguous rows
// are all aligned) start at every phase an element size allows, so a kernel's per-row alignment
// test and its element-wise paths run at H that are multiples of the vector.
TEST(HarnessCase, SkewedRowsTakeEveryPhaseStridedRowsOne) {
  for (std::size_t es : {1u, 2u, 4u}) {
    for (std::int64_t H : {1024, 4096}) {
      SCOPED_TRACE(testing::Message() << "element " << es << " H=" << H);
      std::set<std::int64_t> skewed, strided;
      for (std::int64_t row = 0; row < 64; ++row) {
        skewed.insert(row * layout_stride(Layout::skewed, H) * static_cast<std::int64_t>(es) % 16);
        strided.insert(row * layout_stride(Layout::strided, H) * static_cast<std::int64_t>(es) % 16);
      }
      EXPECT_EQ(skewed.size(), 16 / es);
      EXPECT_EQ(strided, std::set<std::int64_t>{0});
    }
  }
}

TEST(HarnessCase, CaseStrideFollowsItsLayout) {
  Case c;
  c.H = 4097;
  for (Layout l : all_layouts()) {
    c.layout = l;
    EXPECT_EQ(c.stride(), layout_stride(l, 4097)) << layout_name(l);
  }
}

// too_large: the span of the widest layout (strided's stride, misaligned's offset), exact at
// the 2^56 boundary, and no wrap on the way for any int64 M and H.
TEST(HarnessCase, TooLargeIsExactAtTheSpanLimitAndNeverWraps) {
  constexpr std::int64_t kLimit = kMaxSpanElements;
  const auto widest_span = [](std::int64_t M, std::int64_t H) {  // in 128 bits: cannot wrap
    const __int128 stride = (static_cast<__int128>(H) + 15) / 16 * 16 + 16;
    return 1 + (static_cast<__int128>(M) - 1) * stride + H;
  };
  for (std::int64_t M : {std::int64_t{1}, std::int64_t{2}, std::int64_t{65536}, std::int64_t{2147483647},
                         std::int64_t{1} << 40, kI64Max}) {
    for (std::int64_t H : {std::int64_t{1}, std::int64_t{4097}, std::int64_t{1} << 20, std::int64_t{1} << 36,
                           kLimit / 2, kLimit - 2, kLimit - 1, kLimit, kI64Max - 15, kI64Max}) {
      SCOPED_TRACE(testing::Message() << "M=" << M << " H=" << H);
      EXPECT_GE(layout_stride(Layout::strided, H), H);  // saturates rather than wrap
      const auto why = too_large(M, H);
      EXPECT_EQ(why.has_value(), widest_span(M, H) > kLimit);
      if (why) {
        EXPECT_NE(why->find("M=" + std::to_string(M) + " rows of H=" + std::to_string(H)), std::string::npos) << *why;
      }
    }
  }
  // The shapes the tool sweeps are far inside it.
  EXPECT_FALSE(too_large(16384, 131072));
  EXPECT_FALSE(too_large(2147483647, 1 << 20));
  // One row at the limit, and one column past it.
  EXPECT_FALSE(too_large(1, kLimit - 1));
  EXPECT_TRUE(too_large(1, kLimit));
  EXPECT_TRUE(too_large(2, kLimit / 2));
}

TEST(HarnessCase, ParseLayoutRoundTrip) {
  ASSERT_EQ(all_layouts().size(), 4u);
  std::set<std::string> names;
  for (Layout l : all_layouts()) {
    const std::string name(layout_name(l));
    names.insert(name);
    const auto back = parse_layout(name);
    ASSERT_TRUE(back.has_value()) << name;
    EXPECT_EQ(*back, l);
  }
  EXPECT_EQ(names, (std::set<std::string>{"contiguous", "strided", "misaligned", "skewed"}));
  EXPECT_FALSE(parse_layout("weird").has_value());
  EXPECT_FALSE(parse_layout("").has_value());
  EXPECT_FALSE(parse_layout("Strided").has_value());
}

Sweep small_sweep() {
  Sweep s;
  s.ops = {Op::fwd};
  s.kernels = {"naive", "warp-row", "auto"};
  s.dtypes = {DType::f16, DType::bf16};
  s.Ms = {1, 19};
  s.Hs = {3, 128, 4097};
  s.eps = {1e-5, 1e-6};
  s.dists = {Dist::normal, Dist::large};
  s.layouts = {Layout::contiguous, Layout::strided};
  s.seed = 42;
  return s;
}

TEST(HarnessCase, ExpandCountIsProductAndEveryCombinationOnce) {
  const Sweep s = small_sweep();
  const std::vector<Case> cases = expand(s);
  EXPECT_EQ(cases.size(), 3u * 2 * 1 * 2 * 3 * 2 * 2 * 2);
  std::set<std::tuple<std::string, int, int, std::int64_t, std::int64_t, int, double, int>> seen;
  for (const Case& c : cases) {
    EXPECT_EQ(c.seed, 42u);
    EXPECT_EQ(c.op, Op::fwd);
    EXPECT_EQ(c.wdtype, c.dtype);  // "same"
    seen.insert({c.kernel, static_cast<int>(c.dtype), static_cast<int>(c.wdtype), c.M, c.H,
                 static_cast<int>(c.layout), c.eps, static_cast<int>(c.dist)});
  }
  EXPECT_EQ(seen.size(), cases.size()) << "duplicate cases";
}

TEST(HarnessCase, ExpandCollapsesSameAndFp32WeightForFp32X) {
  Sweep s = small_sweep();
  s.dtypes = {DType::f32, DType::bf16};
  s.wdtypes = {WDtypeChoice{}, WDtypeChoice{DType::f32}};
  const std::vector<Case> cases = expand(s);
  const std::size_t per_combo = 3u * 2 * 3 * 2 * 2 * 2;  // kernels, M, H, layouts, dists, eps
  // fp32 x: one weight dtype; bf16 x: bf16 and fp32 weights.
  EXPECT_EQ(cases.size(), 3 * per_combo);
  std::map<std::pair<int, int>, std::size_t> per_pair;
  for (const Case& c : cases) ++per_pair[{static_cast<int>(c.dtype), static_cast<int>(c.wdtype)}];
  EXPECT_EQ(per_pair.size(), 3u);
  EXPECT_EQ((per_pair[{static_cast<int>(DType::f32), static_cast<int>(DType::f32)}]), per_combo);
  EXPECT_EQ((per_pair[{static_cast<int>(DType::bf16), static_cast<int>(DType::bf16)}]), per_combo);
  EXPECT_EQ((per_pair[{static_cast<int>(DType::bf16), static_cast<int>(DType::f32)}]), per_combo);
}

TEST(HarnessCase, SameDataKey) {
  Case a;
  a.kernel = "naive";
  a.dtype = DType::bf16;
  a.wdtype = DType::bf16;
  a.M = 19;
  a.H = 4097;
  a.seed = 7;
  Case b = a;
  b.kernel = "auto";
  b.eps = 1e-6;
  EXPECT_TRUE(a.same_data(b));
  for (int field = 0; field < 9; ++field) {
    Case c = a;
    switch (field) {
      case 7:
        c.op = Op::bwd;  // other ops read other inputs
        break;
      case 8:
        c.rdtype = DType::f32;
        break;
      case 0:
        c.dtype = DType::f16;
        break;
      case 1:
        c.wdtype = DType::f32;
        break;
      case 2:
        c.M = 20;
        break;
      case 3:
        c.H = 4096;
        break;
      case 4:
        c.layout = Layout::misaligned;
        break;
      case 5:
        c.dist = Dist::outlier;
        break;
      case 6:
        c.seed = 8;
        break;
    }
    EXPECT_FALSE(a.same_data(c)) << "field " << field;
  }
}

TEST(HarnessCase, ExpandOrdersDataThenEpsThenKernel) {
  Sweep s = small_sweep();
  s.wdtypes = {WDtypeChoice{}, WDtypeChoice{DType::f32}};
  const std::vector<Case> cases = expand(s);
  ASSERT_FALSE(cases.empty());
  // Cases sharing data form one contiguous run each.
  std::vector<std::size_t> run_starts{0};
  for (std::size_t i = 1; i < cases.size(); ++i)
    if (!cases[i].same_data(cases[i - 1])) run_starts.push_back(i);
  for (std::size_t a = 0; a < run_starts.size(); ++a)
    for (std::size_t b = a + 1; b < run_starts.size(); ++b)
      EXPECT_FALSE(cases[run_starts[a]].same_data(cases[run_starts[b]]))
          << "data of case " << run_starts[a] << " reappears at case " << run_starts[b];
  // Each run: eps outer, kernels innermost in the sweep's order.
  const std::size_t nk = s.kernels.size(), ne = s.eps.size();
  for (std::size_t r = 0; r < run_starts.size(); ++r) {
    const std::size_t begin = run_starts[r];
    const std::size_t end = r + 1 < run_starts.size() ? run_starts[r + 1] : cases.size();
    ASSERT_EQ(end - begin, nk * ne) << "run " << r;
    for (std::size_t i = begin; i < end; ++i) {
      EXPECT_EQ(cases[i].kernel, s.kernels[(i - begin) % nk]) << "case " << i;
      EXPECT_DOUBLE_EQ(cases[i].eps, s.eps[(i - begin) / nk]) << "case " << i;
    }
  }
}

TEST(HarnessCase, DefaultKernels) {
  const std::vector<std::string> k = default_kernels();
  for (const char* name : {"auto", "naive", "warp-row", "row-vector", "chunked"})
    EXPECT_NE(std::find(k.begin(), k.end(), name), k.end()) << name;
  for (const std::string& name : k) EXPECT_NE(name.rfind("mutant-", 0), 0u) << name;
  EXPECT_EQ(std::set<std::string>(k.begin(), k.end()).size(), k.size());
}

TEST(HarnessCase, DefaultBenchSweep) {
  const Sweep s = default_bench_sweep();
  EXPECT_EQ(s.Hs, (I64s{128, 1024, 2048, 4096, 4097, 8192, 16384}));
  EXPECT_EQ(std::set<std::int64_t>(s.Ms.begin(), s.Ms.end()), (std::set<std::int64_t>{1, 16384}));
  EXPECT_EQ(std::set<DType>(s.dtypes.begin(), s.dtypes.end()),
            (std::set<DType>{DType::f32, DType::f16, DType::bf16}));
  EXPECT_EQ(std::set<double>(s.eps.begin(), s.eps.end()), (std::set<double>{1e-5, 1e-6}));
  EXPECT_EQ(s.dists, std::vector<Dist>{Dist::normal});
  EXPECT_EQ(s.layouts, std::vector<Layout>{Layout::contiguous});
  EXPECT_EQ(s.kernels, default_kernels());
  EXPECT_EQ(s.ops, (std::vector<Op>{Op::fwd, Op::bwd, Op::add, Op::add_bwd}));
  ASSERT_EQ(s.wdtypes.size(), 1u);
  EXPECT_FALSE(s.wdtypes[0].fixed.has_value());
  ASSERT_EQ(s.rdtypes.size(), 1u);
  EXPECT_FALSE(s.rdtypes[0].fixed.has_value());
  // Each op with the kernels that implement it (warp-row: forward only; a vendor kernel its
  // own list).
  std::size_t pairs = 0, listed = 0;
  for (Op op : s.ops)
    for (const std::string& k : s.kernels) pairs += find_kernel(k)->has_op(op) ? 1 : 0;
  for (const std::string& k : s.kernels) listed += find_kernel(k)->ops.size();
  EXPECT_EQ(pairs, listed);
  EXPECT_EQ(find_kernel("warp-row")->ops, std::vector<Op>{Op::fwd});
  EXPECT_EQ(expand(s).size(), pairs * 7 * 2 * 3 * 2);
}

TEST(HarnessCase, ValidationSweep) {
  const Sweep s = validation_sweep({"naive", "mutant-tail-store"});
  EXPECT_EQ(s.kernels, (std::vector<std::string>{"naive", "mutant-tail-store"}));
  EXPECT_EQ(std::set<Dist>(s.dists.begin(), s.dists.end()),
            std::set<Dist>(ref::all_dists().begin(), ref::all_dists().end()));
  EXPECT_EQ(std::set<Layout>(s.layouts.begin(), s.layouts.end()),
            std::set<Layout>(all_layouts().begin(), all_layouts().end()));
  for (std::int64_t H : {1, 3, 127, 4097, 65536})
    EXPECT_NE(std::find(s.Hs.begin(), s.Hs.end(), H), s.Hs.end()) << "H=" << H;
  EXPECT_EQ(std::set<DType>(s.dtypes.begin(), s.dtypes.end()),
            (std::set<DType>{DType::f32, DType::f16, DType::bf16}));
  // Both weight dtypes: same as x and fp32.
  bool same = false, fp32 = false;
  for (const WDtypeChoice& w : s.wdtypes) {
    same = same || !w.fixed;
    fp32 = fp32 || (w.fixed && *w.fixed == DType::f32);
  }
  EXPECT_TRUE(same);
  EXPECT_TRUE(fp32);
  // Every op, and both residual dtypes (x's and fp32: the residual-in-storage-dtype mutant
  // only shows with an fp32 residual stream under 16-bit x).
  EXPECT_EQ(s.ops, (std::vector<Op>{Op::fwd, Op::bwd, Op::add, Op::add_bwd}));
  bool r_same = false, r_fp32 = false;
  for (const RDtypeChoice& r : s.rdtypes) {
    r_same = r_same || !r.fixed;
    r_fp32 = r_fp32 || (r.fixed && *r.fixed == DType::f32);
  }
  EXPECT_TRUE(r_same);
  EXPECT_TRUE(r_fp32);
  for (std::int64_t M : s.Ms) EXPECT_GE(M, 2) << "M must hold a zero row (row 1) and a last row";
}

// The many-rows sweeps: M a prime past one wave of every persistent grid on an H200 (132
// SMs, 2048 threads an SM): rows of H <= 127 past 4 lanes a row (67584 rows in flight),
// longer rows past 32 blocks an SM (4224); every op; both element sizes; contiguous and
// skewed rows; and in validation_sweeps, after the base, convention and fp8 sweeps.
bool is_prime(std::int64_t n) {
  if (n < 2) return false;
  for (std::int64_t d = 2; d * d <= n; ++d)
    if (n % d == 0) return false;
  return true;
}

TEST(HarnessCase, ManyRowsSweepsRunPastOneWaveOfEveryPersistentGrid) {
  const std::vector<Sweep> rows = validation_rows_sweeps({"naive"});
  ASSERT_EQ(rows.size(), 2u);
  const std::int64_t sms = 132, threads_per_sm = 2048, blocks_per_sm = 32;
  std::set<std::int64_t> Hs;
  for (const Sweep& s : rows) {
    EXPECT_EQ(s.ops, (std::vector<Op>{Op::fwd, Op::bwd, Op::add, Op::add_bwd}));
    EXPECT_EQ(std::set<DType>(s.dtypes.begin(), s.dtypes.end()), (std::set<DType>{DType::f32, DType::bf16}));
    EXPECT_EQ(std::set<Layout>(s.layouts.begin(), s.layouts.end()),
              (std::set<Layout>{Layout::contiguous, Layout::skewed}));
    for (const std::int64_t M : s.Ms) {
      EXPECT_TRUE(is_prime(M)) << M;
      for (const std::int64_t H : s.Hs) {
        Hs.insert(H);
        const std::int64_t wave = H <= 127 ? sms * threads_per_sm / 4 : sms * blocks_per_sm;
        EXPECT_GT(M, wave) << "H=" << H;
        EXPECT_LE(M * H, std::int64_t{50} << 20) << "H=" << H << ": a case's tensors stay near 40M elements";
      }
    }
  }
  EXPECT_EQ(Hs, (std::set<std::int64_t>{1, 127, 1000, 2049}));
  const std::vector<Sweep> all = validation_sweeps({"naive"});
  ASSERT_EQ(all.size(), 5u);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(all[3 + i].Ms, rows[i].Ms);
    EXPECT_EQ(all[3 + i].Hs, rows[i].Hs);
  }
  EXPECT_EQ(all[0].Ms, (std::vector<std::int64_t>{19}));
  const Sweep f8 = validation_fp8_sweep({"naive"});
  EXPECT_EQ(all[2].ydtypes.size(), f8.ydtypes.size());
  EXPECT_EQ(all[2].y_scales, (std::vector<double>{1.0, 300.0}));
}

// The wide sweeps: every op, one case each per dtype and H, whose tensors' last row starts at
// element 2^31 (past a signed 32-bit index) and byte 2^32 (past a 32-bit byte offset) of each
// tensor, and not much past (the row before the last starts inside 2^31 elements), contiguous,
// w and the residual stream in x's dtype: bf16 and fp32 rows of whole 16-byte vectors (H=4096),
// bf16 odd rows (H=4097).
TEST(HarnessCase, WideSweepsSpanPast32BitIndicesAndOffsets) {
  std::map<std::pair<DType, std::int64_t>, std::set<Op>> ops;  // (dtype, H) -> ops
  for (const Sweep& s : wide_sweeps({"naive"}))
    for (const Case& c : expand(s)) {
      const std::pair<DType, std::int64_t> key{c.dtype, c.H};
      EXPECT_TRUE(ops[key].insert(c.op).second) << "two cases of one op";
      EXPECT_EQ(c.wdtype, c.dtype);
      EXPECT_EQ(c.rdtype, c.dtype);
      EXPECT_EQ(c.layout, Layout::contiguous);
      const std::int64_t last_row_start = (c.M - 1) * c.H;
      EXPECT_GE(last_row_start, std::int64_t{1} << 31);
      EXPECT_GE(last_row_start * static_cast<std::int64_t>(dtype_size(c.dtype)), std::int64_t{1} << 32);
      EXPECT_LT((c.M - 2) * c.H, std::int64_t{1} << 31);
    }
  const std::set<Op> every{Op::fwd, Op::bwd, Op::add, Op::add_bwd};
  EXPECT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[std::make_pair(DType::bf16, std::int64_t{4096})], every);
  EXPECT_EQ(ops[std::make_pair(DType::f32, std::int64_t{4096})], every);
  EXPECT_EQ(ops[std::make_pair(DType::bf16, std::int64_t{4097})], every);
}

// The device hash of an allocation (hash_guarded, by which the runner sees a kernel write
// into an input) sums one term per element: the same sum in any order, as the device's
// threads add them; one changed bit, or two unequal elements swapped, change it.
std::uint64_t hash_of(const std::vector<std::uint16_t>& v, bool reversed) {
  std::uint64_t h = 0;
  for (std::size_t k = 0; k < v.size(); ++k) {
    const std::size_t i = reversed ? v.size() - 1 - k : k;
    h += hash_term(i, v[i]);
  }
  return h;
}

TEST(HarnessHash, TermsSumTheSameInAnyOrderAndSeeAChangeOrASwap) {
  std::vector<std::uint16_t> v(4099);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint16_t>((i * 2654435761u) >> 13);
  const std::uint64_t h = hash_of(v, false);
  EXPECT_EQ(hash_of(v, true), h);
  for (std::size_t i : {std::size_t{0}, std::size_t{1234}, v.size() - 1}) {
    std::vector<std::uint16_t> w = v;
    w[i] ^= 1;
    EXPECT_NE(hash_of(w, false), h) << i;
  }
  std::vector<std::uint16_t> swapped = v;
  ASSERT_NE(v[5], v[4000]);
  std::swap(swapped[5], swapped[4000]);
  EXPECT_NE(hash_of(swapped, false), h);
  // All poison (0xFFFF) and all zeros: distinct.
  EXPECT_NE(hash_of(std::vector<std::uint16_t>(64, 0xFFFF), false), hash_of(std::vector<std::uint16_t>(64, 0), false));
}

TEST(HarnessCase, ExpandPairsKernelsWithTheirOpsAndResidualDtypes) {
  Sweep s = small_sweep();
  s.ops = {Op::fwd, Op::bwd, Op::add};
  s.kernels = {"warp-row", "chunked"};
  s.dtypes = {DType::bf16, DType::f32};
  s.rdtypes = {RDtypeChoice{}, RDtypeChoice{DType::f32}};
  std::map<std::tuple<int, std::string, int, int>, int> n;  // (op, kernel, x, r)
  for (const Case& c : expand(s)) {
    ++n[{static_cast<int>(c.op), c.kernel, static_cast<int>(c.dtype), static_cast<int>(c.rdtype)}];
    if (!has_residual(c.op)) {
      EXPECT_EQ(c.rdtype, c.dtype);
    }
  }
  const int per = 2 * 3 * 2 * 2 * 2;  // M, H, layouts, dists, eps
  const int bf = static_cast<int>(DType::bf16), f32 = static_cast<int>(DType::f32);
  const int fwd = static_cast<int>(Op::fwd), bwd = static_cast<int>(Op::bwd), add = static_cast<int>(Op::add);
  EXPECT_EQ((n[{fwd, "warp-row", bf, bf}]), per);
  EXPECT_EQ(n.count({bwd, "warp-row", bf, bf}), 0u) << "warp-row has no backward";
  EXPECT_EQ((n[{bwd, "chunked", bf, bf}]), per);
  EXPECT_EQ(n.count({bwd, "chunked", bf, f32}), 0u) << "bwd has no residual dtype";
  EXPECT_EQ((n[{add, "chunked", bf, bf}]), per);
  EXPECT_EQ((n[{add, "chunked", bf, f32}]), per);
  EXPECT_EQ((n[{add, "chunked", f32, f32}]), per) << "fp32 x: same and fp32 residual collapse";
  EXPECT_EQ(n.size(), 9u);  // bf16: the 5 above; fp32: fwd x2, bwd, add
}

// ---------------------------------------------------------------------------------------
// harness/timing.h (host-only parts)

TEST(HarnessTiming, SummarizeOddCount) {
  const SampleStats s = summarize({3.0, 1.0, 2.0});
  EXPECT_EQ(s.samples, 3);
  EXPECT_DOUBLE_EQ(s.median_us, 2.0);
  EXPECT_DOUBLE_EQ(s.min_us, 1.0);
  EXPECT_DOUBLE_EQ(s.max_us, 3.0);
  EXPECT_NEAR(s.noise_pct, 50.0, 1e-9);  // sample stdev 1, mean 2
}

TEST(HarnessTiming, SummarizeEvenCount) {
  const SampleStats s = summarize({4.0, 1.0, 3.0, 2.0});
  EXPECT_EQ(s.samples, 4);
  EXPECT_DOUBLE_EQ(s.median_us, 2.5);
  EXPECT_DOUBLE_EQ(s.min_us, 1.0);
  EXPECT_DOUBLE_EQ(s.max_us, 4.0);
  // Sample (n - 1) variance: 5/3; not the population one (5/4, which gives 44.72%).
  EXPECT_NEAR(s.noise_pct, 100.0 * std::sqrt(5.0 / 3.0) / 2.5, 1e-9);
}

TEST(HarnessTiming, SummarizeDegenerate) {
  const SampleStats one = summarize({7.0});
  EXPECT_EQ(one.samples, 1);
  EXPECT_DOUBLE_EQ(one.median_us, 7.0);
  EXPECT_DOUBLE_EQ(one.noise_pct, 0.0);
  const SampleStats flat = summarize({5.0, 5.0, 5.0, 5.0});
  EXPECT_DOUBLE_EQ(flat.median_us, 5.0);
  EXPECT_DOUBLE_EQ(flat.noise_pct, 0.0);
  EXPECT_EQ(summarize({}).samples, 0);
}

// n samples around 100: half 100 - d, half 100 + d (noise ~1.05 * d % for n = 10).
std::vector<double> samples_around_100(int n, double d) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(i % 2 ? 100.0 + d : 100.0 - d);
  return v;
}

TEST(HarnessTiming, ShouldStopTakesMinSamplesFirst) {
  TimingOptions o;
  o.min_samples = 10;
  const std::vector<double> quiet(9, 100.0);
  EXPECT_FALSE(should_stop(quiet, 0.0, o));
  EXPECT_FALSE(should_stop(quiet, 1e6, o)) << "min_samples are always taken, whatever the budget";
  EXPECT_FALSE(should_stop({}, 0.0, o));
}

TEST(HarnessTiming, ShouldStopOnceQuiet) {
  TimingOptions o;
  o.min_samples = 10;
  o.max_noise_pct = 0.5;
  o.max_time_s = 10;
  EXPECT_TRUE(should_stop(std::vector<double>(10, 100.0), 0.0, o));
  const auto quiet = samples_around_100(10, 0.4);
  ASSERT_LT(summarize(quiet).noise_pct, 0.5);
  EXPECT_TRUE(should_stop(quiet, 0.0, o));
  const auto noisy = samples_around_100(10, 0.6);
  ASSERT_GT(summarize(noisy).noise_pct, 0.5);
  EXPECT_FALSE(should_stop(noisy, 0.0, o));
}

TEST(HarnessTiming, ShouldStopWhenBudgetSpent) {
  TimingOptions o;
  o.min_samples = 10;
  o.max_time_s = 0.25;
  const auto noisy = samples_around_100(10, 20.0);
  EXPECT_FALSE(should_stop(noisy, 0.2, o));
  EXPECT_TRUE(should_stop(noisy, 0.25, o));
  EXPECT_TRUE(should_stop(noisy, 5.0, o));
}

TEST(HarnessTiming, ShouldStopAtMaxSamples) {
  TimingOptions o;
  o.min_samples = 10;
  o.max_samples = 20;
  o.max_time_s = 1e9;
  EXPECT_FALSE(should_stop(samples_around_100(19, 20.0), 0.0, o));
  EXPECT_TRUE(should_stop(samples_around_100(20, 20.0), 0.0, o));
}

// ---------------------------------------------------------------------------------------
// harness/ops.h: bytes from the op descriptions

TEST(HarnessBytes, ForwardBytes) {
  const std::int64_t M = 16384, H = 4096;
  EXPECT_EQ(op_bytes(Op::fwd, M, H, DType::bf16, DType::bf16, DType::bf16), 2 * M * H * 2 + H * 2 + 4 * M);
  EXPECT_EQ(op_bytes(Op::fwd, M, H, DType::bf16, DType::f32, DType::bf16), 2 * M * H * 2 + H * 4 + 4 * M);
  EXPECT_EQ(op_bytes(Op::fwd, M, H, DType::f32, DType::f32, DType::f32), 2 * M * H * 4 + H * 4 + 4 * M);
  EXPECT_EQ(op_bytes(Op::fwd, 1, 4097, DType::f16, DType::f16, DType::f16), 2 * 4097 * 2 + 4097 * 2 + 4);
  EXPECT_EQ(op_bytes(Op::fwd, 1, 1, DType::f32, DType::f32, DType::f32), 16);
}

// ---------------------------------------------------------------------------------------
// harness/wait.h: waiting for a kernel by polling, with a timeout and a signal's grace

// A query that reports "not ready" `busy` times, then `last`.
std::function<cudaError_t()> ready_after(int busy, cudaError_t last = cudaSuccess) {
  auto n = std::make_shared<int>(0);
  return [n, busy, last] { return (*n)++ < busy ? cudaErrorNotReady : last; };
}

TEST(HarnessWait, EndsWhenTheWorkIsDone) {
  const WaitResult r = poll_until_done(ready_after(5000), 10, nullptr, 1);
  EXPECT_EQ(r.end, WaitEnd::done);
  EXPECT_LT(r.waited_s, 5);
}

TEST(HarnessWait, ReturnsTheDevicesError) {
  const WaitResult r = poll_until_done(ready_after(3, cudaErrorLaunchFailure), 10, nullptr, 1);
  EXPECT_EQ(r.end, WaitEnd::error);
  EXPECT_EQ(r.error, cudaErrorLaunchFailure);
}

TEST(HarnessWait, GivesUpAfterTheTimeout) {
  const WaitResult r = poll_until_done([] { return cudaErrorNotReady; }, 0.2, nullptr, 1);
  EXPECT_EQ(r.end, WaitEnd::timed_out);
  EXPECT_GE(r.waited_s, 0.2);
  EXPECT_LT(r.waited_s, 2.0);
}

// A signal does not cut a running kernel short: the wait goes on for the grace, and ends
// early only if the kernel is still running then.
TEST(HarnessWait, AfterASignalWaitsTheGraceThenGivesUp) {
  bool signalled = false;
  const auto abandon = [&] { return signalled; };
  auto polls = std::make_shared<int>(0);
  const auto query = [&, polls] {
    if (++*polls == 100) signalled = true;
    return cudaErrorNotReady;
  };
  const WaitResult r = poll_until_done(query, 0, abandon, 0.3);
  EXPECT_EQ(r.end, WaitEnd::abandoned);
  EXPECT_GE(r.waited_s, 0.3);
  EXPECT_LT(r.waited_s, 3.0);
  // A kernel that finishes within the grace ends the wait as done.
  signalled = true;
  EXPECT_EQ(poll_until_done(ready_after(50), 0, abandon, 10).end, WaitEnd::done);
}

// Timeout 0 is no limit: work done after 0.3 s ends a wait without one as done, and one of
// 0.1 s as timed out.
TEST(HarnessWait, ZeroTimeoutIsNoLimit) {
  const auto done_after = [](double s) {
    const auto t0 = std::chrono::steady_clock::now();
    return [t0, s] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() >= s ? cudaSuccess
                                                                                                : cudaErrorNotReady;
    };
  };
  EXPECT_EQ(poll_until_done(done_after(0.3), 0, nullptr, 1).end, WaitEnd::done);
  EXPECT_EQ(poll_until_done(done_after(0.3), 0.1, nullptr, 1).end, WaitEnd::timed_out);
}

// ---------------------------------------------------------------------------------------
// kernels/registry.h (host-only parts)

// The classic bugs the issues ask for, one mutant each: forward, residual add, backward.
const std::vector<std::string>& kMutants = test::kMutantNames;

std::int64_t fwd_max_H(const KernelInfo& k, DType d) {
  Problem p;
  p.x = p.w = p.r = d;
  return k.max_H(p);
}

FwdArgs args(DType x, DType w, std::int64_t H, std::int64_t M = 4) {
  FwdArgs a;
  a.M = M;
  a.H = H;
  a.x_stride = H;
  a.y_stride = H;
  a.xdtype = x;
  a.wdtype = w;
  return a;
}

TEST(HarnessRegistry, NamesAndDescriptionsAreUnique) {
  const auto& reg = kernel_registry();
  ASSERT_FALSE(reg.empty());
  std::set<std::string> names, descs;
  for (const KernelInfo& k : reg) {
    SCOPED_TRACE(k.name);
    EXPECT_FALSE(k.name.empty());
    EXPECT_FALSE(k.description.empty());
    EXPECT_TRUE(names.insert(k.name).second) << "duplicate name";
    EXPECT_TRUE(descs.insert(k.description).second) << "duplicate description";
    EXPECT_FALSE(k.ops.empty());
    EXPECT_FALSE(k.dtypes.empty());
    EXPECT_TRUE(static_cast<bool>(k.max_H));
    EXPECT_TRUE(static_cast<bool>(k.prepare));
    EXPECT_FALSE(k.provider.empty());
    EXPECT_FALSE(k.alignment.empty());
  }
  for (const char* n : {"naive", "warp-row", "row-vector", "chunked", "auto"})
    EXPECT_EQ(names.count(n), 1u) << n;
  for (const std::string& n : kMutants) EXPECT_EQ(names.count(n), 1u) << n;
}

TEST(HarnessRegistry, MutantsAreNamedAndComeLast) {
  const auto& reg = kernel_registry();
  bool seen_mutant = false;
  for (const KernelInfo& k : reg) {
    SCOPED_TRACE(k.name);
    EXPECT_EQ(k.mutant, k.name.rfind("mutant-", 0) == 0) << "mutant flag and name prefix disagree";
    if (k.mutant) {
      seen_mutant = true;
    } else {
      EXPECT_FALSE(seen_mutant) << "a real kernel after a mutant";
    }
  }
  EXPECT_TRUE(seen_mutant);
}

TEST(HarnessRegistry, FindKernel) {
  const KernelInfo* a = find_kernel("auto");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->name, "auto");
  EXPECT_FALSE(a->mutant);
  ASSERT_NE(find_kernel("mutant-tail-load"), nullptr);
  EXPECT_TRUE(find_kernel("mutant-tail-load")->mutant);
  EXPECT_EQ(find_kernel("nope"), nullptr);
  EXPECT_EQ(find_kernel(""), nullptr);
}

// The CSV reader takes only the providers it lists (reports/columns.h kProviders): a provider
// added to the registry without it would write rows that no report, merge or gate could read.
TEST(HarnessRegistry, EveryProviderIsOneTheReaderTakes) {
  std::set<std::string> seen;
  for (const KernelInfo& k : kernel_registry()) {
    seen.insert(k.provider);
    EXPECT_NE(std::find(std::begin(kProviders), std::end(kProviders), k.provider), std::end(kProviders))
        << k.name << ": provider " << k.provider;
  }
  EXPECT_TRUE(seen.count("builtin") && seen.count("cublas")) << "the registry lists built-ins and cuBLAS";
}

TEST(HarnessRegistry, CheckCommonAcceptsSupportedCases) {
  for (const KernelInfo& k : kernel_registry()) {
    SCOPED_TRACE(k.name);
    if (!k.has_op(Op::fwd)) continue;
    for (const DtypeCombo& c : k.dtypes)
      for (std::int64_t H : {1, 3, 127, 128, 1000}) {
        const auto r = check_common(k, args(c.x, c.w, H));
        EXPECT_FALSE(r.has_value()) << dtype_name(c.x) << "/" << dtype_name(c.w) << " H=" << H << ": "
                                    << r.value_or("");
      }
    FwdArgs strided = args(DType::bf16, DType::bf16, 4097);
    strided.x_stride = strided.y_stride = layout_stride(Layout::strided, 4097);
    if (4097 <= fwd_max_H(k, DType::bf16)) {
      EXPECT_FALSE(check_common(k, strided).has_value());
    }
  }
}

TEST(HarnessRegistry, CheckCommonRejectsMissingDtypeCombo) {
  for (const KernelInfo& k : kernel_registry()) {
    SCOPED_TRACE(k.name);
    if (!k.has_op(Op::fwd)) continue;
    const auto r = check_common(k, args(DType::f32, DType::f16, 128));
    ASSERT_TRUE(r.has_value());
    EXPECT_NE(r->find("fp32"), std::string::npos) << *r;
    EXPECT_NE(r->find("fp16"), std::string::npos) << *r;
    EXPECT_TRUE(check_common(k, args(DType::bf16, DType::f16, 128)).has_value());
  }
}

TEST(HarnessRegistry, CheckCommonRejectsStrideBelowH) {
  for (const KernelInfo& k : kernel_registry()) {
    SCOPED_TRACE(k.name);
    if (!k.has_op(Op::fwd)) continue;
    FwdArgs a = args(DType::bf16, DType::bf16, 128);
    a.x_stride = 127;
    const auto rx = check_common(k, a);
    ASSERT_TRUE(rx.has_value());
    EXPECT_NE(rx->find("stride"), std::string::npos) << *rx;
    a.x_stride = 128;
    a.y_stride = 64;
    EXPECT_TRUE(check_common(k, a).has_value());
    EXPECT_TRUE(check_common(k, args(DType::bf16, DType::bf16, 0)).has_value()) << "H=0 accepted";
  }
}

// A built-in kernel's forward plan names the kernel that runs; auto's names its pick, which
// it holds as a kernel (no lookup by name at launch).
TEST(HarnessRegistry, PlansNameWhatRuns) {
  Problem p;
  p.op = Op::fwd;
  p.M = 16;
  p.x = p.w = p.r = DType::bf16;
  for (const char* name : {"naive", "warp-row", "row-vector", "chunked"}) {
    p.H = p.stride = 512;
    EXPECT_EQ(find_kernel(name)->prepare(p, "")->picked(), name);
  }
  {
    Problem b = p;
    b.op = Op::bwd;
    b.H = b.stride = 512;
    EXPECT_EQ(find_kernel("staged")->prepare(b, "")->picked(), "staged");
    EXPECT_EQ(find_kernel("staged")->ops, (std::vector<Op>{Op::bwd, Op::add_bwd}));
  }
  for (std::int64_t H : {128, 1024, 4096, 4097, 40000}) {
    p.H = p.stride = H;
    EXPECT_EQ(find_kernel("auto")->prepare(p, "")->picked(), kern::strategy_name(kern::auto_pick_fwd(p))) << H;
  }
  p.H = p.stride = 128;
  EXPECT_EQ(find_kernel("auto")->prepare(p, "")->picked(), "chunked");  // M=16: the small-M table
  p.M = 16384;
  EXPECT_EQ(find_kernel("auto")->prepare(p, "")->picked(), "warp-row");  // the M=16384 crossovers
  p.H = p.stride = 40000;
  EXPECT_EQ(find_kernel("auto")->prepare(p, "")->picked(), "chunked");
  // A plan launches only its own op family's arguments.
  p.H = p.stride = 128;
  EXPECT_EQ(find_kernel("naive")->prepare(p, "")->launch(AddArgs{}, nullptr), cudaErrorInvalidValue);
}

TEST(HarnessRegistry, RegisterRefusesDuplicatesAndVariantsNeedAKernelThatHasThem) {
  KernelInfo k = *find_kernel("naive");
  EXPECT_THROW(register_kernel(k), std::invalid_argument);
  k.name = "has@at";
  EXPECT_THROW(register_kernel(k), std::invalid_argument);
  k.name = "";
  EXPECT_THROW(register_kernel(k), std::invalid_argument);
  std::string variant = "x";
  EXPECT_EQ(find_kernel("naive@eng0", &variant), nullptr);
  EXPECT_EQ(find_kernel("naive", &variant)->name, "naive");
  EXPECT_EQ(variant, "");
  KernelInfo v = *find_kernel("naive");
  v.name = "test-variants";
  v.description = "a test kernel with variants";
  v.variants = [](const Problem&) { return std::vector<std::string>{"a", "b"}; };
  register_kernel(v);
  ASSERT_NE(find_kernel("test-variants@b", &variant), nullptr);
  EXPECT_EQ(variant, "b");
  EXPECT_EQ(find_kernel("test-variants")->variant_name("a"), "test-variants@a");
  Case c;
  c.op = Op::fwd;
  c.kernel = "test-variants";
  c.M = 2;
  c.H = 8;
  c.dtype = c.wdtype = c.rdtype = DType::f32;
  const std::vector<Case> runs = Runner::variants_of(c);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].kernel, "test-variants@a");
  EXPECT_EQ(runs[1].kernel, "test-variants@b");
  // A lister given (run()'s keeps the lists per problem) names the variants in their place.
  const std::vector<Case> listed = Runner::variants_of(c, [](const KernelInfo& k, const Problem& p) {
    return std::vector<std::string>{k.name + "-" + std::to_string(p.H)};
  });
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].kernel, "test-variants@test-variants-8");
  c.kernel = "naive";
  EXPECT_EQ(Runner::variants_of(c).size(), 1u);
}

// The byte count is derived from the op's tensors; it equals the README's formula per op.
TEST(HarnessOps, BytesFromTheDescriptionMatchTheFormula) {
  for (DType x : {DType::f32, DType::f16, DType::bf16})
    for (DType w : {x, DType::f32})
      for (DType r : {x, DType::f32})
        for (std::int64_t M : {1, 19, 16384})
          for (std::int64_t H : {1, 127, 4097}) {
            const std::int64_t sx = static_cast<std::int64_t>(dtype_size(x)), sw = static_cast<std::int64_t>(dtype_size(w)),
                               sr = static_cast<std::int64_t>(dtype_size(r));
            EXPECT_EQ(op_bytes(Op::fwd, M, H, x, w, r), 2 * M * H * sx + H * sw + 4 * M);
            EXPECT_EQ(op_bytes(Op::add, M, H, x, w, r), 2 * M * H * (sx + sr) + H * sw + 4 * M);
            EXPECT_EQ(op_bytes(Op::bwd, M, H, x, w, r), 3 * M * H * sx + 2 * H * sw + 4 * M);
            EXPECT_EQ(op_bytes(Op::add_bwd, M, H, x, w, r), M * H * (sx + 3 * sr) + 2 * H * sw + 4 * M);
          }
}

// Every op's description: a main output first, outputs and inputs named once, a reference,
// a binding and a tolerance; the backward's dw is the repeatable output.
TEST(HarnessOps, DescriptionsAreComplete) {
  for (Op op : {Op::fwd, Op::bwd, Op::add, Op::add_bwd}) {
    SCOPED_TRACE(std::string(op_name(op)));
    const OpDesc& d = op_desc(op);
    EXPECT_EQ(d.op, op);
    ASSERT_FALSE(d.outputs.empty());
    EXPECT_EQ(d.outputs[0].shape, Shape::matrix);
    EXPECT_TRUE(d.bind && d.reference && d.csv_tolerance);
    std::set<Tensor> seen;
    for (const InputDesc& i : d.inputs) EXPECT_TRUE(seen.insert(i.tensor).second) << tensor_name(i.tensor);
    for (const OutputDesc& o : d.outputs) {
      EXPECT_TRUE(seen.insert(o.tensor).second) << tensor_name(o.tensor);
      EXPECT_EQ(o.repeatable, o.tensor == Tensor::dw);
    }
    EXPECT_EQ(is_backward(op), seen.count(Tensor::dw) == 1);
    EXPECT_EQ(op == Op::add, seen.count(Tensor::s) == 1);
  }
  // Binding puts each tensor where the op family's kernels read it.
  Case c;
  c.op = Op::add_bwd;
  c.M = 3;
  c.H = 5;
  c.dtype = DType::bf16;
  c.wdtype = DType::f32;
  c.rdtype = DType::f32;
  c.eps = 1e-6;
  DevicePointers p{};
  for (std::size_t i = 0; i < kTensors; ++i) p[i] = reinterpret_cast<void*>(0x1000 * (i + 1));
  const LaunchArgs a = op_desc(c.op).bind(c, p, 64, reinterpret_cast<void*>(0x99000));
  const BwdArgs* b = std::get_if<BwdArgs>(&a);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->x, p[static_cast<std::size_t>(Tensor::x)]);
  EXPECT_EQ(b->ds_out, p[static_cast<std::size_t>(Tensor::ds_out)]);
  EXPECT_EQ(static_cast<const void*>(b->rrms), p[static_cast<std::size_t>(Tensor::saved_rrms)]);
  EXPECT_EQ(b->dw, p[static_cast<std::size_t>(Tensor::dw)]);
  EXPECT_EQ(b->xdtype, DType::f32);   // the residual stream
  EXPECT_EQ(b->dydtype, DType::bf16);
  EXPECT_EQ(b->workspace_bytes, 64u);
  EXPECT_EQ(b->x_stride, c.stride());
}

TEST(HarnessOps, ProblemAlignmentFollowsTheLayout) {
  Case c;
  c.dtype = c.wdtype = c.rdtype = DType::bf16;
  c.H = 4096;
  c.layout = Layout::contiguous;
  EXPECT_EQ(problem_of(c).base_align, 16);
  c.layout = Layout::misaligned;
  EXPECT_EQ(problem_of(c).base_align, 2);
  c.wdtype = DType::f32;
  c.dtype = c.rdtype = DType::f32;
  EXPECT_EQ(problem_of(c).base_align, 4);
}

// A plan is kept across data sets whose problems are equal (harness/runner.cpp keep_plans_for):
// what changes the inputs alone keeps it, and every field of the problem tells two apart.
TEST(HarnessOps, ProblemIsEqualAcrossWhatOnlyTheInputsChange) {
  Case c;
  c.op = Op::bwd;
  c.dtype = c.wdtype = c.rdtype = DType::bf16;
  c.M = 19;
  c.H = 4096;
  const Problem p = problem_of(c);
  Case d = c;
  d.dist = Dist::outlier;
  d.seed = 7;
  d.eps = 1e-3;
  d.kernel = "cudnn";
  EXPECT_TRUE(same_problem(p, problem_of(d)));
  // Through the case: a layout with the same stride but an offset base is another problem.
  d.layout = Layout::misaligned;
  EXPECT_FALSE(same_problem(p, problem_of(d)));
  const std::vector<std::pair<const char*, std::function<void(Problem&)>>> changes = {
      {"op", [](Problem& q) { q.op = Op::add_bwd; }},
      {"M", [](Problem& q) { ++q.M; }},
      {"H", [](Problem& q) { ++q.H; }},
      {"stride", [](Problem& q) { q.stride += 16; }},
      {"x", [](Problem& q) { q.x = DType::f16; }},
      {"w", [](Problem& q) { q.w = DType::f32; }},
      {"r", [](Problem& q) { q.r = DType::f32; }},
      {"base_align", [](Problem& q) { q.base_align = 2; }},
      {"conv", [](Problem& q) { q.conv = Convention::gemma; }},
      {"y", [](Problem& q) { q.y = DType::e4m3; }},
  };
  for (const auto& [field, change] : changes) {
    Problem q = p;
    change(q);
    EXPECT_FALSE(same_problem(p, q)) << field;
    EXPECT_FALSE(same_problem(q, p)) << field;
  }
}

TEST(HarnessRegistry, RowVectorRejectsHAboveItsMax) {
  const KernelInfo* rv = find_kernel("row-vector");
  ASSERT_NE(rv, nullptr);
  for (DType d : {DType::f32, DType::f16, DType::bf16}) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    const std::int64_t max_h = fwd_max_H(*rv, d);
    ASSERT_GT(max_h, 4096);
    ASSERT_LT(max_h, std::int64_t{1} << 40);
    EXPECT_FALSE(check_common(*rv, args(d, d, max_h)).has_value());
    const auto r = check_common(*rv, args(d, d, max_h + 1));
    ASSERT_TRUE(r.has_value());
    EXPECT_NE(r->find("H=" + std::to_string(max_h + 1)), std::string::npos) << *r;
  }
  // Strategies without a ceiling take any H.
  for (const char* name : {"naive", "chunked", "auto"}) {
    const KernelInfo* k = find_kernel(name);
    ASSERT_NE(k, nullptr);
    EXPECT_FALSE(check_common(*k, args(DType::bf16, DType::bf16, 1 << 20)).has_value()) << name;
  }
}

TEST(HarnessRegistry, WarpRowHoldsAtLeast1024InBf16) {
  const KernelInfo* wr = find_kernel("warp-row");
  ASSERT_NE(wr, nullptr);
  EXPECT_GE(fwd_max_H(*wr, DType::bf16), 1024);
  EXPECT_GE(fwd_max_H(*wr, DType::f16), 1024);
  EXPECT_LE(fwd_max_H(*wr, DType::bf16), fwd_max_H(*find_kernel("row-vector"), DType::bf16));
  const auto r = check_common(*wr, args(DType::bf16, DType::bf16, fwd_max_H(*wr, DType::bf16) + 1));
  ASSERT_TRUE(r.has_value());
  EXPECT_NE(r->find("H="), std::string::npos) << *r;
}

TEST(HarnessRegistry, CheckCommonRejectsOpsAKernelLacks) {
  const KernelInfo* wr = find_kernel("warp-row");
  ASSERT_NE(wr, nullptr);
  Problem p;
  p.op = Op::bwd;
  p.M = 4;
  p.H = p.stride = 128;
  p.x = p.w = p.r = DType::bf16;
  const auto r = check_common(*wr, p);
  ASSERT_TRUE(r.has_value());
  EXPECT_NE(r->find("does not implement bwd"), std::string::npos) << *r;
  // Every op is implemented by naive, chunked, row-vector and auto.
  for (const char* name : {"naive", "chunked", "row-vector", "auto"})
    for (Op op : {Op::fwd, Op::bwd, Op::add, Op::add_bwd}) {
      p.op = op;
      EXPECT_FALSE(check_common(*find_kernel(name), p).has_value()) << name << " " << op_name(op);
    }
}

TEST(HarnessRegistry, ResidualDtypeIsXsOrFp32) {
  const KernelInfo* k = find_kernel("chunked");
  ASSERT_NE(k, nullptr);
  Problem p;
  p.op = Op::add;
  p.M = 4;
  p.H = p.stride = 128;
  p.x = p.w = DType::bf16;
  for (DType r : {DType::bf16, DType::f32}) {
    p.r = r;
    EXPECT_FALSE(check_common(*k, p).has_value()) << dtype_name(r);
  }
  p.r = DType::f16;
  const auto why = check_common(*k, p);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("residual dtype fp16"), std::string::npos) << *why;
  // Ops without a residual stream ignore it.
  p.op = Op::bwd;
  EXPECT_FALSE(check_common(*k, p).has_value());
}

TEST(HarnessBytes, EveryOpCountsEachTensorOnce) {
  const std::int64_t M = 16384, H = 4096;
  // bwd: read x, dy, w, rrms; write dx, dw.
  EXPECT_EQ(op_bytes(Op::bwd, M, H, DType::bf16, DType::bf16, DType::bf16), 3 * M * H * 2 + 2 * H * 2 + 4 * M);
  EXPECT_EQ(op_bytes(Op::bwd, M, H, DType::bf16, DType::f32, DType::bf16), 3 * M * H * 2 + 2 * H * 4 + 4 * M);
  // add: read x, r, w; write y, s, rrms.
  EXPECT_EQ(op_bytes(Op::add, M, H, DType::bf16, DType::bf16, DType::bf16), 4 * M * H * 2 + H * 2 + 4 * M);
  EXPECT_EQ(op_bytes(Op::add, M, H, DType::bf16, DType::bf16, DType::f32), 2 * M * H * (2 + 4) + H * 2 + 4 * M);
  // add-bwd: read s, dy, ds_out, w, rrms; write dx (residual dtype), dw.
  EXPECT_EQ(op_bytes(Op::add_bwd, M, H, DType::bf16, DType::bf16, DType::f32), M * H * (2 + 3 * 4) + 2 * H * 2 + 4 * M);
  // fwd has no residual stream: its dtype does not count.
  EXPECT_EQ(op_bytes(Op::fwd, M, H, DType::f16, DType::f16, DType::f32),
            op_bytes(Op::fwd, M, H, DType::f16, DType::f16, DType::f16));
}

TEST(HarnessValidate, BackwardTolerancesScaleWithTheirErrorScale) {
  // dx: u * (8 + 2 sqrt(H)) times dx_scale; rtol the output dtype's.
  const ScaledTolerance dx = dx_tolerance(DType::bf16, 4096);
  EXPECT_DOUBLE_EQ(dx.scale_coef, 0x1p-24 * (8 + 2 * 64));
  EXPECT_DOUBLE_EQ(dx.rtol, 1e-2);
  // dw: u * (4 + 4 sqrt(M)) times dw_abs.
  const ScaledTolerance dw = dw_tolerance(DType::f32, 16384);
  EXPECT_DOUBLE_EQ(dw.scale_coef, 0x1p-24 * (4 + 4 * 128));
  EXPECT_DOUBLE_EQ(dw.rtol, 1e-5);
  // A column that cancels (ref ~ 0) passes within the scale term, fails past it.
  const double dw_abs = 100.0;
  EXPECT_TRUE(within_tolerance(1e-3, 0.0, dw.at(dw_abs)));   // bound 3.07e-3
  EXPECT_FALSE(within_tolerance(4e-3, 0.0, dw.at(dw_abs)));
  // fp16 keeps half its smallest subnormal as atol: a correct final rounding of ~0.
  EXPECT_DOUBLE_EQ(dx_tolerance(DType::f16, 1).atol, 0x1p-25);
  // ErrorStats with per-element tolerances counts a mismatch only past that element's bound.
  ErrorStats st({0, 1e-2});
  st.add(0, 0, 1.0 + 1e-9, 1.0, 1e-7, dx.at(0.0));
  st.add(0, 1, 0.5, 0.0, 1e-7, dx.at(1.0));
  EXPECT_EQ(st.mismatches, 1);
  EXPECT_EQ(st.worst_col, 1);
}

}  // namespace
}  // namespace rb

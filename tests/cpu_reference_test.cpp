// The reference layer judged on its own: host dtype rounding against known bit patterns,
// ulp_at against the actual spacing of representable values, the fp64 reference against
// closed forms, and the input generators for determinism and the properties each
// distribution promises.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "reference/generate.h"
#include "reference/host_dtype.h"
#include "reference/rmsnorm_ref.h"
#include "tests/ref_dtypes.h"

namespace rb::ref {
namespace {

using namespace testing_support;

constexpr std::uint64_t kSeed = 20261129;

template <class T>
T from_bits(std::uint32_t bits) {
  if constexpr (sizeof(T) == 2)
    return Eigen::numext::bit_cast<T>(static_cast<std::uint16_t>(bits));
  else
    return Eigen::numext::bit_cast<T>(bits);
}

template <class T>
std::vector<std::uint32_t> bits_of_all(const std::vector<T>& v) {
  std::vector<std::uint32_t> out(v.size());
  std::transform(v.begin(), v.end(), out.begin(), [](T e) { return bits_of(e); });
  return out;
}

template <class T>
std::vector<double> upcast(const std::vector<T>& v) {
  std::vector<double> out(v.size());
  std::transform(v.begin(), v.end(), out.begin(), [](T e) { return to_double(e); });
  return out;
}

template <class T>
std::vector<T> row_of(Dist d, std::int64_t row, std::int64_t H, std::uint64_t seed = kSeed) {
  std::vector<T> x(static_cast<std::size_t>(H));
  generate_row(d, seed, row, H, x.data());
  return x;
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double e : v) s += e;
  return s / static_cast<double>(v.size());
}

double mean_square_of(const std::vector<double>& v) {
  double s = 0;
  for (double e : v) s += e * e;
  return s / static_cast<double>(v.size());
}

// ---------------------------------------------------------------------------------------
// Host dtype conversions: round to nearest even, checked against hand-derived bit patterns.

struct RoundingCase {
  const char* what;
  float in;
  std::uint32_t expected_bits;
};

float float_from_bits(std::uint32_t bits) { return from_bits<float>(bits); }

TEST(HostDtype, Bfloat16RoundsToNearestEven) {
  const RoundingCase cases[] = {
      {"one", 1.0f, 0x3F80},
      {"minus one", -1.0f, 0xBF80},
      {"tie 0x3F80_8000 rounds down to even", float_from_bits(0x3F808000), 0x3F80},  // 1.00390625
      {"tie 0x3F81_8000 rounds up to even", float_from_bits(0x3F818000), 0x3F82},    // 1.01171875
      {"negative tie rounds to even", float_from_bits(0xBF818000), 0xBF82},
      {"just above a tie rounds up", float_from_bits(0x3F808001), 0x3F81},
      {"just below a tie rounds down", float_from_bits(0x3F807FFF), 0x3F80},
      {"FLT_MAX rounds to inf", float_from_bits(0x7F7FFFFF), 0x7F80},
      {"subnormal tie rounds to even", float_from_bits(0x00018000), 0x0002},
      {"smallest float subnormal rounds to zero", float_from_bits(0x00000001), 0x0000},
  };
  for (const auto& c : cases) EXPECT_EQ(bits_of(from_float<bfloat16>(c.in)), c.expected_bits) << c.what;
}

TEST(HostDtype, HalfRoundsToNearestEven) {
  const RoundingCase cases[] = {
      {"one", 1.0f, 0x3C00},
      {"largest finite", 65504.0f, 0x7BFF},
      {"below the overflow tie", 65519.0f, 0x7BFF},
      {"overflow tie rounds to inf (even)", 65520.0f, 0x7C00},
      {"tie 1 + 2^-11 rounds down to even", 0x1.002p0f, 0x3C00},
      {"tie 1 + 3 * 2^-11 rounds up to even", 0x1.006p0f, 0x3C02},
      {"negative tie rounds to even", -0x1.006p0f, 0xBC02},
      {"smallest normal", 0x1p-14f, 0x0400},
      {"smallest subnormal", 0x1p-24f, 0x0001},
      {"1e-7 is subnormal, 1.68 steps rounds to 2", 1e-7f, 0x0002},
      {"subnormal tie 2^-25 rounds to zero", 0x1p-25f, 0x0000},
      {"subnormal tie 3 * 2^-25 rounds to even", 0x1.8p-24f, 0x0002},
  };
  for (const auto& c : cases) EXPECT_EQ(bits_of(from_float<half>(c.in)), c.expected_bits) << c.what;
}

// Every finite half / bfloat16 value survives T -> double -> float -> T bit for bit, so the
// reference's upcast loses nothing.
TEST(HostDtype, UpcastIsExactForEveryBitPattern) {
  auto check_all = [](auto tag) {
    using T = typename decltype(tag)::type;
    int failures = 0;
    for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
      const T v = from_bits<T>(bits);
      const double d = to_double(v);
      if (std::isnan(d)) continue;
      const std::uint32_t back = bits_of(from_float<T>(static_cast<float>(d)));
      if (back != bits && ++failures <= 5)
        ADD_FAILURE() << dtype_name<T>() << " bits 0x" << std::hex << bits << " came back as 0x" << back;
    }
  };
  check_all(Tag<half>{});
  check_all(Tag<bfloat16>{});
}

// ---------------------------------------------------------------------------------------
// ulp_at

TEST(UlpAt, KnownValues) {
  EXPECT_EQ(ulp_at<float>(1.0), 0x1p-23);
  EXPECT_EQ(ulp_at<half>(1.0), 0x1p-10);
  EXPECT_EQ(ulp_at<bfloat16>(1.0), 0x1p-7);
  EXPECT_EQ(ulp_at<float>(0.75), 0x1p-24);
  EXPECT_EQ(ulp_at<half>(1.999), 0x1p-10);
  EXPECT_EQ(ulp_at<half>(2.0), 0x1p-9);
  EXPECT_EQ(ulp_at<half>(-2.0), 0x1p-9);
  EXPECT_EQ(ulp_at<half>(65504.0), 32.0);
  EXPECT_EQ(ulp_at<bfloat16>(-3.0), 0x1p-6);
}

TEST(UlpAt, SubnormalSpacingAndZero) {
  EXPECT_EQ(ulp_at<half>(0.0), 0x1p-24);
  EXPECT_EQ(ulp_at<half>(1e-7), 0x1p-24);
  EXPECT_EQ(ulp_at<half>(0x1p-14), 0x1p-24);  // smallest normal: same spacing as subnormals
  EXPECT_EQ(ulp_at<float>(0.0), 0x1p-149);
  EXPECT_EQ(ulp_at<float>(1e-40), 0x1p-149);
  EXPECT_EQ(ulp_at<bfloat16>(0.0), 0x1p-133);
}

// ulp_at(v) equals the distance from v to the next representable value above it, for every
// positive finite half and bfloat16 and a spread of floats.
TEST(UlpAt, EqualsDistanceToNextRepresentable) {
  auto check_16bit = [](auto tag, std::uint32_t max_finite_bits) {
    using T = typename decltype(tag)::type;
    int failures = 0;
    for (std::uint32_t bits = 0; bits < max_finite_bits; ++bits) {
      const double v = to_double(from_bits<T>(bits));
      const double gap = to_double(from_bits<T>(bits + 1)) - v;
      if (ulp_at<T>(v) != gap && ++failures <= 5)
        ADD_FAILURE() << dtype_name<T>() << " at " << v << ": ulp_at " << ulp_at<T>(v) << " != gap " << gap;
    }
  };
  check_16bit(Tag<half>{}, 0x7BFF);
  check_16bit(Tag<bfloat16>{}, 0x7F7F);

  int failures = 0;
  for (std::uint32_t bits = 0; bits < 0x7F7FFFFF; bits += 0x1001) {
    const double v = from_bits<float>(bits);
    const double gap = static_cast<double>(from_bits<float>(bits + 1)) - v;
    if (ulp_at<float>(v) != gap && ++failures <= 5)
      ADD_FAILURE() << "fp32 at " << v << ": ulp_at " << ulp_at<float>(v) << " != gap " << gap;
  }
}

// ---------------------------------------------------------------------------------------
// The fp64 reference against closed forms, for every (x, w) dtype pair.

struct ClosedFormCase {
  const char* name;
  std::int64_t H;
  double eps;
};

void PrintTo(const ClosedFormCase& c, std::ostream* os) { *os << c.name; }

class ReferenceClosedForm : public ::testing::TestWithParam<ClosedFormCase> {};

// Tight enough that eps outside the sqrt, a wrong denominator or a dropped weight shows
// (those move the result by 1e-7 relative or more), loose enough for summation order.
constexpr double kRelTol = 1e-12;

void expect_close(double actual, double expected, const std::string& what) {
  EXPECT_NEAR(actual, expected, kRelTol * std::fabs(expected)) << what;
}

// y against expected(column) over the whole row: the first few mismatches with their
// column, then the count. An expected 0 must be exactly 0.
template <class Expected>
void expect_row_close(const std::vector<double>& y, Expected expected) {
  std::int64_t mismatches = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double e = expected(static_cast<std::int64_t>(i));
    if (!(std::fabs(y[i] - e) <= kRelTol * std::fabs(e)) && ++mismatches <= 3)
      ADD_FAILURE() << std::setprecision(17) << "y at column " << i << ": got " << y[i] << ", expected " << e;
  }
  EXPECT_EQ(mismatches, 0) << "columns of y outside the tolerance, of " << y.size();
}

TEST_P(ReferenceClosedForm, ConstantRow) {
  const auto [name, H, eps] = GetParam();
  for_each_dtype_pair([&, H = H, eps = eps](auto x_tag, auto w_tag) {
    using T = typename decltype(x_tag)::type;
    using W = typename decltype(w_tag)::type;
    std::vector<W> w(static_cast<std::size_t>(H));
    generate_weight(kSeed, H, w.data());
    for (float requested : {1.5f, -0.1f, 300.0f}) {
      const T c = from_float<T>(requested);
      const double cd = to_double(c);  // the stored value, e.g. fp16(0.1) != 0.1
      SCOPED_TRACE(dtype_name<T>() + " x, " + dtype_name<W>() + " w, c = " + std::to_string(cd));
      const std::vector<T> x(static_cast<std::size_t>(H), c);
      std::vector<double> y(static_cast<std::size_t>(H));
      const double rrms = rmsnorm_fwd_row(x.data(), w.data(), H, eps, y.data());
      const double expected_rrms = 1.0 / std::sqrt(cd * cd + eps);
      expect_close(rrms, expected_rrms, "rrms");
      expect_row_close(y, [&](std::int64_t i) { return cd * expected_rrms * to_double(w[i]); });
    }
  });
}

TEST_P(ReferenceClosedForm, OneHotRow) {
  const auto [name, H, eps] = GetParam();
  for_each_dtype_pair([&, H = H, eps = eps](auto x_tag, auto w_tag) {
    using T = typename decltype(x_tag)::type;
    using W = typename decltype(w_tag)::type;
    std::vector<W> w(static_cast<std::size_t>(H));
    generate_weight(kSeed, H, w.data());
    const std::int64_t k = H / 2;
    for (float v : {4.0f, -1000.0f}) {
      SCOPED_TRACE(dtype_name<T>() + " x, " + dtype_name<W>() + " w, v = " + std::to_string(v));
      std::vector<T> x(static_cast<std::size_t>(H), from_float<T>(0.0f));
      x[k] = from_float<T>(v);
      std::vector<double> y(static_cast<std::size_t>(H));
      const double rrms = rmsnorm_fwd_row(x.data(), w.data(), H, eps, y.data());
      const double expected_rrms = 1.0 / std::sqrt(double{v} * v / static_cast<double>(H) + eps);
      expect_close(rrms, expected_rrms, "rrms");
      expect_row_close(y, [&](std::int64_t i) { return i == k ? v * expected_rrms * to_double(w[i]) : 0.0; });
    }
  });
}

TEST_P(ReferenceClosedForm, ZeroRow) {
  const auto [name, H, eps] = GetParam();
  for_each_dtype_pair([&, H = H, eps = eps](auto x_tag, auto w_tag) {
    using T = typename decltype(x_tag)::type;
    using W = typename decltype(w_tag)::type;
    SCOPED_TRACE(dtype_name<T>() + " x, " + dtype_name<W>() + " w");
    std::vector<W> w(static_cast<std::size_t>(H));
    generate_weight(kSeed, H, w.data());
    const std::vector<T> x(static_cast<std::size_t>(H), from_float<T>(0.0f));
    std::vector<double> y(static_cast<std::size_t>(H), 7.0);
    const double rrms = rmsnorm_fwd_row(x.data(), w.data(), H, eps, y.data());
    EXPECT_DOUBLE_EQ(rrms, 1.0 / std::sqrt(eps));
    expect_row_close(y, [](std::int64_t) { return 0.0; });
  });
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ReferenceClosedForm,
    ::testing::Values(ClosedFormCase{"H1_eps1em5", 1, 1e-5}, ClosedFormCase{"H3_eps1em6", 3, 1e-6},
                      ClosedFormCase{"H127_eps1em5", 127, 1e-5}, ClosedFormCase{"H500_eps1", 500, 1.0},
                      ClosedFormCase{"H4097_eps1em6", 4097, 1e-6}),
    [](const ::testing::TestParamInfo<ClosedFormCase>& info) { return info.param.name; });

// On generated rows, the Eigen reference agrees with a plain scalar loop written from the
// formula; catches a wrong map, cast or weight indexing that the symmetric closed forms miss.
TEST(Reference, MatchesScalarLoopOnGeneratedRows) {
  constexpr std::int64_t H = 111;
  constexpr double eps = 1e-6;
  for_each_dtype_pair([&](auto x_tag, auto w_tag) {
    using T = typename decltype(x_tag)::type;
    using W = typename decltype(w_tag)::type;
    std::vector<W> w(H);
    generate_weight(kSeed, H, w.data());
    for (Dist d : all_dists()) {
      for (std::int64_t row = 0; row < 3; ++row) {
        SCOPED_TRACE(dtype_name<T>() + " x, " + dtype_name<W>() + " w, " + std::string(dist_name(d)) +
                     " row " + std::to_string(row));
        const auto x = row_of<T>(d, row, H);
        double sum_squares = 0;
        for (T e : x) sum_squares += to_double(e) * to_double(e);
        const double expected_rrms = 1.0 / std::sqrt(sum_squares / H + eps);
        std::vector<double> y(H);
        const double rrms = rmsnorm_fwd_row(x.data(), w.data(), H, eps, y.data());
        expect_close(rrms, expected_rrms, "rrms");
        expect_row_close(y,
                         [&](std::int64_t i) { return to_double(x[i]) * expected_rrms * to_double(w[i]); });
      }
    }
  });
}

TEST(Reference, RejectsEmptyRow) {
  const float x = 1.0f, w = 1.0f;
  double y = 0;
  EXPECT_THROW(rmsnorm_fwd_row(&x, &w, 0, 1e-5, &y), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------
// Generators: names, determinism, layout.

TEST(Generate, DistNamesRoundTrip) {
  const std::vector<std::string> expected = {"normal", "large", "tiny", "offset", "outlier", "zero-row"};
  ASSERT_EQ(all_dists().size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const Dist d = all_dists()[i];
    EXPECT_EQ(dist_name(d), expected[i]);
    EXPECT_EQ(parse_dist(expected[i]), d) << expected[i];
  }
  EXPECT_EQ(parse_dist("bogus"), std::nullopt);
  EXPECT_EQ(parse_dist(""), std::nullopt);
  EXPECT_EQ(parse_dist("Normal"), std::nullopt);
}

TEST(Generate, ZeroRowRuleIsRowOneThenEveryFifth) {
  for (std::int64_t row = 0; row < 23; ++row) EXPECT_EQ(is_zero_row(row), row % 5 == 1) << "row " << row;
  EXPECT_FALSE(is_zero_row(0));
  EXPECT_TRUE(is_zero_row(1));
  EXPECT_TRUE(is_zero_row(6));
}

TEST(Generate, RejectsBadShapes) {
  std::vector<float> buf(64);
  EXPECT_THROW(generate_row(Dist::normal, kSeed, 0, 0, buf.data()), std::invalid_argument);
  EXPECT_THROW(generate_rows(Dist::normal, kSeed, 2, 8, 7, buf.data()), std::invalid_argument);
  EXPECT_THROW(generate_rows(Dist::normal, kSeed, -1, 8, 8, buf.data()), std::invalid_argument);
  EXPECT_THROW(generate_weight(kSeed, 0, buf.data()), std::invalid_argument);
}

struct DistCase {
  Dist dist;
};

void PrintTo(const DistCase& c, std::ostream* os) { *os << dist_name(c.dist); }

std::vector<DistCase> all_dist_cases() {
  std::vector<DistCase> cases;
  for (Dist d : all_dists()) cases.push_back({d});
  return cases;
}

class GenerateByDist : public ::testing::TestWithParam<DistCase> {};

TEST_P(GenerateByDist, SameRowTwiceIsIdentical) {
  const Dist d = GetParam().dist;
  for_each_dtype([&](auto tag) {
    using T = typename decltype(tag)::type;
    SCOPED_TRACE(dtype_name<T>());
    for (std::int64_t row : {0, 1, 7, 100000}) {
      EXPECT_EQ(bits_of_all(row_of<T>(d, row, 333)), bits_of_all(row_of<T>(d, row, 333))) << "row " << row;
    }
  });
}

TEST_P(GenerateByDist, RowsAndSeedsGiveDifferentValues) {
  const Dist d = GetParam().dist;
  for_each_dtype([&](auto tag) {
    using T = typename decltype(tag)::type;
    SCOPED_TRACE(dtype_name<T>());
    // Rows 0, 2 and 3 are not zero rows in any distribution.
    EXPECT_NE(bits_of_all(row_of<T>(d, 0, 64)), bits_of_all(row_of<T>(d, 2, 64)));
    EXPECT_NE(bits_of_all(row_of<T>(d, 2, 64)), bits_of_all(row_of<T>(d, 3, 64)));
    EXPECT_NE(bits_of_all(row_of<T>(d, 0, 64, kSeed)), bits_of_all(row_of<T>(d, 0, 64, kSeed + 1)));
  });
}

// A row's values at a column do not depend on H, so a shorter row is a prefix of a longer
// one (except for outlier, whose columns are drawn from [0, H)).
TEST(Generate, ShorterRowIsPrefixOfLongerRow) {
  for (Dist d : {Dist::normal, Dist::large, Dist::tiny, Dist::offset, Dist::zero_row}) {
    const auto short_row = bits_of_all(row_of<float>(d, 4, 50));
    auto long_row = bits_of_all(row_of<float>(d, 4, 51));
    long_row.pop_back();
    EXPECT_EQ(short_row, long_row) << dist_name(d);
  }
}

// Pinned output of the documented algorithm (splitmix64 keyed by seed, stream and row,
// Box-Muller, double -> float), cross-checked against an independent Python transcription.
// Changing the generator on purpose changes these; doing it by accident must not.
TEST(Generate, GoldenValuesAreStable) {
  const std::vector<std::uint32_t> row0 = {0x3F059447, 0x404238C8, 0xBE8FA8EA, 0xBFD43141};
  const std::vector<std::uint32_t> row7 = {0xBECB9A29, 0xBE54A784, 0xBF519D8E, 0x3E0608A9};
  const std::vector<std::uint32_t> weight = {0x3F84C563, 0x3FA174F5, 0x3E17543E, 0x3FD69E2B};
  EXPECT_EQ(bits_of_all(row_of<float>(Dist::normal, 0, 4)), row0);
  EXPECT_EQ(bits_of_all(row_of<float>(Dist::normal, 7, 4)), row7);
  std::vector<float> w(4);
  generate_weight(kSeed, 4, w.data());
  EXPECT_EQ(bits_of_all(w), weight);
}

// A half or bfloat16 row is the float row rounded to nearest even: every storage dtype sees
// the same underlying values.
TEST(Generate, NarrowRowsAreTheFloatRowRounded) {
  for (Dist d : all_dists()) {
    for (std::int64_t row : {0, 1, 2}) {
      SCOPED_TRACE(std::string(dist_name(d)) + " row " + std::to_string(row));
      const auto x = row_of<float>(d, row, 257);
      std::vector<half> as_half(x.size());
      std::vector<bfloat16> as_bf16(x.size());
      std::transform(x.begin(), x.end(), as_half.begin(), [](float v) { return from_float<half>(v); });
      std::transform(x.begin(), x.end(), as_bf16.begin(), [](float v) { return from_float<bfloat16>(v); });
      EXPECT_EQ(bits_of_all(row_of<half>(d, row, 257)), bits_of_all(as_half));
      EXPECT_EQ(bits_of_all(row_of<bfloat16>(d, row, 257)), bits_of_all(as_bf16));
    }
  }
}

struct Shape {
  std::int64_t M, H, stride;
};

TEST_P(GenerateByDist, GenerateRowsEqualsGenerateRowAndLeavesPaddingUntouched) {
  const Dist d = GetParam().dist;
  // The last shape is large enough to be split over several threads.
  for (const Shape s : {Shape{1, 1, 1}, Shape{19, 3, 5}, Shape{99, 127, 127}, Shape{989, 500, 509}}) {
    for_each_dtype([&](auto tag) {
      using T = typename decltype(tag)::type;
      SCOPED_TRACE(dtype_name<T>() + " M=" + std::to_string(s.M) + " H=" + std::to_string(s.H) +
                   " stride=" + std::to_string(s.stride));
      const auto poison = from_bits<T>(sizeof(T) == 2 ? 0xFFFFu : 0xFFFFFFFFu);
      std::vector<T> buf(static_cast<std::size_t>(s.M * s.stride), poison);
      generate_rows(d, kSeed, s.M, s.H, s.stride, buf.data());
      for (std::int64_t r = 0; r < s.M; ++r) {
        const auto expected = bits_of_all(row_of<T>(d, r, s.H));
        const std::vector<T> got(buf.begin() + r * s.stride, buf.begin() + r * s.stride + s.H);
        ASSERT_EQ(bits_of_all(got), expected) << "row " << r;
        for (std::int64_t c = s.H; c < s.stride; ++c)
          ASSERT_EQ(bits_of(buf[r * s.stride + c]), bits_of(poison))
              << "padding written at row " << r << " col " << c;
      }
    });
  }
}

INSTANTIATE_TEST_SUITE_P(AllDists, GenerateByDist, ::testing::ValuesIn(all_dist_cases()),
                         [](const ::testing::TestParamInfo<DistCase>& info) {
                           std::string name(dist_name(info.param.dist));
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// ---------------------------------------------------------------------------------------
// Generators: what each distribution promises.

constexpr std::int64_t kStatH = 4096;

TEST(GenerateDist, NormalIsStandardNormal) {
  for (std::int64_t row = 0; row < 4; ++row) {
    const auto x = upcast(row_of<float>(Dist::normal, row, kStatH));
    EXPECT_NEAR(mean_of(x), 0.0, 0.1) << "row " << row;
    EXPECT_NEAR(mean_square_of(x), 1.0, 0.1) << "row " << row;
    EXPECT_LT(*std::max_element(x.begin(), x.end()), 9.0) << "row " << row;
  }
}

TEST(GenerateDist, LargeIsInTheHundredsAndOverflowsHalfSquares) {
  for_each_dtype([&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto x = upcast(row_of<T>(Dist::large, 3, kStatH));
    double mean_abs = 0;
    for (double e : x) mean_abs += std::fabs(e) / kStatH;
    EXPECT_GT(mean_abs, 100.0) << dtype_name<T>();
    EXPECT_LT(mean_abs, 1000.0) << dtype_name<T>();
  });
  const auto x = upcast(row_of<half>(Dist::large, 3, kStatH));
  const auto overflowing = std::count_if(x.begin(), x.end(), [](double e) { return e * e > 65504.0; });
  EXPECT_GT(overflowing, kStatH / 10) << "fp16 squares above 65504";
  EXPECT_TRUE(std::all_of(x.begin(), x.end(), [](double e) { return std::isfinite(e); }));
}

TEST(GenerateDist, TinyHasMeanSquareNearEps) {
  for_each_dtype([&](auto tag) {
    using T = typename decltype(tag)::type;
    for (std::int64_t row = 0; row < 4; ++row) {
      const double ms = mean_square_of(upcast(row_of<T>(Dist::tiny, row, kStatH)));
      EXPECT_GT(ms, 1e-7) << dtype_name<T>() << " row " << row;
      EXPECT_LT(ms, 1e-5) << dtype_name<T>() << " row " << row;
    }
  });
}

TEST(GenerateDist, OffsetHasMeanNearThree) {
  for_each_dtype([&](auto tag) {
    using T = typename decltype(tag)::type;
    for (std::int64_t row = 0; row < 4; ++row)
      EXPECT_NEAR(mean_of(upcast(row_of<T>(Dist::offset, row, kStatH))), 3.0, 0.1)
          << dtype_name<T>() << " row " << row;
  });
}

// min(3, H) entries per row are huge (1000 <= |x| < 60000, finite in fp16), at columns that
// change with the row; elsewhere the row is the normal row.
TEST(GenerateDist, OutlierHasAFewHugeEntriesAtRowDependentColumns) {
  for (std::int64_t H : {std::int64_t{1}, std::int64_t{2}, std::int64_t{3}, std::int64_t{111}, kStatH}) {
    std::set<std::vector<std::int64_t>> column_sets;
    for (std::int64_t row = 0; row < 50; ++row) {
      SCOPED_TRACE("H=" + std::to_string(H) + " row " + std::to_string(row));
      const auto x = upcast(row_of<half>(Dist::outlier, row, H));
      const auto normal = upcast(row_of<half>(Dist::normal, row, H));
      std::vector<std::int64_t> huge_cols;
      for (std::int64_t c = 0; c < H; ++c) {
        if (std::fabs(x[c]) > 100.0) {
          huge_cols.push_back(c);
          EXPECT_GE(std::fabs(x[c]), 1000.0) << "col " << c;
          EXPECT_LT(std::fabs(x[c]), 60000.0) << "col " << c;
        } else {
          EXPECT_EQ(x[c], normal[c]) << "col " << c;
        }
      }
      EXPECT_EQ(static_cast<std::int64_t>(huge_cols.size()), std::min<std::int64_t>(3, H));
      column_sets.insert(huge_cols);
    }
    if (H > 3) {
      EXPECT_GT(column_sets.size(), 10u) << "outlier columns do not move with the row, H=" << H;
    }
  }
}

TEST(GenerateDist, ZeroRowIsZeroExactlyWhereIsZeroRowSays) {
  constexpr std::int64_t M = 23, H = 77;
  for_each_dtype([&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<T> buf(M * H);
    generate_rows(Dist::zero_row, kSeed, M, H, H, buf.data());
    for (std::int64_t r = 0; r < M; ++r) {
      SCOPED_TRACE(dtype_name<T>() + " row " + std::to_string(r));
      const std::vector<T> row(buf.begin() + r * H, buf.begin() + (r + 1) * H);
      const auto bits = bits_of_all(row);
      if (is_zero_row(r))
        EXPECT_TRUE(std::all_of(bits.begin(), bits.end(), [](std::uint32_t b) { return b == 0; }));
      else
        EXPECT_EQ(bits, bits_of_all(row_of<T>(Dist::normal, r, H)));
    }
  });
}

TEST(GenerateDist, WeightIsNearOneOnAverageButNotOnes) {
  for_each_dtype([&](auto tag) {
    using T = typename decltype(tag)::type;
    SCOPED_TRACE(dtype_name<T>());
    std::vector<T> w(kStatH);
    generate_weight(kSeed, kStatH, w.data());
    const auto wd = upcast(w);
    const double mean = mean_of(wd);
    EXPECT_NEAR(mean, 1.0, 0.05);
    const double stdev = std::sqrt(mean_square_of(wd) - mean * mean);
    EXPECT_NEAR(stdev, 0.5, 0.05);
    EXPECT_LT(std::count(wd.begin(), wd.end(), 1.0), kStatH / 10);

    std::vector<T> again(kStatH), other_seed(kStatH);
    generate_weight(kSeed, kStatH, again.data());
    generate_weight(kSeed + 1, kStatH, other_seed.data());
    EXPECT_EQ(bits_of_all(w), bits_of_all(again));
    EXPECT_NE(bits_of_all(w), bits_of_all(other_seed));
  });
}

// The weight draws from its own stream: it is not 1 + 0.5 * (row 0 of x).
TEST(GenerateDist, WeightStreamIsIndependentOfX) {
  std::vector<float> w(kStatH);
  generate_weight(kSeed, kStatH, w.data());
  const auto x0 = row_of<float>(Dist::normal, 0, kStatH);
  std::int64_t same = 0;
  for (std::int64_t c = 0; c < kStatH; ++c) same += (std::fabs(w[c] - (1.0f + 0.5f * x0[c])) < 1e-6f) ? 1 : 0;
  EXPECT_LT(same, kStatH / 100);
}

}  // namespace
}  // namespace rb::ref

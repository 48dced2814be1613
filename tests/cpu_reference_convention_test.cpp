// The reference's conventions and fp8 storage judged on their own, against oracles written
// here: every fp8 code decoded by the OCP formula and rounding checked by brute-force search
// over all codes; each convention's forward against plain double arithmetic with the
// roundings done in the test; the backward with a weight offset against a finite difference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <initializer_list>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "reference/generate.h"
#include "reference/host_dtype.h"
#include "reference/rmsnorm_ref.h"

namespace rb::ref {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::uint64_t kWeightSeed = 20261130;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---------------------------------------------------------------------------------------
// The oracle: a format described by its field widths, every code decoded by the OCP formula
// (value = (-1)^S * 2^(E - bias) * 1.M, or 2^(1 - bias) * 0.M for E = 0), and rounding as a
// search for the nearest code.

struct Format {
  const char* name;
  int exp_bits, mant_bits, bias;
  bool ieee_specials;  // E all ones is inf (M = 0) / NaN (e5m2, fp16, bf16); else only S.1111.111 is NaN
  bool saturates;      // beyond the largest finite value: +-max (fp8) or +-inf
};

constexpr Format kE4M3{"e4m3", 4, 3, 7, false, true};
constexpr Format kE5M2{"e5m2", 5, 2, 15, true, true};
constexpr Format kHalf{"fp16", 5, 10, 15, true, false};
constexpr Format kBf16{"bf16", 8, 7, 127, true, false};

double decode(const Format& f, std::uint32_t code) {
  const std::uint32_t exp_all_ones = (1u << f.exp_bits) - 1, mant_all_ones = (1u << f.mant_bits) - 1;
  const bool negative = (code >> (f.exp_bits + f.mant_bits)) & 1u;
  const std::uint32_t e = (code >> f.mant_bits) & exp_all_ones;
  const std::uint32_t m = code & mant_all_ones;
  double magnitude;
  if (f.ieee_specials && e == exp_all_ones)
    magnitude = m == 0 ? kInf : kNaN;
  else if (!f.ieee_specials && e == exp_all_ones && m == mant_all_ones)
    magnitude = kNaN;
  else if (e == 0)
    magnitude = std::pow(2.0, 1 - f.bias) * (static_cast<double>(m) / std::pow(2.0, f.mant_bits));
  else
    magnitude = std::pow(2.0, static_cast<int>(e) - f.bias) * (1.0 + static_cast<double>(m) / std::pow(2.0, f.mant_bits));
  return negative ? -magnitude : magnitude;
}

std::uint32_t sign_bit(const Format& f) { return 1u << (f.exp_bits + f.mant_bits); }

// The positive codes a rounding may land on, ascending in value: every finite one, then for
// a non-saturating format the first inf code, which stands at the next power of two for the
// comparison (rounding with an unbounded exponent, then overflowing: the IEEE rule).
struct Candidate {
  double value;
  std::uint32_t code;
};

std::vector<Candidate> candidates(const Format& f) {
  std::vector<Candidate> out;
  for (std::uint32_t code = 0; code < sign_bit(f); ++code) {
    const double v = decode(f, code);
    if (std::isfinite(v)) {
      out.push_back({v, code});
    } else if (!f.saturates && std::isinf(v)) {
      out.push_back({2 * std::pow(2.0, (1 << (f.exp_bits - 1)) - 1), code});  // 2^(emax + 1)
      break;
    }
  }
  return out;
}

// The code v rounds to: the nearest candidate, a tie going to the even code (the even
// mantissa: neighbouring codes differ by one), the sign of v kept (zeros included). fp8 (at
// most 128 candidates): every candidate is compared. The 16-bit types: the two candidates
// around |v|, found by bisection over the ascending values, then the same comparison.
std::uint32_t nearest_code(const Format& f, const std::vector<Candidate>& cands, double v) {
  const double a = std::fabs(v);
  auto first = cands.begin(), last = cands.end();
  if (a >= cands.back().value) {  // nothing above: the top (whose distance may round like others')
    first = cands.end() - 1;
  } else if (cands.size() > 256) {
    const auto above = std::lower_bound(cands.begin(), cands.end(), a,
                                        [](const Candidate& c, double x) { return c.value < x; });
    first = above == cands.begin() ? above : above - 1;
    last = above == cands.end() ? above : above + 1;
  }
  std::uint32_t best = first->code;
  double best_distance = std::fabs(a - first->value);
  for (auto c = first; c != last; ++c) {
    const double d = std::fabs(a - c->value);
    if (d < best_distance || (d == best_distance && c->code % 2 == 0)) {
      best = c->code;
      best_distance = d;
    }
  }
  return std::signbit(v) ? best | sign_bit(f) : best;
}

// Probes: every code value, every midpoint between neighbours and values just either side,
// a quarter of the way, half the smallest subnormal and below, values beyond the range,
// and log-uniform random magnitudes over the whole range; each with both signs.
std::vector<double> probes(const std::vector<Candidate>& cands) {
  std::vector<double> out;
  for (std::size_t i = 0; i < cands.size(); ++i) {
    const double v = cands[i].value;
    out.push_back(v);
    if (i + 1 < cands.size()) {
      const double next = cands[i + 1].value, mid = (v + next) / 2;
      out.insert(out.end(), {mid, std::nextafter(mid, 0.0), std::nextafter(mid, kInf), v + (next - v) / 4,
                             next - (next - v) / 4});
    }
  }
  const double top = cands.back().value;
  out.insert(out.end(), {top * 1.01, top * 2, top * 1e6, 1e300, cands[1].value / 2,
                         std::nextafter(cands[1].value / 2, kInf), cands[1].value / 3, 1e-300});
  std::mt19937_64 rng(20261130);
  std::uniform_real_distribution<double> log2_magnitude(std::log2(cands[1].value) - 2, std::log2(top) + 2);
  for (int i = 0; i < 2000; ++i) out.push_back(std::exp2(log2_magnitude(rng)));
  const std::size_t positive = out.size();
  for (std::size_t i = 0; i < positive; ++i) out.push_back(-out[i]);
  return out;
}

bool same_value(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

template <class T>
T fp8_from_bits(std::uint32_t bits) {
  return T::from_bits(static_cast<std::uint8_t>(bits));
}

// ---------------------------------------------------------------------------------------
// fp8 storage

static_assert(std::is_trivially_copyable_v<fp8_e4m3> && std::is_trivially_copyable_v<fp8_e5m2>);
static_assert(sizeof(fp8_e4m3) == 1 && sizeof(fp8_e5m2) == 1);

template <class T>
void expect_every_code_decodes_as_the_formula(const Format& f) {
  int failures = 0;
  for (std::uint32_t code = 0; code < 256; ++code) {
    const T v = fp8_from_bits<T>(code);
    EXPECT_EQ(bits_of(v), code);
    const double expected = decode(f, code);
    if (!same_value(to_double(v), expected) && ++failures <= 5)
      ADD_FAILURE() << f.name << " code 0x" << std::hex << code << std::dec << " decodes as " << to_double(v)
                    << ", the formula gives " << expected;
    if (!same_value(static_cast<double>(static_cast<float>(v)), expected) && ++failures <= 5)
      ADD_FAILURE() << f.name << " code 0x" << std::hex << code << ": float conversion differs";
  }
}

TEST(Fp8, EveryCodeDecodesAsTheOcpFormula) {
  expect_every_code_decodes_as_the_formula<fp8_e4m3>(kE4M3);
  expect_every_code_decodes_as_the_formula<fp8_e5m2>(kE5M2);
}

// Landmarks worked out by hand from the bit layouts, so the formula above is checked too.
TEST(Fp8, KnownCodes) {
  struct Known {
    std::uint8_t code;
    double value;
  };
  for (const Known& k : {Known{0x38, 1.0}, Known{0x7E, 448.0}, Known{0xFE, -448.0}, Known{0x08, 0x1p-6},
                         Known{0x01, 0x1p-9}, Known{0x07, 7 * 0x1p-9}, Known{0x3C, 1.5}, Known{0x80, -0.0}}) {
    EXPECT_TRUE(same_value(to_double(fp8_e4m3::from_bits(k.code)), k.value)) << "e4m3 0x" << std::hex << +k.code;
    EXPECT_EQ(bits_of(fp8_e4m3(k.value)), k.code) << "e4m3 " << k.value;
  }
  EXPECT_TRUE(std::isnan(to_double(fp8_e4m3::from_bits(0x7F))));
  EXPECT_TRUE(std::isnan(to_double(fp8_e4m3::from_bits(0xFF))));
  EXPECT_EQ(to_double(fp8_e4m3::from_bits(0x78)), 256.0);  // S.1111.000: finite in e4m3, not inf
  for (const Known& k : {Known{0x3C, 1.0}, Known{0x7B, 57344.0}, Known{0xFB, -57344.0}, Known{0x04, 0x1p-14},
                         Known{0x01, 0x1p-16}, Known{0x03, 3 * 0x1p-16}, Known{0x3E, 1.5}}) {
    EXPECT_TRUE(same_value(to_double(fp8_e5m2::from_bits(k.code)), k.value)) << "e5m2 0x" << std::hex << +k.code;
    EXPECT_EQ(bits_of(fp8_e5m2(k.value)), k.code) << "e5m2 " << k.value;
  }
  EXPECT_EQ(to_double(fp8_e5m2::from_bits(0x7C)), kInf);
  EXPECT_EQ(to_double(fp8_e5m2::from_bits(0xFC)), -kInf);
  for (std::uint8_t nan_code : {0x7D, 0x7E, 0x7F, 0xFD})
    EXPECT_TRUE(std::isnan(to_double(fp8_e5m2::from_bits(nan_code)))) << std::hex << +nan_code;
}

// Every non-NaN finite code converts back to itself, from double and from float.
template <class T>
void expect_round_trips(const Format& f) {
  int failures = 0;
  for (std::uint32_t code = 0; code < 256; ++code) {
    const double v = decode(f, code);
    if (!std::isfinite(v)) continue;
    const std::uint32_t from_double = bits_of(T(v));
    const std::uint32_t from_single = bits_of(from_float<T>(static_cast<float>(v)));
    if ((from_double != code || from_single != code) && ++failures <= 5)
      ADD_FAILURE() << f.name << " code 0x" << std::hex << code << " came back as 0x" << from_double << " / 0x"
                    << from_single;
  }
}

TEST(Fp8, EveryFiniteCodeRoundTrips) {
  expect_round_trips<fp8_e4m3>(kE4M3);
  expect_round_trips<fp8_e5m2>(kE5M2);
}

// Conversion lands on the nearest code (ties to the even mantissa), saturating, for every
// probe; round_to<T> gives that code's value.
template <class T>
void expect_rounds_to_nearest_code(const Format& f) {
  const auto cands = candidates(f);
  int failures = 0;
  for (double v : probes(cands)) {
    const std::uint32_t expected = nearest_code(f, cands, v);
    const std::uint32_t got = bits_of(T(v));
    if (got != expected && ++failures <= 5)
      ADD_FAILURE() << std::setprecision(17) << f.name << "(" << v << ") = 0x" << std::hex << got
                    << ", nearest code 0x" << expected;
    if (!same_value(round_to<T>(v), decode(f, expected)) && ++failures <= 5)
      ADD_FAILURE() << std::setprecision(17) << "round_to<" << f.name << ">(" << v << ") = " << round_to<T>(v)
                    << ", expected " << decode(f, expected);
    const float single = static_cast<float>(v);
    if (static_cast<double>(single) == v && bits_of(from_float<T>(single)) != expected && ++failures <= 5)
      ADD_FAILURE() << std::setprecision(9) << "from_float<" << f.name << ">(" << single << ") differs";
  }
  EXPECT_EQ(failures, 0);
}

TEST(Fp8, RoundsToTheNearestCodeTiesToEvenSaturating) {
  expect_rounds_to_nearest_code<fp8_e4m3>(kE4M3);
  expect_rounds_to_nearest_code<fp8_e5m2>(kE5M2);
}

// The satfinite rule spelled out: beyond max and +-inf give +-max, NaN stays NaN, signed
// zeros and underflow keep their sign.
TEST(Fp8, SaturationNanAndSignedZero) {
  EXPECT_EQ(bits_of(fp8_e4m3(464.0)), 0x7Eu);   // the tie above 448 goes down (no code above)
  EXPECT_EQ(bits_of(fp8_e4m3(465.0)), 0x7Eu);   // beyond the tie: saturates, not NaN
  EXPECT_EQ(bits_of(fp8_e4m3(1e30)), 0x7Eu);
  EXPECT_EQ(bits_of(fp8_e4m3(-1e30)), 0xFEu);
  EXPECT_EQ(bits_of(fp8_e4m3(kInf)), 0x7Eu);
  EXPECT_EQ(bits_of(fp8_e4m3(-kInf)), 0xFEu);
  EXPECT_EQ(bits_of(fp8_e4m3(std::numeric_limits<float>::infinity())), 0x7Eu);
  EXPECT_EQ(bits_of(fp8_e5m2(61440.0)), 0x7Bu);  // the tie above 57344 would go to inf: saturates
  EXPECT_EQ(bits_of(fp8_e5m2(kInf)), 0x7Bu);
  EXPECT_EQ(bits_of(fp8_e5m2(-kInf)), 0xFBu);
  EXPECT_EQ(bits_of(fp8_e5m2(-1e300)), 0xFBu);
  EXPECT_TRUE(std::isnan(to_double(fp8_e4m3(kNaN))));
  EXPECT_TRUE(std::isnan(to_double(fp8_e4m3(-kNaN))));
  EXPECT_TRUE(std::isnan(to_double(fp8_e5m2(kNaN))));
  EXPECT_TRUE(std::isnan(to_double(from_float<fp8_e5m2>(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(bits_of(fp8_e4m3(0.0)), 0x00u);
  EXPECT_EQ(bits_of(fp8_e4m3(-0.0)), 0x80u);
  EXPECT_EQ(bits_of(fp8_e5m2(-0.0)), 0x80u);
  EXPECT_EQ(bits_of(fp8_e4m3(0x1p-10)), 0x00u);   // half the smallest subnormal: tie to 0
  EXPECT_EQ(bits_of(fp8_e4m3(-0x1p-10)), 0x80u);
  EXPECT_EQ(bits_of(fp8_e4m3(0x1.000001p-10)), 0x01u);
  EXPECT_EQ(bits_of(fp8_e4m3(3 * 0x1p-10)), 0x02u);  // subnormal tie 1.5 steps: to even (2)
  EXPECT_EQ(bits_of(fp8_e5m2(0x1p-17)), 0x00u);
  EXPECT_EQ(bits_of(fp8_e5m2(-0x1p-17 * 1.5)), 0x81u);
}

TEST(Fp8, RoundOverflowSaturatesAndNeverGivesInf) {
  EXPECT_EQ(round_overflow<fp8_e4m3>(448.0), 448.0);
  EXPECT_EQ(round_overflow<fp8_e4m3>(400.0), 400.0);  // in range: unchanged (the harness compares it)
  EXPECT_EQ(round_overflow<fp8_e4m3>(460.0), 448.0);
  EXPECT_EQ(round_overflow<fp8_e4m3>(-1e9), -448.0);
  EXPECT_EQ(round_overflow<fp8_e4m3>(kInf), 448.0);
  EXPECT_EQ(round_overflow<fp8_e4m3>(-kInf), -448.0);
  EXPECT_EQ(round_overflow<fp8_e5m2>(60000.0), 57344.0);
  EXPECT_EQ(round_overflow<fp8_e5m2>(1e300), 57344.0);
  EXPECT_EQ(round_overflow<fp8_e5m2>(-kInf), -57344.0);
  EXPECT_TRUE(std::isnan(round_overflow<fp8_e5m2>(kNaN)));
  // The IEEE types keep going to inf.
  EXPECT_EQ(round_overflow<half>(65520.0), kInf);
  EXPECT_EQ(round_overflow<half>(kInf), kInf);
}

TEST(Fp8, TraitsAndUlpAt) {
  EXPECT_EQ(DtypeTraits<fp8_e4m3>::max_finite, decode(kE4M3, 0x7E));
  EXPECT_EQ(DtypeTraits<fp8_e5m2>::max_finite, decode(kE5M2, 0x7B));
  EXPECT_EQ(DtypeTraits<half>::max_finite, static_cast<double>(static_cast<float>(std::numeric_limits<half>::max())));
  EXPECT_EQ(DtypeTraits<bfloat16>::max_finite,
            static_cast<double>(static_cast<float>(std::numeric_limits<bfloat16>::max())));
  EXPECT_EQ(DtypeTraits<float>::max_finite, std::numeric_limits<float>::max());
  EXPECT_EQ(ulp_at<fp8_e4m3>(1.0), 0x1p-3);
  EXPECT_EQ(ulp_at<fp8_e4m3>(448.0), 32.0);
  EXPECT_EQ(ulp_at<fp8_e4m3>(0.0), 0x1p-9);
  EXPECT_EQ(ulp_at<fp8_e5m2>(1.0), 0x1p-2);
  EXPECT_EQ(ulp_at<fp8_e5m2>(57344.0), 8192.0);
  EXPECT_EQ(ulp_at<fp8_e5m2>(-0x1p-15), 0x1p-16);
  // ulp_at equals the gap to the next code, for every finite positive code below the max.
  auto check_gaps = [](auto tag, const Format& f) {
    using T = decltype(tag);
    const auto cands = candidates(f);
    for (std::size_t i = 0; i + 1 < cands.size(); ++i)
      EXPECT_EQ(ulp_at<T>(cands[i].value), cands[i + 1].value - cands[i].value) << f.name << " at " << cands[i].value;
  };
  check_gaps(fp8_e4m3{}, kE4M3);
  check_gaps(fp8_e5m2{}, kE5M2);
}

// ---------------------------------------------------------------------------------------
// round_to for the IEEE storage types: the nearest code by the same search (for half and
// bfloat16), the hardware's double -> float conversion for float.

TEST(RoundTo, HalfAndBfloat16AreTheNearestCode) {
  auto check = [](auto tag, const Format& f) {
    using T = decltype(tag);
    const auto cands = candidates(f);
    std::vector<double> some = probes(cands);
    some.insert(some.end(), {kInf, -kInf, 0.0, -0.0});
    int failures = 0;
    for (double v : some) {
      const double expected = decode(f, nearest_code(f, cands, v));
      if (!same_value(round_to<T>(v), expected) && ++failures <= 5)
        ADD_FAILURE() << std::setprecision(17) << "round_to<" << f.name << ">(" << v << ") = " << round_to<T>(v)
                      << ", nearest " << expected;
      // Where v is a float, Eigen's conversion (from float) must agree.
      const float single = static_cast<float>(v);
      if (static_cast<double>(single) == v && !same_value(to_double(from_float<T>(single)), expected) &&
          ++failures <= 5)
        ADD_FAILURE() << std::setprecision(9) << f.name << " from_float(" << single << ") disagrees";
    }
    EXPECT_EQ(failures, 0) << f.name;
  };
  check(half{}, kHalf);
  check(bfloat16{}, kBf16);
}

// Directly from double: a value just above a tie rounds up, where going through float first
// lands on the tie and rounds to even (down).
TEST(RoundTo, RoundsOnceFromDouble) {
  const double above_half_tie = 1 + 0x1p-11 + 0x1p-40;
  EXPECT_EQ(round_to<half>(above_half_tie), 1 + 0x1p-10);
  EXPECT_EQ(to_double(from_float<half>(static_cast<float>(above_half_tie))), 1.0);  // the double rounding
  const double above_bf16_tie = 1 + 0x1p-8 + 0x1p-30;
  EXPECT_EQ(round_to<bfloat16>(above_bf16_tie), 1 + 0x1p-7);
  EXPECT_EQ(round_to<fp8_e4m3>(1 + 0x1p-4 + 0x1p-40), 1 + 0x1p-3);
}

TEST(RoundTo, FloatIsTheHardwareConversion) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> log2_magnitude(-160, 130);
  for (int i = 0; i < 20000; ++i) {
    const double v = (i % 2 ? -1 : 1) * std::exp2(log2_magnitude(rng));
    ASSERT_TRUE(same_value(round_to<float>(v), static_cast<double>(static_cast<float>(v)))) << std::setprecision(17) << v;
  }
  EXPECT_EQ(round_to<float>(1e39), kInf);
  EXPECT_EQ(round_to<float>(-kInf), -kInf);
  EXPECT_TRUE(std::isnan(round_to<float>(kNaN)));
  EXPECT_EQ(round_to<half>(65520.0), kInf);  // the tie above the max goes to inf (even)
  EXPECT_EQ(round_to<half>(65519.0), 65504.0);
  EXPECT_EQ(round_to<double>(0.1), 0.1);
}

// ---------------------------------------------------------------------------------------
// Generators: the zero-centred weight and the fp8 types.

TEST(GenerateConvention, OffsetWeightIsTheSameDrawsWithoutTheOne) {
  constexpr std::int64_t H = 4096;
  std::vector<float> plain(H), offset(H), plain_default(H);
  generate_weight(kWeightSeed, H, plain.data(), false);
  generate_weight(kWeightSeed, H, plain_default.data());
  generate_weight(kWeightSeed, H, offset.data(), true);
  EXPECT_EQ(plain, plain_default);
  double sum = 0, sum_squares = 0;
  for (std::int64_t h = 0; h < H; ++h) {
    // Both are float(base + 0.5 z) of the same z: they differ by the two float roundings.
    EXPECT_NEAR(1.0 + offset[h], plain[h], 0x1p-23 * (1 + std::fabs(plain[h]))) << h;
    sum += offset[h];
    sum_squares += static_cast<double>(offset[h]) * offset[h];
  }
  const double mean = sum / H, sd = std::sqrt(sum_squares / H - mean * mean);
  EXPECT_NEAR(mean, 0.0, 0.05);
  EXPECT_NEAR(sd, 0.5, 0.05);
}

TEST(GenerateConvention, Fp8RowsAreTheFloatRowsRoundedAndSaturated) {
  constexpr std::int64_t H = 4096;
  std::vector<float> f(H);
  std::vector<fp8_e4m3> e4(H);
  std::vector<fp8_e5m2> e5(H);
  generate_row(Dist::large, 41, 3, H, f.data());
  generate_row(Dist::large, 41, 3, H, e4.data());
  generate_row(Dist::large, 41, 3, H, e5.data());
  int saturated = 0;
  for (std::int64_t h = 0; h < H; ++h) {
    ASSERT_EQ(bits_of(e4[h]), bits_of(fp8_e4m3(f[h]))) << h;
    ASSERT_EQ(bits_of(e5[h]), bits_of(fp8_e5m2(f[h]))) << h;
    saturated += std::fabs(to_double(e4[h])) == 448.0;
  }
  EXPECT_GT(saturated, 0);  // 300 * N(0, 1) passes 448 in about 1 of 7
  std::vector<fp8_e4m3> w(H);
  generate_weight(41, H, w.data(), true);
  EXPECT_TRUE(std::any_of(w.begin(), w.end(), [](fp8_e4m3 v) { return to_double(v) != 0.0; }));
}

}  // namespace
}  // namespace rb::ref

// The reference's conventions and fp8 storage judged on their own, against oracles written
// here: every fp8 code decoded by the OCP formula and rounding checked by brute-force search
// over all codes; each convention's forward against plain double arithmetic with the
// roundings done in the test; the backward with a weight offset against a finite difference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iomanip>
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
    magnitude = std::pow(2.0, static_cast<int>(e) - f.bias) *
                (1.0 + static_cast<double>(m) / std::pow(2.0, f.mant_bits));
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
    EXPECT_TRUE(same_value(to_double(fp8_e4m3::from_bits(k.code)), k.value))
        << "e4m3 0x" << std::hex << +k.code;
    EXPECT_EQ(bits_of(fp8_e4m3(k.value)), k.code) << "e4m3 " << k.value;
  }
  EXPECT_TRUE(std::isnan(to_double(fp8_e4m3::from_bits(0x7F))));
  EXPECT_TRUE(std::isnan(to_double(fp8_e4m3::from_bits(0xFF))));
  EXPECT_EQ(to_double(fp8_e4m3::from_bits(0x78)), 256.0);  // S.1111.000: finite in e4m3, not inf
  for (const Known& k : {Known{0x3C, 1.0}, Known{0x7B, 57344.0}, Known{0xFB, -57344.0}, Known{0x04, 0x1p-14},
                         Known{0x01, 0x1p-16}, Known{0x03, 3 * 0x1p-16}, Known{0x3E, 1.5}}) {
    EXPECT_TRUE(same_value(to_double(fp8_e5m2::from_bits(k.code)), k.value))
        << "e5m2 0x" << std::hex << +k.code;
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
      ADD_FAILURE() << f.name << " code 0x" << std::hex << code << " came back as 0x" << from_double
                    << " / 0x" << from_single;
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
  EXPECT_EQ(bits_of(fp8_e4m3(464.0)), 0x7Eu);  // the tie above 448 goes down (no code above)
  EXPECT_EQ(bits_of(fp8_e4m3(465.0)), 0x7Eu);  // beyond the tie: saturates, not NaN
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
  EXPECT_EQ(bits_of(fp8_e4m3(0x1p-10)), 0x00u);  // half the smallest subnormal: tie to 0
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
  EXPECT_EQ(DtypeTraits<half>::max_finite,
            static_cast<double>(static_cast<float>(std::numeric_limits<half>::max())));
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
      EXPECT_EQ(ulp_at<T>(cands[i].value), cands[i + 1].value - cands[i].value)
          << f.name << " at " << cands[i].value;
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
        ADD_FAILURE() << std::setprecision(17) << "round_to<" << f.name << ">(" << v
                      << ") = " << round_to<T>(v) << ", nearest " << expected;
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
    ASSERT_TRUE(same_value(round_to<float>(v), static_cast<double>(static_cast<float>(v))))
        << std::setprecision(17) << v;
  }
  EXPECT_EQ(round_to<float>(1e39), kInf);
  EXPECT_EQ(round_to<float>(-kInf), -kInf);
  EXPECT_TRUE(std::isnan(round_to<float>(kNaN)));
  EXPECT_EQ(round_to<half>(65520.0), kInf);  // the tie above the max goes to inf (even)
  EXPECT_EQ(round_to<half>(65519.0), 65504.0);
  EXPECT_EQ(round_to<double>(0.1), 0.1);
}

// ---------------------------------------------------------------------------------------
// Conventions. Expected values come from plain double arithmetic here, with the roundings
// done by the test's own helpers (Eigen's conversions from float, and C++'s double -> float
// cast), never by round_to.

// v rounded to T (half or bfloat16) through Eigen's float conversion. That rounds twice
// (double -> float -> T), which is wrong only when the float lands on a tie of T that v
// itself is not on: such a v is refused, so the inputs below must avoid it.
template <class T>
double eigen_round(double v) {
  const float single = static_cast<float>(v);
  std::uint32_t bits;
  std::memcpy(&bits, &single, 4);
  const std::uint32_t dropped = 23 - DtypeTraits<T>::mant, below = bits & ((1u << dropped) - 1);
  if (static_cast<double>(single) != v && below == (1u << (dropped - 1)))
    ADD_FAILURE() << std::setprecision(17) << "eigen_round: " << v << " would round twice";
  return static_cast<double>(static_cast<float>(static_cast<T>(single)));
}

double f32_round(double v) { return static_cast<double>(static_cast<float>(v)); }

template <class T>
std::vector<T> stored(std::initializer_list<double> values) {
  std::vector<T> out;
  for (double v : values) {
    out.push_back(static_cast<T>(static_cast<float>(v)));
    EXPECT_EQ(to_double(out.back()), v) << "test input not representable";
  }
  return out;
}

template <class T, class W>
std::vector<double> forward(const std::vector<T>& x, const std::vector<W>& w, double eps, Convention conv,
                            double* rrms_out = nullptr) {
  std::vector<double> y(x.size());
  const double rrms =
      rmsnorm_fwd_row(x.data(), w.data(), static_cast<std::int64_t>(x.size()), eps, y.data(), conv);
  if (rrms_out) *rrms_out = rrms;
  return y;
}

double rrms_of(const std::vector<double>& x, double eps) {
  double sum = 0;
  for (double v : x) sum += v * v;
  return 1.0 / std::sqrt(sum / static_cast<double>(x.size()) + eps);
}

// The element built by hand: x = (2, 1), eps = 0, so rrms = 1 / sqrt(2.5) and x * rrms =
// 1.26491106..., which bf16 rounds up to n = 1.265625 (162 * 2^-7, 2^-9 relative above). With
// w = 1 + 2^-6: the exact product 1.2846753 is below the bf16 midpoint 1.28515625 between
// 1.28125 and 1.2890625, so fp32 (one rounding) gives 1.28125; llama's n * w = 1.2854004 is
// above it, so llama gives 1.2890625: one bf16 ulp (2^-7) apart, from n's rounding alone.
TEST(Convention, LlamaRoundsTheNormalisedValueThenTheProduct) {
  const auto x = stored<bfloat16>({2.0, 1.0});
  const auto w = stored<bfloat16>({1 + 0x1p-6, 1 + 0x1p-6});
  double rrms_fp32 = 0, rrms_llama = 0;
  const auto fp32 = forward(x, w, 0.0, Convention::fp32, &rrms_fp32);
  const auto llama = forward(x, w, 0.0, Convention::llama, &rrms_llama);
  const double rrms = 1.0 / std::sqrt(2.5);
  EXPECT_EQ(rrms_fp32, rrms);
  EXPECT_EQ(rrms_llama, rrms);
  for (std::size_t c = 0; c < 2; ++c) {
    const double xd = to_double(x[c]), wd = to_double(w[c]);
    const double n = eigen_round<bfloat16>(xd * rrms);
    EXPECT_EQ(fp32[c], xd * rrms * wd) << c;
    EXPECT_EQ(llama[c], eigen_round<bfloat16>(n * wd)) << c;
  }
  EXPECT_EQ(llama[0], 1.2890625);
  EXPECT_EQ(eigen_round<bfloat16>(fp32[0]), 1.28125);
  // Column 1 (x = 1) parts the same way one binade down.
  EXPECT_EQ(llama[1], 0.64453125);
  EXPECT_EQ(eigen_round<bfloat16>(fp32[1]), 0.640625);
}

// Over every bf16 weight in [1, 2): llama matches the two roundings done here, and where it
// parts from fp32 (after y's own rounding) it is by exactly one bf16 ulp.
TEST(Convention, LlamaAgainstFp32OverEveryBf16WeightInABinade) {
  std::vector<bfloat16> x, w;
  for (int k = 0; k < 128; ++k) {
    x.push_back(bfloat16(2.0f));
    w.push_back(bfloat16(static_cast<float>(1 + k / 128.0)));
  }
  for (int k = 0; k < 128; ++k) {
    x.push_back(bfloat16(1.0f));
    w.push_back(bfloat16(static_cast<float>(1 + k / 128.0)));
  }
  const double eps = 1e-6;
  const auto fp32 = forward(x, w, eps, Convention::fp32);
  const auto llama = forward(x, w, eps, Convention::llama);
  const double rrms = 1.0 / std::sqrt((128 * 4.0 + 128 * 1.0) / 256 + eps);
  int parted = 0;
  for (std::size_t c = 0; c < x.size(); ++c) {
    const double xd = to_double(x[c]), wd = to_double(w[c]);
    const double expected_llama = eigen_round<bfloat16>(eigen_round<bfloat16>(xd * rrms) * wd);
    ASSERT_EQ(llama[c], expected_llama) << "column " << c;
    ASSERT_EQ(fp32[c], xd * rrms * wd) << "column " << c;
    const double y_fp32 = eigen_round<bfloat16>(fp32[c]);
    if (y_fp32 != llama[c]) {
      ++parted;
      const double ulp =
          std::ldexp(1.0, static_cast<int>(std::floor(std::log2(std::min(y_fp32, llama[c])))) - 7);
      EXPECT_EQ(std::fabs(y_fp32 - llama[c]), ulp) << "column " << c;
    }
  }
  EXPECT_GT(parted, 10);
}

// The product is rounded in the dtype PyTorch promotes (x's dtype, w's dtype) to: fp32 for
// a float weight, and for fp16 x with a bf16 weight too (not to either 16-bit type).
TEST(Convention, LlamaRoundsTheProductInThePromotedDtype) {
  {  // bf16 x, fp32 w: n * w (8 + 21 significant bits) rounded to fp32, not kept exact.
    const auto x = stored<bfloat16>({2.0, 1.0});
    const auto w = stored<float>({1 + 0x1p-20, 1 - 0x1p-21});
    const auto llama = forward(x, w, 0.0, Convention::llama);
    const double rrms = 1.0 / std::sqrt(2.5);
    for (std::size_t c = 0; c < 2; ++c) {
      const double n = eigen_round<bfloat16>(to_double(x[c]) * rrms);
      EXPECT_EQ(llama[c], f32_round(n * to_double(w[c]))) << c;
      EXPECT_NE(llama[c], n * to_double(w[c])) << c;  // the rounding happened
    }
  }
  {  // fp16 x, bf16 w: promoted to fp32, where n * w (11 + 8 bits) is exact; fp16 would round it.
    const auto x = stored<half>({2.0, 1.0});
    const auto w = stored<bfloat16>({1 + 0x1p-6, 1 + 0x1p-6});
    const auto llama = forward(x, w, 0.0, Convention::llama);
    const double rrms = 1.0 / std::sqrt(2.5);
    const double n = eigen_round<half>(2.0 * rrms);
    EXPECT_EQ(n, 1295 * 0x1p-10);
    EXPECT_EQ(llama[0], n * (1 + 0x1p-6));
    EXPECT_NE(llama[0], eigen_round<half>(n * (1 + 0x1p-6)));
  }
}

// With fp32 x and w llama's roundings are fp32 roundings: within 2^-23 relative of fp32, and
// exactly the two float roundings done here.
TEST(Convention, LlamaWithFloatStorageIsFp32UpToTwoFp32Roundings) {
  constexpr std::int64_t H = 333;
  std::vector<float> x(H), w(H);
  generate_row(Dist::normal, 5, 0, H, x.data());
  generate_weight(5, H, w.data());
  const double eps = 1e-5;
  const auto fp32 = forward(x, w, eps, Convention::fp32);
  const auto llama = forward(x, w, eps, Convention::llama);
  std::vector<double> xd(x.begin(), x.end());
  const double rrms = rrms_of(xd, eps);
  for (std::int64_t c = 0; c < H; ++c) {
    EXPECT_EQ(llama[c], f32_round(f32_round(x[c] * rrms) * w[c])) << c;
    EXPECT_LE(std::fabs(llama[c] - fp32[c]), 0x1p-23 * std::fabs(fp32[c])) << c;
  }
}

// 1 + w = 1 + 3 * 2^-8 lies halfway between bf16 neighbours (spacing 2^-7 at 1): bf16 rounds
// it to even, 1 + 2^-6; fp32 holds it. 1 - 3 * 2^-9 likewise below 1 (spacing 2^-8) rounds
// to 1 - 2^-7. 1 + 0.5 is exact in both, so there the two agree.
TEST(Convention, GemmaAndZeroCenteredDifferWhereOnePlusWIsNotABf16) {
  const auto x = stored<bfloat16>({2.0, 1.0, -3.0});
  const auto w = stored<bfloat16>({3 * 0x1p-8, 0.5, -3 * 0x1p-9});
  const double eps = 1e-6;
  const auto gemma = forward(x, w, eps, Convention::gemma);
  const auto zero_centered = forward(x, w, eps, Convention::zero_centered);
  const auto plain = forward(x, w, eps, Convention::fp32);
  const double rrms = 1.0 / std::sqrt(14.0 / 3 + eps);
  const double expected_gemma_w[] = {1 + 3 * 0x1p-8, 1.5, 1 - 3 * 0x1p-9};
  const double expected_zc_w[] = {1 + 0x1p-6, 1.5, 1 - 0x1p-7};
  for (std::size_t c = 0; c < 3; ++c) {
    const double xd = to_double(x[c]), wd = to_double(w[c]);
    EXPECT_EQ(f32_round(1 + wd), expected_gemma_w[c]);  // the hand-derived roundings, checked
    EXPECT_EQ(eigen_round<bfloat16>(1 + wd), expected_zc_w[c]);
    EXPECT_DOUBLE_EQ(gemma[c], xd * rrms * expected_gemma_w[c]) << c;
    EXPECT_DOUBLE_EQ(zero_centered[c], xd * rrms * expected_zc_w[c]) << c;
    EXPECT_DOUBLE_EQ(plain[c], xd * rrms * wd) << c;  // fp32 takes w as it is: no offset
  }
  EXPECT_NE(gemma[0], zero_centered[0]);
  EXPECT_EQ(gemma[1], zero_centered[1]);
  EXPECT_NE(gemma[2], zero_centered[2]);
}

// gemma's 1 + w is rounded to fp32 whatever w's dtype: a double weight too (documented), and
// a float weight whose 1 + w needs more than 24 bits. zero_centered rounds to W: the
// identity for double.
TEST(Convention, GemmaRoundsOnePlusWToFp32EvenForDoubleWeights) {
  const std::vector<double> x = {1.0, -2.0};
  const std::vector<double> w = {0x1p-30, 0x1p-24 + 0x1p-40};
  const auto gemma = forward(x, w, 0.0, Convention::gemma);
  const auto zero_centered = forward(x, w, 0.0, Convention::zero_centered);
  const double rrms = 1.0 / std::sqrt(2.5);
  EXPECT_DOUBLE_EQ(gemma[0], 1.0 * rrms);                   // 1 + 2^-30 -> 1
  EXPECT_DOUBLE_EQ(gemma[1], -2.0 * rrms * (1 + 0x1p-23));  // above the fp32 tie: up
  EXPECT_EQ(zero_centered[0], 1.0 * rrms * (1 + 0x1p-30));
  EXPECT_EQ(zero_centered[1], -2.0 * rrms * (1 + 0x1p-24 + 0x1p-40));

  const auto wf = stored<float>({0x1p-30, 0x1p-24 + 0x1p-40});
  const auto xf = stored<float>({1.0, -2.0});
  EXPECT_EQ(forward(xf, wf, 0.0, Convention::gemma), gemma);
  EXPECT_EQ(forward(xf, wf, 0.0, Convention::zero_centered), gemma);  // W = fp32: the same rounding
}

// x = (1, 3), r = (2^-8, 2^-7) in bf16: the exact sums 1 + 2^-8 and 3 + 2^-7 are both bf16
// ties and round to even, to (1, 3). llama squares those; fp32 squares the exact sums, so
// the two rrms differ, and so do the returned s.
TEST(Convention, LlamaAddRoundsTheResidualSumBeforeSquaring) {
  const auto x = stored<bfloat16>({1.0, 3.0});
  const auto r = stored<bfloat16>({0x1p-8, 0x1p-7});
  const auto w = stored<bfloat16>({1.0, 0.75});
  const double eps = 1e-6;
  std::vector<double> y_fp32(2), s_fp32(2), y_llama(2), s_llama(2);
  const double rrms_fp32 = rmsnorm_add_fwd_row(x.data(), r.data(), w.data(), 2, eps, y_fp32.data(),
                                               s_fp32.data(), Convention::fp32);
  const double rrms_llama = rmsnorm_add_fwd_row(x.data(), r.data(), w.data(), 2, eps, y_llama.data(),
                                                s_llama.data(), Convention::llama);

  const std::vector<double> exact_s = {1 + 0x1p-8, 3 + 0x1p-7};
  const std::vector<double> rounded_s = {eigen_round<bfloat16>(exact_s[0]),
                                         eigen_round<bfloat16>(exact_s[1])};
  EXPECT_EQ(rounded_s, (std::vector<double>{1.0, 3.0}));
  EXPECT_EQ(s_fp32, exact_s);
  EXPECT_EQ(s_llama, rounded_s);
  EXPECT_EQ(rrms_fp32, rrms_of(exact_s, eps));
  EXPECT_EQ(rrms_llama, rrms_of(rounded_s, eps));
  EXPECT_EQ(rrms_llama, 1.0 / std::sqrt(5.0 + eps));
  EXPECT_NE(rrms_llama, rrms_fp32);
  for (std::size_t c = 0; c < 2; ++c) {
    const double wd = to_double(w[c]);
    EXPECT_EQ(y_fp32[c], exact_s[c] * rrms_fp32 * wd) << c;
    EXPECT_EQ(y_llama[c], eigen_round<bfloat16>(eigen_round<bfloat16>(rounded_s[c] * rrms_llama) * wd)) << c;
  }

  // An fp32 residual: s rounded to fp32 (1 + 2^-30 -> 1); fp32 keeps the exact sum.
  const auto x1 = stored<bfloat16>({1.0});
  const auto r1 = stored<float>({0x1p-30});
  const auto w1 = stored<bfloat16>({1.0});
  double y1 = 0, s1 = 0;
  rmsnorm_add_fwd_row(x1.data(), r1.data(), w1.data(), 1, eps, &y1, &s1, Convention::llama);
  EXPECT_EQ(s1, 1.0);
  rmsnorm_add_fwd_row(x1.data(), r1.data(), w1.data(), 1, eps, &y1, &s1, Convention::fp32);
  EXPECT_EQ(s1, 1 + 0x1p-30);
}

// ---------------------------------------------------------------------------------------
// Backward with a weight offset: the gradient of the forward with the same convention, in
// fp64 (T = W = double), by central differences.

struct Row {
  std::vector<double> x, r, w, g, gs;
};

Row row_problem(std::int64_t H) {
  auto gen = [H](Dist d, std::uint64_t seed) {
    std::vector<float> v(static_cast<std::size_t>(H));
    generate_row(d, seed, 0, H, v.data());
    return std::vector<double>(v.begin(), v.end());
  };
  Row p{gen(Dist::offset, 11), gen(Dist::normal, 12), {}, gen(Dist::normal, 13), gen(Dist::normal, 14)};
  std::vector<float> w(static_cast<std::size_t>(H));
  generate_weight(15, H, w.data(), /*offset=*/true);
  p.w.assign(w.begin(), w.end());
  return p;
}

// L = sum g * y (+ sum gs * s for the add op).
double loss(const Row& p, bool add, double eps, Convention conv) {
  const std::int64_t H = static_cast<std::int64_t>(p.x.size());
  std::vector<double> y(p.x.size()), s(p.x.size());
  if (add)
    rmsnorm_add_fwd_row(p.x.data(), p.r.data(), p.w.data(), H, eps, y.data(), s.data(), conv);
  else
    rmsnorm_fwd_row(p.x.data(), p.w.data(), H, eps, y.data(), conv);
  double l = 0;
  for (std::size_t k = 0; k < y.size(); ++k) l += p.g[k] * y[k] + (add ? p.gs[k] * s[k] : 0.0);
  return l;
}

// Central differences of L in every element of one input (x, r or w). A relative step of
// 1e-6 on values of order 1 leaves a truncation error ~1e-12 and a rounding error ~H * 2^-52
// / 1e-6 ~ 1e-8 relative to the gradient's scale; kFdTol sits 100x above both and far below
// what a wrong weight in the backward changes (w versus 1 + w: the whole gradient).
constexpr double kFdTol = 1e-6;

std::vector<double> central_differences(Row p, std::vector<double> Row::*input, bool add, double eps,
                                        Convention conv) {
  std::vector<double>& v = p.*input;
  std::vector<double> out(v.size());
  for (std::size_t k = 0; k < v.size(); ++k) {
    const double v0 = v[k], step = 1e-6 * std::max(std::fabs(v0), 1.0);
    v[k] = v0 + step;
    const double plus = loss(p, add, eps, conv);
    v[k] = v0 - step;
    const double minus = loss(p, add, eps, conv);
    v[k] = v0;
    out[k] = (plus - minus) / (2 * step);
  }
  return out;
}

int count_outside(const std::vector<double>& got, const std::vector<double>& expected,
                  const std::vector<double>& scale, const char* what, bool report) {
  int outside = 0;
  for (std::size_t k = 0; k < got.size(); ++k) {
    // The floor of 0.1 covers the quotient's rounding (~1e-8 absolute) where a column's
    // scale is near 0.
    if (std::fabs(got[k] - expected[k]) <= kFdTol * std::max(scale[k], 0.1)) continue;
    if (report && ++outside <= 3)
      ADD_FAILURE() << std::setprecision(17) << what << " at " << k << ": reference " << got[k]
                    << ", central difference " << expected[k];
    else if (!report)
      ++outside;
  }
  return outside;
}

TEST(ConventionBackward, GemmaBackwardIsTheGradientOfTheGemmaForward) {
  constexpr std::int64_t H = 37;
  const double eps = 1e-5;
  const Row p = row_problem(H);
  const double rrms = rrms_row(p.x.data(), H, eps);
  std::vector<double> dx(H), dw(H), dx_scale(H), dw_abs(H);
  rmsnorm_bwd_row(p.x.data(), p.w.data(), p.g.data(), H, rrms,
                  {dx.data(), dw.data(), dx_scale.data(), dw_abs.data()}, Convention::gemma);
  const auto fd_x = central_differences(p, &Row::x, false, eps, Convention::gemma);
  EXPECT_EQ(count_outside(dx, fd_x, dx_scale, "dx", true), 0);

  // The same backward without the offset (w for 1 + w) is far off: the check can fail.
  std::vector<double> dx_plain(H), dx_scale_plain(H);
  rmsnorm_bwd_row(p.x.data(), p.w.data(), p.g.data(), H, rrms,
                  {dx_plain.data(), nullptr, dx_scale_plain.data(), nullptr}, Convention::fp32);
  EXPECT_GT(count_outside(dx_plain, fd_x, dx_scale, "dx without offset", false), H / 2);

  // dw: d w_eff / d w = 1, so it is the plain dw; the zero-centred forward in fp64 (round_W
  // the identity for double) is smooth in w and its difference quotient confirms it.
  std::vector<double> dw_plain(H), dw_abs_plain(H);
  rmsnorm_bwd_row(p.x.data(), p.w.data(), p.g.data(), H, rrms,
                  {nullptr, dw_plain.data(), nullptr, dw_abs_plain.data()});
  EXPECT_EQ(dw, dw_plain);
  EXPECT_EQ(dw_abs, dw_abs_plain);
  const auto fd_w = central_differences(p, &Row::w, false, eps, Convention::zero_centered);
  EXPECT_EQ(count_outside(dw, fd_w, dw_abs, "dw", true), 0);
  // dx_scale uses w_eff: |g * w_eff| for the first term.
  for (std::int64_t h = 0; h < H; ++h) EXPECT_GE(dx_scale[h], std::fabs(dx[h]));
}

TEST(ConventionBackward, GemmaAddBackwardIsTheGradientOfTheGemmaAddForward) {
  constexpr std::int64_t H = 19;
  const double eps = 1e-6;
  const Row p = row_problem(H);
  std::vector<double> y(H), s(H);
  const double rrms =
      rmsnorm_add_fwd_row(p.x.data(), p.r.data(), p.w.data(), H, eps, y.data(), s.data(), Convention::gemma);
  std::vector<double> dx(H), dx_scale(H);
  rmsnorm_add_bwd_row(s.data(), p.w.data(), p.g.data(), p.gs.data(), H, rrms,
                      {dx.data(), nullptr, dx_scale.data(), nullptr}, Convention::gemma);
  EXPECT_EQ(
      count_outside(dx, central_differences(p, &Row::x, true, eps, Convention::gemma), dx_scale, "dx", true),
      0);
  EXPECT_EQ(
      count_outside(dx, central_differences(p, &Row::r, true, eps, Convention::gemma), dx_scale, "dr", true),
      0);
}

// zero_centered in bf16: the backward's weight is 1 + w rounded to bf16, which the test
// rounds and stores itself: the offset backward equals the plain backward on that weight.
TEST(ConventionBackward, ZeroCenteredUsesOnePlusWRoundedToW) {
  constexpr std::int64_t H = 64, M = 3;
  std::vector<bfloat16> x(M * H), dy(M * H), w(H), w_eff(H);
  generate_rows(Dist::normal, 21, M, H, H, x.data());
  generate_rows(Dist::normal, 22, M, H, H, dy.data());
  generate_weight(23, H, w.data(), /*offset=*/true);
  int not_exact = 0;
  for (std::int64_t h = 0; h < H; ++h) {
    const double one_plus_w = 1 + to_double(w[h]);
    w_eff[h] = bfloat16(static_cast<float>(eigen_round<bfloat16>(one_plus_w)));
    not_exact += to_double(w_eff[h]) != one_plus_w;
  }
  ASSERT_GT(not_exact, 0) << "no column tests the rounding";
  std::vector<double> rrms(M);
  for (std::int64_t i = 0; i < M; ++i) rrms[i] = rrms_row(x.data() + i * H, H, 1e-5);
  std::vector<double> dx(M * H), dw(H), dx_scale(M * H), dx_ref(M * H), dw_ref(H), dx_scale_ref(M * H);
  rmsnorm_bwd_rows(x.data(), w.data(), dy.data(), rrms.data(), M, H, H,
                   {dx.data(), dw.data(), dx_scale.data(), nullptr}, Convention::zero_centered);
  rmsnorm_bwd_rows(x.data(), w_eff.data(), dy.data(), rrms.data(), M, H, H,
                   {dx_ref.data(), dw_ref.data(), dx_scale_ref.data(), nullptr});
  EXPECT_EQ(dx, dx_ref);
  EXPECT_EQ(dx_scale, dx_scale_ref);
  EXPECT_EQ(dw, dw_ref);  // dw does not involve the weight at all

  // The add backward over rows passes the convention on as well.
  std::vector<double> dx_add(M * H), dx_add_ref(M * H);
  rmsnorm_add_bwd_rows<bfloat16, bfloat16, bfloat16>(x.data(), w.data(), dy.data(), dy.data(), rrms.data(), M,
                                                     H, H, {dx_add.data()}, Convention::zero_centered);
  rmsnorm_add_bwd_rows<bfloat16, bfloat16, bfloat16>(x.data(), w_eff.data(), dy.data(), dy.data(),
                                                     rrms.data(), M, H, H, {dx_add_ref.data()});
  EXPECT_EQ(dx_add, dx_add_ref);
}

// fp32 and llama share one backward.
TEST(ConventionBackward, LlamaBackwardIsFp32Backward) {
  constexpr std::int64_t H = 50;
  std::vector<bfloat16> x(H), dy(H), w(H);
  generate_row(Dist::normal, 31, 0, H, x.data());
  generate_row(Dist::normal, 32, 0, H, dy.data());
  generate_weight(33, H, w.data());
  const double rrms = rrms_row(x.data(), H, 1e-5);
  std::vector<double> a(H), b(H);
  rmsnorm_bwd_row(x.data(), w.data(), dy.data(), H, rrms, {a.data()}, Convention::llama);
  rmsnorm_bwd_row(x.data(), w.data(), dy.data(), H, rrms, {b.data()}, Convention::fp32);
  EXPECT_EQ(a, b);
}

TEST(Convention, UnknownConventionIsRefused) {
  const float x[2] = {1.0f, 2.0f}, w[2] = {1.0f, 1.0f};
  double y[2], s[2];
  const auto bogus = static_cast<Convention>(42);
  EXPECT_THROW(rmsnorm_fwd_row(x, w, 2, 1e-5, y, bogus), std::invalid_argument);
  EXPECT_THROW(rmsnorm_add_fwd_row(x, x, w, 2, 1e-5, y, s, bogus), std::invalid_argument);
  EXPECT_THROW(rmsnorm_bwd_row(x, w, x, 2, 1.0, {y}, bogus), std::invalid_argument);
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

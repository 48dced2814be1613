// The backward references and the fused residual add judged on their own: against fp64
// central finite differences of the forward references, against closed forms derived by
// hand, and the storage-type instantiations against the all-double path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <limits>
#include <ostream>
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
// Independent streams for the other tensors: the residual r, dy (= g, the loss weights) and
// ds_out (= gs). The same Dist and row with another seed gives unrelated values.
constexpr std::uint64_t kSeedR = kSeed + 1, kSeedDy = kSeed + 2, kSeedDs = kSeed + 3;
constexpr double kEps64 = std::numeric_limits<double>::epsilon();

template <class T>
std::vector<T> rows_of(Dist d, std::uint64_t seed, std::int64_t M, std::int64_t H, std::int64_t stride) {
  std::vector<T> v(static_cast<std::size_t>(M * stride), from_float<T>(0.0f));
  generate_rows(d, seed, M, H, stride, v.data());
  return v;
}

template <class T>
std::vector<T> weight_of(std::int64_t H) {
  std::vector<T> w(static_cast<std::size_t>(H));
  generate_weight(kSeed, H, w.data());
  return w;
}

template <class T>
std::vector<double> upcast(const std::vector<T>& v) {
  std::vector<double> out(v.size());
  std::transform(v.begin(), v.end(), out.begin(), [](T e) { return to_double(e); });
  return out;
}

std::uint64_t bits_of_double(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// Bitwise equality of two double vectors (NaN included), the first few differences shown.
void expect_bitwise_equal(const std::vector<double>& got, const std::vector<double>& expected,
                          const std::string& what) {
  ASSERT_EQ(got.size(), expected.size()) << what;
  int shown = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (bits_of_double(got[i]) != bits_of_double(expected[i]) && ++shown <= 3)
      ADD_FAILURE() << std::setprecision(17) << what << " at " << i << ": " << got[i]
                    << " != " << expected[i];
}

// ---------------------------------------------------------------------------------------
// Finite differences.
//
// L = sum(g * y) (+ sum(gs * s) for the add op) with fixed random g and gs, so dy = g and
// ds_out = gs, and the reference's dx / dr / dw must equal dL/dx, dL/dr, dL/dw. Each input
// element v is moved to v +- d and dL/dv ~ (L(v + d) - L(v - d)) / (2d), with
//   d = 1e-6 * max(|x[h]|, rms) for x and r (rms = sqrt(mean(x^2) + eps) of the row, the
//       scale on which y varies: 1 for normal rows, ~3e-3 for tiny and zero rows, where a
//       step of 1e-6 would be hundreds of times too coarse),
//   d = 1e-6 * max(|w[h]|, 1) for w (y is linear in w: no truncation error at all).
// Errors of the central difference:
//   truncation  d^2 / 6 * L''' ~ (1e-6)^2 / 6 ~ 2e-13 of the gradient's scale, since L'''
//               scales like L' / rms^2 and d <= 1e-6 * sqrt(H) * rms;
//   rounding    L(v + d) - L(v - d) is formed from values each carrying ~eps_64 = 2.2e-16
//               relative error, so ~eps_64 * sum|g * y| / d absolute: for H = 128, sum|g y|
//               ~ 100 and d ~ 1e-6 give ~2e-8, against gradients of order rrms * |g w| ~ 1.
// kFdRtol = 1e-6 is 50x above both, while the bugs a backward can have (a missing
// correction term, rrms^2 for rrms^3, H - 1 for H, a dropped weight) move the gradient by
// ~1/H = 8e-3 of its scale at H = 128 or more. The rounding term also enters as an absolute
// slack, kFdRounding * eps_64 * sum|g * y| / d (sum over the rows the element affects):
// where dx's two terms cancel (at H = 1, dx = dy * w * eps / (x^2 + eps)^(3/2), ~1e-5 of
// dy * w) the gradient is far smaller than the values L is formed from, and no step gets
// 1e-6 of it. Only the loss change is summed (the rows an element does not affect give
// exactly 0), so the rounding is that of the touched rows alone.
constexpr double kFdRtol = 1e-6;
constexpr double kFdRounding = 16;
constexpr double kFdRelStep = 1e-6;

enum class Op { norm, add };

struct FdCase {
  std::int64_t M, H;
  double eps;
  Dist dist;
};

std::string fd_case_name(const FdCase& c) {
  std::string d(dist_name(c.dist));
  std::replace(d.begin(), d.end(), '-', '_');
  return "H" + std::to_string(c.H) + "_M" + std::to_string(c.M) +
         (c.eps == 1e-5 ? "_eps1em5_" : "_eps1em6_") + d;
}

void PrintTo(const FdCase& c, std::ostream* os) { *os << fd_case_name(c); }

// The inputs, in double (values generated as float, so also exact in every storage type
// that holds them; irrelevant here).
struct Problem {
  std::int64_t M, H;
  double eps;
  std::vector<double> x, r, w, g, gs;
};

Problem make_problem(const FdCase& c) {
  Problem p{c.M, c.H, c.eps, {}, {}, {}, {}, {}};
  p.x = upcast(rows_of<float>(c.dist, kSeed, c.M, c.H, c.H));
  p.r = upcast(rows_of<float>(c.dist, kSeedR, c.M, c.H, c.H));
  p.w = upcast(weight_of<float>(c.H));
  p.g = upcast(rows_of<float>(Dist::normal, kSeedDy, c.M, c.H, c.H));
  p.gs = upcast(rows_of<float>(Dist::normal, kSeedDs, c.M, c.H, c.H));
  return p;
}

// Outputs of the forward reference over all rows: y, s (the add op only) and rrms.
struct Fwd {
  std::vector<double> y, s, rrms;
};

Fwd forward(Op op, const Problem& p) {
  const std::int64_t M = p.M, H = p.H;
  Fwd f{std::vector<double>(p.x.size()), std::vector<double>(p.x.size()), std::vector<double>(M)};
  for (std::int64_t i = 0; i < M; ++i) {
    const std::int64_t o = i * H;
    if (op == Op::norm)
      f.rrms[i] = rmsnorm_fwd_row(p.x.data() + o, p.w.data(), H, p.eps, f.y.data() + o);
    else
      f.rrms[i] = rmsnorm_add_fwd_row(p.x.data() + o, p.r.data() + o, p.w.data(), H, p.eps, f.y.data() + o,
                                      f.s.data() + o);
  }
  return f;
}

// L(plus) - L(minus), summed as sum(g * (y+ - y-)) so that unaffected rows add exactly 0.
double loss_change(Op op, const Problem& p, const Fwd& plus, const Fwd& minus) {
  double dl = 0;
  for (std::size_t k = 0; k < p.g.size(); ++k) {
    dl += p.g[k] * (plus.y[k] - minus.y[k]);
    if (op == Op::add) dl += p.gs[k] * (plus.s[k] - minus.s[k]);
  }
  return dl;
}

// sum |g * y| (+ |gs * s|) over rows [first, last) at the unperturbed point.
double loss_magnitude(Op op, const Problem& p, const Fwd& f, std::int64_t first, std::int64_t last) {
  double m = 0;
  for (std::int64_t k = first * p.H; k < last * p.H; ++k) {
    m += std::fabs(p.g[k] * f.y[k]);
    if (op == Op::add) m += std::fabs(p.gs[k] * f.s[k]);
  }
  return m;
}

// Central difference of L in input v[k], v being one of p's vectors.
double central_diff(Op op, Problem& p, std::vector<double>& v, std::size_t k, double step) {
  const double v0 = v[k], vp = v0 + step, vm = v0 - step;
  v[k] = vp;
  const Fwd plus = forward(op, p);
  v[k] = vm;
  const Fwd minus = forward(op, p);
  v[k] = v0;
  return loss_change(op, p, plus, minus) / (vp - vm);  // vp - vm: the step actually taken
}

// Compares the analytic gradient of every element of `v` (x or r: one per row and column;
// the weight: one per column, affecting every row) with its central difference.
enum class Input { row_wise, weight };

void check_gradient(Op op, Problem& p, const Fwd& f, std::vector<double>& v, Input kind,
                    const std::vector<double>& analytic, const char* what) {
  const bool is_weight = kind == Input::weight;
  int shown = 0;
  std::int64_t mismatches = 0;
  for (std::size_t k = 0; k < v.size(); ++k) {
    const std::int64_t row = is_weight ? 0 : static_cast<std::int64_t>(k) / p.H;
    const std::int64_t col = static_cast<std::int64_t>(k) % p.H;
    double scale = std::max(std::fabs(v[k]), 1.0);
    if (!is_weight) {
      // The row's rms of x (norm) or s (add), and |x| or |s| at the element.
      const double here = op == Op::norm ? p.x[k] : f.s[k];
      scale = std::max(std::fabs(here), 1.0 / f.rrms[row]);
    }
    const double step = kFdRelStep * scale;
    const double fd = central_diff(op, p, v, k, step);
    const double magnitude =
        is_weight ? loss_magnitude(op, p, f, 0, p.M) : loss_magnitude(op, p, f, row, row + 1);
    const double tol = kFdRtol * std::fabs(analytic[k]) + kFdRounding * kEps64 * magnitude / step;
    if (!(std::fabs(fd - analytic[k]) <= tol)) {
      ++mismatches;
      if (++shown <= 3)
        ADD_FAILURE() << std::setprecision(17) << what << " at (row " << row << ", col " << col
                      << "): reference " << analytic[k] << ", central difference " << fd << ", tolerance "
                      << tol;
    }
  }
  EXPECT_EQ(mismatches, 0) << what << ": elements outside the tolerance, of " << v.size();
}

class RefBwdFiniteDiff : public ::testing::TestWithParam<FdCase> {};

TEST_P(RefBwdFiniteDiff, NormBackwardIsTheGradientOfTheForward) {
  Problem p = make_problem(GetParam());
  const Fwd f = forward(Op::norm, p);
  std::vector<double> dx(p.x.size()), dw(static_cast<std::size_t>(p.H));
  rmsnorm_bwd_rows(p.x.data(), p.w.data(), p.g.data(), f.rrms.data(), p.M, p.H, p.H, {dx.data(), dw.data()});
  check_gradient(Op::norm, p, f, p.x, Input::row_wise, dx, "dx");
  check_gradient(Op::norm, p, f, p.w, Input::weight, dw, "dw");
}

TEST_P(RefBwdFiniteDiff, AddBackwardIsTheGradientOfTheAddForward) {
  Problem p = make_problem(GetParam());
  const Fwd f = forward(Op::add, p);
  std::vector<double> dx(p.x.size()), dw(static_cast<std::size_t>(p.H));
  rmsnorm_add_bwd_rows(f.s.data(), p.w.data(), p.g.data(), p.gs.data(), f.rrms.data(), p.M, p.H, p.H,
                       {dx.data(), dw.data()});
  check_gradient(Op::add, p, f, p.x, Input::row_wise, dx, "dx");
  check_gradient(Op::add, p, f, p.r, Input::row_wise, dx, "dr");
  check_gradient(Op::add, p, f, p.w, Input::weight, dw, "dw");
}

std::vector<FdCase> fd_cases() {
  std::vector<FdCase> cases;
  for (std::int64_t H : {1, 3, 17, 128})
    for (std::int64_t M : {1, 4})
      for (double eps : {1e-5, 1e-6})
        for (Dist d : all_dists()) cases.push_back({M, H, eps, d});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(RefBwdShapes, RefBwdFiniteDiff, ::testing::ValuesIn(fd_cases()),
                         [](const ::testing::TestParamInfo<FdCase>& info) {
                           return fd_case_name(info.param);
                         });

// The finite-difference cases hold what they promise: a tiny row has a mean square near eps
// and the zero-row distribution puts a zero row inside M = 4.
TEST(RefBwdFiniteDiffInputs, TinyAndZeroRowsArePresent) {
  const Problem tiny = make_problem({4, 128, 1e-5, Dist::tiny});
  for (std::int64_t i = 0; i < 4; ++i) {
    double ms = 0;
    for (std::int64_t h = 0; h < 128; ++h) ms += tiny.x[i * 128 + h] * tiny.x[i * 128 + h] / 128;
    EXPECT_GT(ms, 1e-7) << "row " << i;
    EXPECT_LT(ms, 1e-5) << "row " << i;
  }
  const Problem zero = make_problem({4, 17, 1e-5, Dist::zero_row});
  EXPECT_TRUE(std::all_of(zero.x.begin() + 17, zero.x.begin() + 34, [](double v) { return v == 0.0; }));
  EXPECT_TRUE(std::all_of(zero.r.begin() + 17, zero.r.begin() + 34, [](double v) { return v == 0.0; }));
}

// ---------------------------------------------------------------------------------------
// Closed forms.
//
// The reference's dx is the difference of two terms that can cancel, so it is compared
// with a closed form to a few eps_64 of dx_scale (the terms' sizes), not of |dx|.
constexpr double kClosedTol = 8 * kEps64;

void expect_near_scaled(double got, double expected, double scale, const std::string& what) {
  EXPECT_LE(std::fabs(got - expected), kClosedTol * scale)
      << std::setprecision(17) << what << ": got " << got << ", expected " << expected << " (scale " << scale
      << ")";
}

// H = 1: y = x / sqrt(x^2 + eps) * w, so
//   dy/dx = w * (sqrt(x^2 + eps) - x^2 / sqrt(x^2 + eps)) / (x^2 + eps) = w * eps / (x^2 + eps)^(3/2):
// the correction term cancels all of the direct term rrms * w but a fraction eps / (x^2 + eps).
TEST(RefBwdClosedForm, SingleColumnRow) {
  for (double eps : {1e-5, 1e-6}) {
    for (double x : {0.5, -3.0, 1e-3, -2e-4, 0.0}) {
      const double w = 1.25, dy = -0.75;
      const double rrms = rrms_row(&x, 1, eps);
      double dx = 0, dw = 0, dx_scale = 0, dw_abs = 0;
      rmsnorm_bwd_row(&x, &w, &dy, 1, rrms, {&dx, &dw, &dx_scale, &dw_abs});
      const std::string at = "x = " + std::to_string(x) + ", eps = " + std::to_string(eps);
      expect_near_scaled(dx, dy * w * eps / std::pow(x * x + eps, 1.5), dx_scale, "dx at " + at);
      expect_near_scaled(dx_scale, std::fabs(dy * w) * (x * x + x * x + eps) / std::pow(x * x + eps, 1.5),
                         dx_scale, "dx_scale at " + at);
      EXPECT_DOUBLE_EQ(dw, dy * x / std::sqrt(x * x + eps)) << at;
      EXPECT_DOUBLE_EQ(dw_abs, std::fabs(dw)) << at;
    }
  }
}

// A constant row x = c: rrms = 1 / sqrt(c^2 + eps) and sum_j g_j x_j = c * H * mean(g)
// (g = dy * w), so
//   dx_h = rrms * g_h - c * rrms^3 * c * mean(g) = (g_h - c^2 / (c^2 + eps) * mean(g)) / sqrt(c^2 + eps);
// with g constant too this is g * eps / (c^2 + eps)^(3/2), the H = 1 form, whatever H.
TEST(RefBwdClosedForm, ConstantRow) {
  for (std::int64_t H : {3, 17, 128}) {
    const std::vector<double> w = upcast(weight_of<float>(H));
    const std::vector<double> dy = upcast(rows_of<float>(Dist::normal, kSeedDy, 1, H, H));
    for (double c : {1.5, -0.1, 2e-3}) {
      for (double eps : {1e-5, 1e-6}) {
        const std::string at =
            "H = " + std::to_string(H) + ", c = " + std::to_string(c) + ", eps = " + std::to_string(eps);
        const std::vector<double> x(static_cast<std::size_t>(H), c);
        const double rrms = rrms_row(x.data(), H, eps);
        EXPECT_NEAR(rrms, 1.0 / std::sqrt(c * c + eps), 4 * kEps64 * rrms) << at;
        std::vector<double> dx(H), dw(H), dx_scale(H);
        rmsnorm_bwd_row(x.data(), w.data(), dy.data(), H, rrms, {dx.data(), dw.data(), dx_scale.data()});
        double mean_g = 0;
        for (std::int64_t h = 0; h < H; ++h) mean_g += dy[h] * w[h] / static_cast<double>(H);
        for (std::int64_t h = 0; h < H; ++h) {
          const double g = dy[h] * w[h];
          expect_near_scaled(dx[h], (g - c * c / (c * c + eps) * mean_g) / std::sqrt(c * c + eps),
                             dx_scale[h], "dx[" + std::to_string(h) + "] at " + at);
          EXPECT_DOUBLE_EQ(dw[h], dy[h] * c * rrms) << "dw[" << h << "] at " << at;
        }

        const std::vector<double> dy_const(static_cast<std::size_t>(H), -0.5),
            w_const(static_cast<std::size_t>(H), 2.0);
        rmsnorm_bwd_row(x.data(), w_const.data(), dy_const.data(), H, rrms,
                        {dx.data(), nullptr, dx_scale.data()});
        for (std::int64_t h = 0; h < H; ++h)
          expect_near_scaled(dx[h], -1.0 * eps / std::pow(c * c + eps, 1.5), dx_scale[h],
                             "constant g: dx[" + std::to_string(h) + "] at " + at);
      }
    }
  }
}

// A zero row: rrms = 1 / sqrt(eps), the correction vanishes, dx = rrms * dy * w exactly and
// the row adds nothing to dw. For every (x, w) dtype pair.
TEST(RefBwdClosedForm, ZeroRow) {
  for_each_dtype([](auto x_tag) {
    for_each_dtype([](auto w_tag) {
      using T = typename decltype(x_tag)::type;
      using W = typename decltype(w_tag)::type;
      SCOPED_TRACE(dtype_name<T>() + " x, " + dtype_name<W>() + " w");
      constexpr std::int64_t H = 127;
      const std::vector<T> x(H, from_float<T>(0.0f));
      const std::vector<W> w = weight_of<W>(H);
      const std::vector<T> dy = rows_of<T>(Dist::normal, kSeedDy, 1, H, H);
      for (double eps : {1e-5, 1e-6}) {
        const double rrms = rrms_row(x.data(), H, eps);
        EXPECT_EQ(rrms, 1.0 / std::sqrt(eps));
        std::vector<double> dx(H), dw(H, 7.0), dx_scale(H);
        rmsnorm_bwd_row(x.data(), w.data(), dy.data(), H, rrms, {dx.data(), dw.data(), dx_scale.data()});
        for (std::int64_t h = 0; h < H; ++h) {
          const double expected = rrms * (to_double(dy[h]) * to_double(w[h]));
          EXPECT_EQ(dx[h], expected) << "dx[" << h << "]";
          EXPECT_EQ(dx_scale[h], std::fabs(expected)) << "dx_scale[" << h << "]";
          EXPECT_EQ(dw[h], 0.0) << "dw[" << h << "]";
        }
      }
    });
  });
}

// One row's dw is dy * x * rrms, whatever rrms the caller passes (here the saved fp32 value,
// as the kernel reads it), and dw_abs its magnitude; dx_scale bounds |dx|.
TEST(RefBwdClosedForm, SingleRowDwIsDyTimesXTimesRrms) {
  constexpr std::int64_t H = 111;
  for (Dist d : all_dists()) {
    SCOPED_TRACE(std::string(dist_name(d)));
    const std::vector<double> x = upcast(rows_of<float>(d, kSeed, 1, H, H));
    const std::vector<double> w = upcast(weight_of<float>(H));
    const std::vector<double> dy = upcast(rows_of<float>(Dist::normal, kSeedDy, 1, H, H));
    const double saved_rrms = static_cast<float>(rrms_row(x.data(), H, 1e-5));
    std::vector<double> dx(H), dw(H), dx_scale(H), dw_abs(H);
    rmsnorm_bwd_row(x.data(), w.data(), dy.data(), H, saved_rrms,
                    {dx.data(), dw.data(), dx_scale.data(), dw_abs.data()});
    for (std::int64_t h = 0; h < H; ++h) {
      EXPECT_EQ(dw[h], dy[h] * x[h] * saved_rrms) << "dw[" << h << "]";
      EXPECT_EQ(dw_abs[h], std::fabs(dw[h])) << "dw_abs[" << h << "]";
      EXPECT_LE(std::fabs(dx[h]), dx_scale[h] * (1 + 4 * kEps64)) << "dx[" << h << "]";
    }
  }
}

// ---------------------------------------------------------------------------------------
// The fused residual add.

// residual_out is x + r exactly, added in fp64 (1 + 2^-30 is exact in fp64, not in fp32),
// for every (x, r) dtype pair; y and rrms are the forward's on s.
TEST(RefBwdAdd, ResidualOutIsTheExactSum) {
  {
    const float x[2] = {1.0f, -0x1p-30f}, r[2] = {0x1p-30f, 3.0f}, w[2] = {1.0f, 1.0f};
    double y[2], s[2];
    rmsnorm_add_fwd_row(x, r, w, 2, 1e-5, y, s);
    EXPECT_EQ(s[0], 1.0 + 0x1p-30);
    EXPECT_EQ(s[1], 3.0 - 0x1p-30);
  }
  constexpr std::int64_t H = 257;
  for_each_dtype([](auto x_tag) {
    for_each_dtype([](auto r_tag) {
      using T = typename decltype(x_tag)::type;
      using R = typename decltype(r_tag)::type;
      SCOPED_TRACE(dtype_name<T>() + " x, " + dtype_name<R>() + " r");
      for (Dist d : {Dist::normal, Dist::outlier, Dist::tiny}) {
        const std::vector<T> x = rows_of<T>(d, kSeed, 1, H, H);
        const std::vector<R> r = rows_of<R>(d, kSeedR, 1, H, H);
        const std::vector<float> w = weight_of<float>(H);
        std::vector<double> y(H), s(H), expected_s(H), y_of_s(H);
        const double rrms = rmsnorm_add_fwd_row(x.data(), r.data(), w.data(), H, 1e-6, y.data(), s.data());
        for (std::int64_t h = 0; h < H; ++h) expected_s[h] = to_double(x[h]) + to_double(r[h]);
        expect_bitwise_equal(s, expected_s, "s");
        const std::vector<double> wd = upcast(w);
        EXPECT_EQ(rrms, rmsnorm_fwd_row(s.data(), wd.data(), H, 1e-6, y_of_s.data()));
        expect_bitwise_equal(y, y_of_s, "y");
      }
    });
  });
}

// add-bwd's dx is the norm backward's dx at s plus ds_out, exactly; dw is the norm
// backward's; dx_scale adds |ds_out|. Rows with a stride, a zero row among them.
TEST(RefBwdAdd, BackwardIsNormBackwardPlusDsOut) {
  constexpr std::int64_t M = 7, H = 33, stride = 40;
  const std::vector<double> s = upcast(rows_of<float>(Dist::zero_row, kSeed, M, H, stride));
  const std::vector<double> w = upcast(weight_of<float>(H));
  const std::vector<double> dy = upcast(rows_of<float>(Dist::normal, kSeedDy, M, H, stride));
  const std::vector<double> ds = upcast(rows_of<float>(Dist::offset, kSeedDs, M, H, stride));
  std::vector<double> rrms(M);
  for (std::int64_t i = 0; i < M; ++i) rrms[i] = rrms_row(s.data() + i * stride, H, 1e-5);

  const std::size_t n = static_cast<std::size_t>(M * stride);
  std::vector<double> dx_add(n, -1.0), dx_scale_add(n), dw_add(H), dw_abs_add(H);
  std::vector<double> dx_norm(n, -1.0), dx_scale_norm(n), dw_norm(H), dw_abs_norm(H);
  rmsnorm_add_bwd_rows(s.data(), w.data(), dy.data(), ds.data(), rrms.data(), M, H, stride,
                       {dx_add.data(), dw_add.data(), dx_scale_add.data(), dw_abs_add.data()});
  rmsnorm_bwd_rows(s.data(), w.data(), dy.data(), rrms.data(), M, H, stride,
                   {dx_norm.data(), dw_norm.data(), dx_scale_norm.data(), dw_abs_norm.data()});
  std::vector<double> expected_dx = dx_norm, expected_scale = dx_scale_norm;
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t h = 0; h < H; ++h) {
      const std::size_t k = static_cast<std::size_t>(i * stride + h);
      expected_dx[k] = dx_norm[k] + ds[k];
      expected_scale[k] = dx_scale_norm[k] + std::fabs(ds[k]);
    }
  expect_bitwise_equal(dx_add, expected_dx, "dx");  // padding: -1 in both
  expect_bitwise_equal(dx_scale_add, expected_scale, "dx_scale");
  expect_bitwise_equal(dw_add, dw_norm, "dw");
  expect_bitwise_equal(dw_abs_add, dw_abs_norm, "dw_abs");
}

// ---------------------------------------------------------------------------------------
// The *_rows functions: the row functions applied row by row, dw summed in row order,
// padding untouched, bad shapes rejected.

TEST(RefBwdRows, EqualRowByRowAndSumDwOverRows) {
  constexpr std::int64_t M = 5, H = 19, stride = 24;
  const std::vector<double> x = upcast(rows_of<float>(Dist::outlier, kSeed, M, H, stride));
  const std::vector<double> w = upcast(weight_of<float>(H));
  const std::vector<double> dy = upcast(rows_of<float>(Dist::normal, kSeedDy, M, H, stride));
  std::vector<double> rrms(M);
  for (std::int64_t i = 0; i < M; ++i) rrms[i] = static_cast<float>(rrms_row(x.data() + i * stride, H, 1e-6));

  const std::size_t n = static_cast<std::size_t>(M * stride);
  std::vector<double> dx(n, 42.0), dx_scale(n, 42.0), dw(H, 42.0), dw_abs(H, 42.0);
  rmsnorm_bwd_rows(x.data(), w.data(), dy.data(), rrms.data(), M, H, stride,
                   {dx.data(), dw.data(), dx_scale.data(), dw_abs.data()});

  std::vector<double> expected_dx(n, 42.0), expected_scale(n, 42.0), expected_dw(H, 0.0),
      expected_abs(H, 0.0);
  std::vector<double> dw_row(H), dw_abs_row(H);
  for (std::int64_t i = 0; i < M; ++i) {
    rmsnorm_bwd_row(x.data() + i * stride, w.data(), dy.data() + i * stride, H, rrms[i],
                    {expected_dx.data() + i * stride, dw_row.data(), expected_scale.data() + i * stride,
                     dw_abs_row.data()});
    for (std::int64_t h = 0; h < H; ++h) {
      expected_dw[h] += dw_row[h];
      expected_abs[h] += dw_abs_row[h];
    }
  }
  expect_bitwise_equal(dx, expected_dx, "dx");
  expect_bitwise_equal(dx_scale, expected_scale, "dx_scale");
  expect_bitwise_equal(dw, expected_dw, "dw");
  expect_bitwise_equal(dw_abs, expected_abs, "dw_abs");
  for (std::int64_t h = 0; h < H; ++h) EXPECT_LE(std::fabs(dw[h]), dw_abs[h]) << "column " << h;

  // dw alone, without dx: the same sums.
  std::vector<double> dw_only(H, 42.0);
  rmsnorm_bwd_rows(x.data(), w.data(), dy.data(), rrms.data(), M, H, stride, {nullptr, dw_only.data()});
  expect_bitwise_equal(dw_only, expected_dw, "dw without dx");
}

TEST(RefBwdRows, NoRowsGiveZeroDw) {
  const float x = 1.0f, w = 1.0f, dy = 1.0f;
  double dw = 42.0, dw_abs = 42.0;
  rmsnorm_bwd_rows(&x, &w, &dy, nullptr, 0, 1, 1, {nullptr, &dw, nullptr, &dw_abs});
  EXPECT_EQ(dw, 0.0);
  EXPECT_EQ(dw_abs, 0.0);
  rmsnorm_add_bwd_rows(&x, &w, &dy, &dy, nullptr, 0, 1, 1, {nullptr, &dw});
  EXPECT_EQ(dw, 0.0);
}

TEST(RefBwdRows, RejectBadShapes) {
  const float v[4] = {1, 2, 3, 4};
  const double rrms[2] = {1, 1};
  double out[8];
  const BwdOut o{out, out + 4};
  EXPECT_THROW(rmsnorm_bwd_row(v, v, v, 0, 1.0, o), std::invalid_argument);
  EXPECT_THROW(rmsnorm_bwd_rows(v, v, v, rrms, 1, 0, 1, o), std::invalid_argument);
  EXPECT_THROW(rmsnorm_bwd_rows(v, v, v, rrms, -1, 2, 2, o), std::invalid_argument);
  EXPECT_THROW(rmsnorm_bwd_rows(v, v, v, rrms, 2, 2, 1, o), std::invalid_argument);
  EXPECT_THROW(rrms_row(v, 0, 1e-5), std::invalid_argument);
  double y[2], s[2];
  EXPECT_THROW(rmsnorm_add_fwd_row(v, v, v, 0, 1e-5, y, s), std::invalid_argument);
  EXPECT_THROW(rmsnorm_add_bwd_row(v, v, v, v, 0, 1.0, o), std::invalid_argument);
  EXPECT_THROW(rmsnorm_add_bwd_rows(v, v, v, v, rrms, 2, 2, 1, o), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------
// Storage types: every instantiation gives bitwise the results of the all-double path on
// the same (exactly upcast) values.

template <class T, class W>
void check_bwd_storage_against_double() {
  SCOPED_TRACE(dtype_name<T>() + " x/dy, " + dtype_name<W>() + " w");
  constexpr std::int64_t M = 6, H = 45, stride = 48;
  constexpr double eps = 1e-5;
  const std::vector<T> x = rows_of<T>(Dist::zero_row, kSeed, M, H, stride);
  const std::vector<T> dy = rows_of<T>(Dist::normal, kSeedDy, M, H, stride);
  const std::vector<W> w = weight_of<W>(H);
  const std::vector<double> xd = upcast(x), dyd = upcast(dy), wd = upcast(w);

  std::vector<double> rrms(M), rrms_d(M);
  for (std::int64_t i = 0; i < M; ++i) {
    rrms[i] = rrms_row(x.data() + i * stride, H, eps);
    rrms_d[i] = rrms_row(xd.data() + i * stride, H, eps);
  }
  expect_bitwise_equal(rrms, rrms_d, "rrms");

  std::vector<double> y(H), y_d(H);
  EXPECT_EQ(rmsnorm_fwd_row(x.data(), w.data(), H, eps, y.data()),
            rmsnorm_fwd_row(xd.data(), wd.data(), H, eps, y_d.data()));
  expect_bitwise_equal(y, y_d, "forward y");

  const std::size_t n = static_cast<std::size_t>(M * stride);
  std::vector<double> dx(n), dx_d(n), sc(n), sc_d(n), dw(H), dw_d(H), ab(H), ab_d(H);
  rmsnorm_bwd_rows(x.data(), w.data(), dy.data(), rrms.data(), M, H, stride,
                   {dx.data(), dw.data(), sc.data(), ab.data()});
  rmsnorm_bwd_rows(xd.data(), wd.data(), dyd.data(), rrms.data(), M, H, stride,
                   {dx_d.data(), dw_d.data(), sc_d.data(), ab_d.data()});
  expect_bitwise_equal(dx, dx_d, "dx");
  expect_bitwise_equal(dw, dw_d, "dw");
  expect_bitwise_equal(sc, sc_d, "dx_scale");
  expect_bitwise_equal(ab, ab_d, "dw_abs");

  rmsnorm_bwd_row(x.data() + stride, w.data(), dy.data() + stride, H, rrms[1], {dx.data(), dw.data()});
  rmsnorm_bwd_row(xd.data() + stride, wd.data(), dyd.data() + stride, H, rrms[1], {dx_d.data(), dw_d.data()});
  expect_bitwise_equal(dx, dx_d, "one row: dx");
  expect_bitwise_equal(dw, dw_d, "one row: dw");
}

template <class T, class R, class W>
void check_add_storage_against_double() {
  SCOPED_TRACE(dtype_name<T>() + " x/dy, " + dtype_name<R>() + " r/s/ds_out, " + dtype_name<W>() + " w");
  constexpr std::int64_t M = 3, H = 29, stride = 31;
  constexpr double eps = 1e-6;
  const std::vector<T> x = rows_of<T>(Dist::offset, kSeed, M, H, stride);
  const std::vector<R> r = rows_of<R>(Dist::outlier, kSeedR, M, H, stride);
  const std::vector<T> dy = rows_of<T>(Dist::normal, kSeedDy, M, H, stride);
  const std::vector<R> ds = rows_of<R>(Dist::normal, kSeedDs, M, H, stride);
  const std::vector<W> w = weight_of<W>(H);
  const std::vector<double> xd = upcast(x), rd = upcast(r), dyd = upcast(dy), dsd = upcast(ds),
                            wd = upcast(w);

  const std::size_t n = static_cast<std::size_t>(M * stride);
  std::vector<double> y(n), y_d(n), s(n), s_d(n), rrms(M), rrms_d(M);
  for (std::int64_t i = 0; i < M; ++i) {
    const std::int64_t o = i * stride;
    rrms[i] = rmsnorm_add_fwd_row(x.data() + o, r.data() + o, w.data(), H, eps, y.data() + o, s.data() + o);
    rrms_d[i] =
        rmsnorm_add_fwd_row(xd.data() + o, rd.data() + o, wd.data(), H, eps, y_d.data() + o, s_d.data() + o);
  }
  expect_bitwise_equal(y, y_d, "y");
  expect_bitwise_equal(s, s_d, "s");
  expect_bitwise_equal(rrms, rrms_d, "rrms");

  // The backward reads s in the residual dtype: the exact sum rounded to R, as stored.
  std::vector<R> s_stored(n, from_float<R>(0.0f));
  std::transform(s.begin(), s.end(), s_stored.begin(),
                 [](double v) { return from_float<R>(static_cast<float>(v)); });
  const std::vector<double> s_stored_d = upcast(s_stored);
  std::vector<double> dx(n), dx_d(n), sc(n), sc_d(n), dw(H), dw_d(H), ab(H), ab_d(H);
  rmsnorm_add_bwd_rows(s_stored.data(), w.data(), dy.data(), ds.data(), rrms.data(), M, H, stride,
                       {dx.data(), dw.data(), sc.data(), ab.data()});
  rmsnorm_add_bwd_rows(s_stored_d.data(), wd.data(), dyd.data(), dsd.data(), rrms.data(), M, H, stride,
                       {dx_d.data(), dw_d.data(), sc_d.data(), ab_d.data()});
  expect_bitwise_equal(dx, dx_d, "dx");
  expect_bitwise_equal(dw, dw_d, "dw");
  expect_bitwise_equal(sc, sc_d, "dx_scale");
  expect_bitwise_equal(ab, ab_d, "dw_abs");
}

TEST(RefBwdStorage, BackwardMatchesDoublePathForEveryDtypePair) {
  for_each_dtype([](auto x_tag) {
    for_each_dtype([](auto w_tag) {
      check_bwd_storage_against_double<typename decltype(x_tag)::type, typename decltype(w_tag)::type>();
    });
  });
}

TEST(RefBwdStorage, AddMatchesDoublePathForEveryDtypeTriple) {
  for_each_dtype([](auto x_tag) {
    for_each_dtype([](auto r_tag) {
      for_each_dtype([](auto w_tag) {
        check_add_storage_against_double<typename decltype(x_tag)::type, typename decltype(r_tag)::type,
                                         typename decltype(w_tag)::type>();
      });
    });
  });
}

}  // namespace
}  // namespace rb::ref

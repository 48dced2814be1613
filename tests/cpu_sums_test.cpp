// kernels/strided_sum.h on the host: the same fp32 arithmetic the kernels run (without the
// device's fused multiply-adds, which only round less).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/strided_sum.h"

namespace rb::kern {
namespace {

// Each c of first, first + step, ... < n is summed once, and no other: the rounds' bounds.
TEST(StridedSum, VisitsEachStridedTermOnce) {
  for (const std::int64_t n : {0, 1, 63, 64, 65, 1000, 64 * 256 + 7}) {
    for (const std::int64_t first : {0, 3}) {
      for (const std::int64_t step : {1, 5, 256}) {
        std::vector<int> seen(static_cast<std::size_t>(n), 0);
        const float count = strided_sum(first, n, step, [&](std::int64_t c) {
          ++seen[static_cast<std::size_t>(c)];
          return 1.f;
        });
        std::int64_t want = 0;
        for (std::int64_t c = 0; c < n; ++c) {
          const bool on = c >= first && (c - first) % step == 0;
          want += on;
          EXPECT_EQ(seen[static_cast<std::size_t>(c)], on ? 1 : 0) << "n=" << n << " first=" << first << " step=" << step << " c=" << c;
        }
        EXPECT_EQ(count, static_cast<float>(want)) << "n=" << n << " first=" << first << " step=" << step;
      }
    }
  }
}

// A thread's squares of a row of 6.7e7 normal columns at 256 threads (262144 terms): one
// running fp32 sum drifts past the rrms tolerance's 1e-5 (6.9e-5 relative with this data);
// the sum in rounds stays well under (5.9e-7).
TEST(StridedSum, KeepsLongRowsSumsWithinTheTolerance) {
  const std::int64_t n = 262144;
  std::mt19937 gen(7);
  std::normal_distribution<float> normal;
  std::vector<float> x(static_cast<std::size_t>(n));
  for (float& v : x) v = normal(gen);
  double exact = 0;
  float running = 0.f;
  for (const float v : x) {
    exact += static_cast<double>(v) * v;
    running += v * v;
  }
  const float rounds = strided_sum(0, n, 1, [&](std::int64_t c) {
    const float v = x[static_cast<std::size_t>(c)];
    return v * v;
  });
  const double running_err = std::fabs(running - exact) / exact;
  const double rounds_err = std::fabs(rounds - exact) / exact;
  EXPECT_GT(running_err, 5e-6) << "the single running sum: the case this guards against";
  EXPECT_LT(rounds_err, 1e-6) << "in rounds";
  EXPECT_LT(rounds_err * 8, running_err) << "rounds " << rounds_err << " against running " << running_err;
}

}  // namespace
}  // namespace rb::kern

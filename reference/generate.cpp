// Input generators. Each row draws from its own counter-based stream (splitmix64 keyed by a
// hash of seed, purpose and row), so a row's values depend on (seed, dist, row) alone and
// rows can be generated in any order, on any thread. Normals come from Box-Muller, not
// std::normal_distribution, whose algorithm differs between standard libraries.
#include "reference/generate.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>

namespace rb::ref {
namespace {

constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ull;

// Stream constants: one per purpose, so x, the weight and the outlier columns never share
// draws.
constexpr std::uint64_t kStreamX = 0x78A4F1C3D2E5B607ull;
constexpr std::uint64_t kStreamWeight = 0x57E16D0B9A3C4F21ull;
constexpr std::uint64_t kStreamOutlierCols = 0x0C71E25A6B8D9F43ull;

constexpr double kLargeScale = 300.0;
constexpr double kTinyScale = 1e-3;
constexpr double kOffsetMean = 3.0;
constexpr double kOutlierScale = 1000.0;
constexpr int kOutliersPerRow = 3;
constexpr double kWeightSpread = 0.5;

std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

class SplitMix64 {
 public:
  SplitMix64(std::uint64_t seed, std::uint64_t stream, std::int64_t row)
      : state_(mix64(mix64(seed ^ stream) + static_cast<std::uint64_t>(row) * kGolden)) {}

  std::uint64_t next() {
    state_ += kGolden;
    return mix64(state_);
  }

  // Uniform in (0, 1]: never 0, so log() in Box-Muller stays finite.
  double uniform_open0() { return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53; }

 private:
  std::uint64_t state_;
};

// Standard normals, two per Box-Muller step. |z| <= sqrt(-2 ln 2^-53) < 8.6.
class NormalStream {
 public:
  NormalStream(std::uint64_t seed, std::uint64_t stream, std::int64_t row) : rng_(seed, stream, row) {}

  double next() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    constexpr double kTwoPi = 6.283185307179586476925286766559;
    const double radius = std::sqrt(-2.0 * std::log(rng_.uniform_open0()));
    const double angle = kTwoPi * rng_.uniform_open0();
    spare_ = radius * std::sin(angle);
    has_spare_ = true;
    return radius * std::cos(angle);
  }

 private:
  SplitMix64 rng_;
  double spare_ = 0.0;
  bool has_spare_ = false;
};

template <class T>
T store(double v) {
  return from_float<T>(static_cast<float>(v));
}

void check_shape(std::int64_t H, const char* who) {
  if (H < 1) throw std::invalid_argument(std::string(who) + ": H must be >= 1, got " + std::to_string(H));
}

// Distinct, row-dependent columns for the outlier distribution (all columns when H is small).
struct OutlierColumns {
  std::array<std::int64_t, kOutliersPerRow> cols{};
  int count = 0;

  bool contains(std::int64_t c) const {
    return std::find(cols.begin(), cols.begin() + count, c) != cols.begin() + count;
  }
};

OutlierColumns pick_outlier_columns(std::uint64_t seed, std::int64_t row, std::int64_t H) {
  OutlierColumns picked;
  const int wanted = static_cast<int>(std::min<std::int64_t>(kOutliersPerRow, H));
  SplitMix64 rng(seed, kStreamOutlierCols, row);
  while (picked.count < wanted) {
    const auto c = static_cast<std::int64_t>(rng.next() % static_cast<std::uint64_t>(H));
    if (!picked.contains(c)) picked.cols[picked.count++] = c;
  }
  return picked;
}

}  // namespace

bool is_zero_row(std::int64_t row) { return row % 5 == 1; }

template <class T>
void generate_row(Dist d, std::uint64_t seed, std::int64_t row, std::int64_t H, T* out) {
  check_shape(H, "generate_row");
  if (d == Dist::zero_row && is_zero_row(row)) {
    std::fill(out, out + H, store<T>(0.0));
    return;
  }
  // Every distribution transforms the same N(0, 1) draws, so they differ only by design.
  NormalStream normal(seed, kStreamX, row);
  switch (d) {
    case Dist::normal:
    case Dist::zero_row:
      for (std::int64_t c = 0; c < H; ++c) out[c] = store<T>(normal.next());
      return;
    case Dist::large:
      for (std::int64_t c = 0; c < H; ++c) out[c] = store<T>(kLargeScale * normal.next());
      return;
    case Dist::tiny:
      for (std::int64_t c = 0; c < H; ++c) out[c] = store<T>(kTinyScale * normal.next());
      return;
    case Dist::offset:
      for (std::int64_t c = 0; c < H; ++c) out[c] = store<T>(kOffsetMean + normal.next());
      return;
    case Dist::outlier: {
      const OutlierColumns outliers = pick_outlier_columns(seed, row, H);
      for (std::int64_t c = 0; c < H; ++c) {
        const double z = normal.next();
        const double v =
            outliers.contains(c) ? kOutlierScale * std::copysign(std::max(std::fabs(z), 1.0), z) : z;
        out[c] = store<T>(v);
      }
      return;
    }
  }
  throw std::invalid_argument("generate_row: unknown Dist value " + std::to_string(static_cast<int>(d)));
}

template <class T>
void generate_rows(Dist d, std::uint64_t seed, std::int64_t M, std::int64_t H, std::int64_t stride, T* out) {
  check_shape(H, "generate_rows");
  if (M < 0) throw std::invalid_argument("generate_rows: M must be >= 0, got " + std::to_string(M));
  if (stride < H)
    throw std::invalid_argument("generate_rows: stride " + std::to_string(stride) + " < H " +
                                std::to_string(H));
  // Checked here: an exception thrown on a worker thread would terminate the process.
  if (std::find(all_dists().begin(), all_dists().end(), d) == all_dists().end())
    throw std::invalid_argument("generate_rows: unknown Dist value " + std::to_string(static_cast<int>(d)));

  auto fill_block = [=](std::int64_t first, std::int64_t last) {
    for (std::int64_t r = first; r < last; ++r) generate_row(d, seed, r, H, out + r * stride);
  };

  // Threads only pay off once a block holds real work; tiny inputs stay on this thread.
  constexpr std::int64_t kMinElementsPerThread = 1 << 14;
  const std::int64_t cores = std::max<std::int64_t>(1, std::thread::hardware_concurrency());
  const std::int64_t by_work = std::max<std::int64_t>(1, (M * H) / kMinElementsPerThread);
  const std::int64_t n_threads = std::min({cores, by_work, std::max<std::int64_t>(M, 1)});
  if (n_threads <= 1) {
    fill_block(0, M);
    return;
  }

  std::vector<std::thread> workers;
  workers.reserve(static_cast<std::size_t>(n_threads - 1));
  const std::int64_t rows_per_thread = M / n_threads;
  const std::int64_t extra_rows = M % n_threads;  // the first `extra_rows` blocks get one more
  auto block_begin = [&](std::int64_t t) { return t * rows_per_thread + std::min(t, extra_rows); };
  try {
    for (std::int64_t t = 1; t < n_threads; ++t)
      workers.emplace_back(fill_block, block_begin(t), block_begin(t + 1));
  } catch (...) {
    for (auto& w : workers) w.join();
    throw;
  }
  fill_block(block_begin(0), block_begin(1));
  for (auto& w : workers) w.join();
}

template <class T>
void generate_weight(std::uint64_t seed, std::int64_t H, T* out, bool offset) {
  check_shape(H, "generate_weight");
  NormalStream normal(seed, kStreamWeight, 0);
  const double base = offset ? 0.0 : 1.0;
  for (std::int64_t c = 0; c < H; ++c) out[c] = store<T>(base + kWeightSpread * normal.next());
}

#define RB_INSTANTIATE_GENERATORS(T)                                                                 \
  template void generate_row<T>(Dist, std::uint64_t, std::int64_t, std::int64_t, T*);                \
  template void generate_rows<T>(Dist, std::uint64_t, std::int64_t, std::int64_t, std::int64_t, T*); \
  template void generate_weight<T>(std::uint64_t, std::int64_t, T*, bool);

RB_INSTANTIATE_GENERATORS(float)
RB_INSTANTIATE_GENERATORS(half)
RB_INSTANTIATE_GENERATORS(bfloat16)
RB_INSTANTIATE_GENERATORS(fp8_e4m3)
RB_INSTANTIATE_GENERATORS(fp8_e5m2)
#undef RB_INSTANTIATE_GENERATORS

}  // namespace rb::ref

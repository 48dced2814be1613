#include "app/lists.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "core/unique.h"

namespace rb {

namespace {

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

// A decimal integer, checked in int64 (a value beyond it is out of range, not "not an
// integer").
std::int64_t parse_int(const std::string& s, std::int64_t min_value, std::int64_t max_value = kInt64Max) {
  const std::string range = max_value == kInt64Max ? fmt::format("an integer >= {}", min_value)
                                                   : fmt::format("an integer from {} to {}", min_value, max_value);
  std::int64_t v = 0;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, v);
  if (s.empty() || p != end || (ec != std::errc() && ec != std::errc::result_out_of_range))
    throw std::invalid_argument(fmt::format("'{}' is not an integer (expected {})", s, range));
  if (ec == std::errc::result_out_of_range)
    throw std::invalid_argument(fmt::format("'{}' is out of range (expected {})", s, range));
  if (v < min_value) throw std::invalid_argument(fmt::format("'{}' is below the minimum {} (expected {})", s, min_value, range));
  if (v > max_value) throw std::invalid_argument(fmt::format("'{}' is above the maximum {} (expected {})", s, max_value, range));
  return v;
}

struct Range {
  std::int64_t start = 0, stop = 0, step = 0;
  bool geometric = false;
};

std::string range_form() { return "START:STOP:xFACTOR or START:STOP:+STEP"; }

// Parses "START:STOP:xK" / "START:STOP:+K"; false when item is a single number.
bool parse_range(const std::string& item, std::int64_t min_value, Range& r) {
  const auto c1 = item.find(':');
  if (c1 == std::string::npos) return false;
  const auto c2 = item.find(':', c1 + 1);
  if (c2 == std::string::npos || item.find(':', c2 + 1) != std::string::npos)
    throw std::invalid_argument("range '" + item + "' must be " + range_form());
  try {
    r.start = parse_int(item.substr(0, c1), min_value);
    r.stop = parse_int(item.substr(c1 + 1, c2 - c1 - 1), min_value);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("range '" + item + "': " + e.what());
  }
  const std::string step = item.substr(c2 + 1);
  if (r.stop < r.start) throw std::invalid_argument("range '" + item + "' ends before it starts");
  if (step.size() < 2 || (step[0] != 'x' && step[0] != '+'))
    throw std::invalid_argument("range '" + item + "': step '" + step + "' must be xFACTOR or +STEP");
  r.geometric = step[0] == 'x';
  try {
    r.step = parse_int(step.substr(1), r.geometric ? 2 : 1);
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument("range '" + item + "': step '" + step + "' must be " +
                                (r.geometric ? "a whole factor >= 2" : "a whole step >= 1"));
  }
  // 0 (or less) times a factor never grows: such a range would never reach its end.
  if (r.geometric && r.start < 1)
    throw std::invalid_argument("range '" + item + "': a geometric range (xFACTOR) must start at 1 or more");
  return true;
}

// The values a range stands for, counted without expanding it (unsigned: stop - start
// cannot overflow for any min_value).
std::uint64_t range_count(const Range& r) {
  if (!r.geometric)
    return (static_cast<std::uint64_t>(r.stop) - static_cast<std::uint64_t>(r.start)) /
               static_cast<std::uint64_t>(r.step) + 1;
  std::uint64_t n = 1;
  for (std::int64_t v = r.start, next = 0; !__builtin_mul_overflow(v, r.step, &next) && next <= r.stop; v = next)
    ++n;  // at most 63 steps: the factor is at least 2
  return n;
}

}  // namespace

std::int64_t count_int_item(const std::string& item, std::int64_t min_value) {
  Range r;
  if (!parse_range(item, min_value, r)) {
    parse_int(item, min_value);
    return 1;
  }
  const std::uint64_t n = range_count(r);
  if (n > static_cast<std::uint64_t>(kMaxRangeItems))
    throw std::invalid_argument(
        fmt::format("range '{}' has {} values, more than the {} one range may hold", item, n, kMaxRangeItems));
  return static_cast<std::int64_t>(n);
}

std::vector<std::int64_t> parse_int_item(const std::string& item, std::int64_t min_value) {
  const std::int64_t n = count_int_item(item, min_value);
  Range r;
  if (!parse_range(item, min_value, r)) return {parse_int(item, min_value)};
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(n));
  for (std::int64_t v = r.start;;) {
    out.push_back(v);
    std::int64_t next = 0;
    const bool overflow = r.geometric ? __builtin_mul_overflow(v, r.step, &next) : __builtin_add_overflow(v, r.step, &next);
    if (overflow || next > r.stop) break;
    v = next;
  }
  return out;
}

std::vector<std::int64_t> parse_int_list(const std::string& list, std::int64_t min_value) {
  UniqueList<std::int64_t> out;
  std::size_t pos = 0;
  while (true) {
    const auto comma = list.find(',', pos);
    const std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    for (std::int64_t v : parse_int_item(item, min_value)) out.add(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return std::move(out).take();
}

ShardSpec parse_shard(const std::string& s) {
  const std::string form = fmt::format("I/N, 0 <= I < N <= {} (e.g. 0/4)", kMaxShards);
  const auto slash = s.find('/');
  if (slash == std::string::npos) throw std::invalid_argument(fmt::format("'{}' must be {}", s, form));
  std::int64_t index = 0, count = 0;
  try {
    index = parse_int(s.substr(0, slash), 0, kMaxShards - 1);
    count = parse_int(s.substr(slash + 1), 1, kMaxShards);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("'{}': {}; must be {}", s, e.what(), form));
  }
  if (index >= count)
    throw std::invalid_argument(
        fmt::format("'{}': shard index must be below the shard count (0-based); must be {}", s, form));
  return {static_cast<int>(index), static_cast<int>(count)};
}

namespace {

// strtod over the whole string: the value, or throws naming what is expected.
double parse_double(const std::string& s, const std::string& expected) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0])) || end != s.c_str() + s.size())
    throw std::invalid_argument(fmt::format("'{}' is not a number (expected {})", s, expected));
  if (errno == ERANGE && std::fabs(v) > 1)
    throw std::invalid_argument(fmt::format("'{}' is too large for a double (expected {})", s, expected));
  if (errno == ERANGE && v == 0 && s.find_first_of("123456789") != std::string::npos)
    throw std::invalid_argument(fmt::format("'{}' is too small for a double (expected {})", s, expected));
  if (!std::isfinite(v)) throw std::invalid_argument(fmt::format("'{}' is not finite (expected {})", s, expected));
  return v;
}

}  // namespace

double parse_positive_double(const std::string& s) {
  // The kernels take eps and the fp8 scale as fp32 while the fp64 reference keeps the double:
  // a value fp32 rounds to 0 or inf (eps 1e-50, a scale of 1e39), or to a subnormal that
  // flush-to-zero may drop, would have a right kernel fail against the reference.
  const std::string expected = fmt::format("a finite number > 0 that fp32 holds as a normal number, {:g} to {:g}",
                                           static_cast<double>(std::numeric_limits<float>::min()),
                                           static_cast<double>(std::numeric_limits<float>::max()));
  const double v = parse_double(s, expected);
  if (!(v >= std::numeric_limits<float>::min() && v <= std::numeric_limits<float>::max()))
    throw std::invalid_argument(fmt::format("'{}' is out of range (expected {})", s, expected));
  return v;
}

double parse_double_in(const std::string& s, double lo, double hi) {
  const std::string expected = fmt::format("a finite number from {:g} to {:g}", lo, hi);
  const double v = parse_double(s, expected);
  if (v < lo || v > hi) throw std::invalid_argument(fmt::format("'{}' is out of range (expected {})", s, expected));
  return v;
}

std::int64_t parse_int_in(const std::string& s, std::int64_t lo, std::int64_t hi) { return parse_int(s, lo, hi); }

std::uint64_t parse_seed(const std::string& s) {
  const std::string expected = "an integer from 0 to 18446744073709551615, decimal or 0x hexadecimal";
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  const char* begin = s.data() + (hex ? 2 : 0);
  const char* end = s.data() + s.size();
  std::uint64_t v = 0;
  // from_chars for unsigned refuses a leading '-' (no silent wrap of -1 to 2^64 - 1).
  auto [p, ec] = std::from_chars(begin, end, v, hex ? 16 : 10);
  if (s.empty() || p != end || (ec != std::errc() && ec != std::errc::result_out_of_range))
    throw std::invalid_argument(fmt::format("'{}' is not {}", s, expected));
  if (ec == std::errc::result_out_of_range)
    throw std::invalid_argument(fmt::format("'{}' is out of range (expected {})", s, expected));
  return v;
}

std::int64_t parse_bytes(const std::string& s) {
  const std::string expected =
      "bytes: a whole number from 1 to 9223372036854775807, optionally with a suffix K, M, G or T (powers of "
      "1024), e.g. 8G";
  std::string digits = s;
  int shift = 0;
  if (!digits.empty()) {
    switch (std::toupper(static_cast<unsigned char>(digits.back()))) {
      case 'K': shift = 10; break;
      case 'M': shift = 20; break;
      case 'G': shift = 30; break;
      case 'T': shift = 40; break;
      default: break;
    }
    if (shift) digits.pop_back();
  }
  std::int64_t v = 0;
  const char* end = digits.data() + digits.size();
  auto [p, ec] = std::from_chars(digits.data(), end, v);
  if (digits.empty() || p != end || (ec != std::errc() && ec != std::errc::result_out_of_range))
    throw std::invalid_argument(fmt::format("'{}' is not {}", s, expected));
  if (ec == std::errc::result_out_of_range || v < 1 || v > (kInt64Max >> shift))
    throw std::invalid_argument(fmt::format("'{}' is out of range (expected {})", s, expected));
  return v << shift;
}

}  // namespace rb

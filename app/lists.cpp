#include "app/lists.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace rb {

namespace {

std::int64_t parse_int(const std::string& s, std::int64_t min_value) {
  std::int64_t v = 0;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, v);
  if (s.empty() || ec != std::errc() || p != end) throw std::invalid_argument("'" + s + "' is not an integer");
  if (v < min_value) throw std::invalid_argument("'" + s + "' is below the minimum " + std::to_string(min_value));
  return v;
}

constexpr std::size_t kMaxItems = 100000;

}  // namespace

std::vector<std::int64_t> parse_int_item(const std::string& item, std::int64_t min_value) {
  const auto c1 = item.find(':');
  if (c1 == std::string::npos) return {parse_int(item, min_value)};
  const auto c2 = item.find(':', c1 + 1);
  if (c2 == std::string::npos || item.find(':', c2 + 1) != std::string::npos)
    throw std::invalid_argument("range '" + item + "' must be START:STOP:xFACTOR or START:STOP:+STEP");
  const std::int64_t start = parse_int(item.substr(0, c1), min_value);
  const std::int64_t stop = parse_int(item.substr(c1 + 1, c2 - c1 - 1), min_value);
  const std::string step = item.substr(c2 + 1);
  if (stop < start) throw std::invalid_argument("range '" + item + "' ends before it starts");
  if (step.size() < 2 || (step[0] != 'x' && step[0] != '+'))
    throw std::invalid_argument("range '" + item + "': step '" + step + "' must be xFACTOR or +STEP");
  const bool geometric = step[0] == 'x';
  std::int64_t k = 0;
  try {
    k = parse_int(step.substr(1), geometric ? 2 : 1);
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument("range '" + item + "': step '" + step + "' must be " +
                                (geometric ? "a whole factor >= 2" : "a whole step >= 1"));
  }
  std::vector<std::int64_t> out;
  for (std::int64_t v = start;;) {
    out.push_back(v);
    if (out.size() > kMaxItems) throw std::invalid_argument("range '" + item + "' has too many values");
    std::int64_t next = 0;
    const bool overflow = geometric ? __builtin_mul_overflow(v, k, &next) : __builtin_add_overflow(v, k, &next);
    if (overflow || next > stop) break;
    v = next;
  }
  return out;
}

std::vector<std::int64_t> parse_int_list(const std::string& list, std::int64_t min_value) {
  std::vector<std::int64_t> out;
  std::size_t pos = 0;
  while (true) {
    const auto comma = list.find(',', pos);
    const std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    for (std::int64_t v : parse_int_item(item, min_value))
      if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

ShardSpec parse_shard(const std::string& s) {
  const auto slash = s.find('/');
  if (slash == std::string::npos) throw std::invalid_argument("'" + s + "' must be I/N (e.g. 0/4)");
  ShardSpec sh;
  sh.index = static_cast<int>(parse_int(s.substr(0, slash), 0));
  sh.count = static_cast<int>(parse_int(s.substr(slash + 1), 1));
  if (sh.count > 100000) throw std::invalid_argument("'" + s + "': at most 100000 shards");
  if (sh.index >= sh.count)
    throw std::invalid_argument("'" + s + "': shard index must be below the shard count (0-based)");
  return sh;
}

double parse_positive_double(const std::string& s) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE)
    throw std::invalid_argument("'" + s + "' is not a number");
  if (!std::isfinite(v) || v <= 0) throw std::invalid_argument("'" + s + "' must be finite and > 0");
  return v;
}

}  // namespace rb

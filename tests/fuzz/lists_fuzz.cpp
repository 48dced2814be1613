// libFuzzer target: the list and range parsers of app/lists.h (--H, --M, --eps, --shard).
// The first byte picks the parser, the rest is the option text. Each parser either throws
// std::invalid_argument or returns values within its contract, checked here independently
// of its code: parse_int_item: values >= the minimum, strictly increasing, a plain number read
// back exactly, a range starting at START and ending at or below STOP, at most 100000 values;
// parse_shard: I and N are the text's numbers, 0 <= I < N <= 100000; parse_positive_double:
// within fp32's normal range. Anything else (a crash, another exception, a value outside the contract)
// aborts. Built by scripts/fuzz.sh.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/lists.h"

namespace {

[[noreturn]] void fail(const std::string& input, const std::string& what) {
  std::fprintf(stderr, "lists_fuzz: '%s': %s\n", input.c_str(), what.c_str());
  std::abort();
}

// The decimal integer `s` spells ("-"? digits), exactly, or nullopt when it is not one or
// leaves the int64 range. Independent of the parser under test.
std::optional<__int128> decimal(const std::string& s) {
  std::size_t i = s.size() > 0 && s[0] == '-' ? 1 : 0;
  if (i == s.size()) return std::nullopt;
  __int128 v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    v = v * 10 + (s[i] - '0');
    if (v > (static_cast<__int128>(1) << 64)) return std::nullopt;
  }
  return s[0] == '-' ? -v : v;
}

template <typename F>
bool refuses(const std::string& input, F&& parse) {
  try {
    parse();
  } catch (const std::invalid_argument&) {
    return true;
  } catch (const std::exception& e) {
    fail(input, std::string("an exception other than std::invalid_argument: ") + e.what());
  } catch (...) {
    fail(input, "a non-std exception");
  }
  return false;
}

void check_int_item(const std::string& s, std::int64_t min) {
  std::vector<std::int64_t> v;
  if (refuses(s, [&] { v = rb::parse_int_item(s, min); })) return;
  if (v.empty() || v.size() > 100000) fail(s, "returned " + std::to_string(v.size()) + " values");
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] < min) fail(s, "value " + std::to_string(v[i]) + " below the minimum " + std::to_string(min));
    if (i > 0 && v[i] <= v[i - 1]) fail(s, "values not increasing");
  }
  const std::size_t c1 = s.find(':');
  if (c1 == std::string::npos) {
    const auto want = decimal(s);
    if (v.size() != 1 || !want || *want != v[0]) fail(s, "a plain number read as " + std::to_string(v[0]));
    return;
  }
  const std::size_t c2 = s.find(':', c1 + 1);
  const auto start = decimal(s.substr(0, c1));
  const auto stop = decimal(s.substr(c1 + 1, c2 - c1 - 1));
  if (!start || !stop || *start != v.front() || v.back() > *stop) fail(s, "range values outside START..STOP");
}

void check_shard(const std::string& s) {
  rb::ShardSpec sh;
  if (refuses(s, [&] { sh = rb::parse_shard(s); })) return;
  if (sh.index < 0 || sh.count < 1 || sh.index >= sh.count || sh.count > 100000) {
    fail(s, "shard " + std::to_string(sh.index) + "/" + std::to_string(sh.count) + " outside 0 <= I < N <= 100000");
  }
  const std::size_t slash = s.find('/');
  const auto index = decimal(s.substr(0, slash));
  const auto count = decimal(s.substr(slash + 1));
  if (!index || !count || *index != sh.index || *count != sh.count) {
    fail(s, "read as shard " + std::to_string(sh.index) + "/" + std::to_string(sh.count) + ", not the text's numbers");
  }
}

void check_positive_double(const std::string& s) {
  double v = 0;
  if (refuses(s, [&] { v = rb::parse_positive_double(s); })) return;
  if (!(v >= std::numeric_limits<float>::min() && v <= std::numeric_limits<float>::max()))
    fail(s, "returned " + std::to_string(v));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0 || size > 256) return 0;  // option values are short; longer adds nothing
  const std::string s(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 5) {
    case 0: check_int_item(s, 1); break;  // --H, --M
    case 1: check_int_item(s, 0); break;
    case 2: check_int_item(s, 4097); break;
    case 3: check_shard(s); break;
    default: check_positive_double(s); break;
  }
  return 0;
}

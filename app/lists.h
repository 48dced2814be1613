// Parsing of the sweep's numeric options, each checked in a wide type before it is narrowed:
// lists for --H and --M ("4096", "1024,4096,4097", ranges "1024:16384:x2" (geometric, factor 2)
// and "128:1024:+128" (arithmetic)), shards, seeds, byte counts, bounded reals. Every refusal
// throws std::invalid_argument with a message that says the accepted form and its limits
// (CLI11 prefixes the option's name).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rb {

// The most values one range item may expand to; larger ranges are refused before expanding.
constexpr std::int64_t kMaxRangeItems = 100000;

// How many values one item (a number or a range) stands for, counted without expanding it.
// Throws as parse_int_item does, and when a range holds more than kMaxRangeItems values.
std::int64_t count_int_item(const std::string& item, std::int64_t min_value);

// Expands one item (a number or a range) after counting it. Throws std::invalid_argument with
// a message that says what is wrong; values must be >= min_value.
std::vector<std::int64_t> parse_int_item(const std::string& item, std::int64_t min_value);

// Expands a whole list (items separated by commas), keeping order and dropping repeats.
std::vector<std::int64_t> parse_int_list(const std::string& list, std::int64_t min_value);

// "I/N" with 0 <= I < N <= kMaxShards: a shard of a sweep. Throws std::invalid_argument.
constexpr std::int64_t kMaxShards = 100000;
struct ShardSpec {
  int index = 0;
  int count = 1;
};
ShardSpec parse_shard(const std::string& s);

// A number > 0 within fp32's normal range, FLT_MIN to FLT_MAX ("1e-5"): eps and the fp8 y
// scale, which the kernels take as fp32. Throws std::invalid_argument.
double parse_positive_double(const std::string& s);

// A finite double in [lo, hi]. Throws std::invalid_argument naming the range.
double parse_double_in(const std::string& s, double lo, double hi);

// A whole number in [lo, hi] (decimal). Throws std::invalid_argument naming the range.
std::int64_t parse_int_in(const std::string& s, std::int64_t lo, std::int64_t hi);

// A whole number from 0 to 2^64 - 1 (decimal, or 0x hexadecimal). Throws std::invalid_argument.
std::uint64_t parse_seed(const std::string& s);

// Bytes: a whole number, optionally with a suffix K, M, G or T (powers of 1024; "8G",
// "512M", "1048576"), from 1 byte to 2^63 - 1. Throws std::invalid_argument.
std::int64_t parse_bytes(const std::string& s);

}  // namespace rb

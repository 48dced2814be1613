// Parsing of numeric list options: "4096", "1024,4096,4097", ranges "1024:16384:x2"
// (geometric, factor 2) and "128:1024:+128" (arithmetic). Used by --H and --M.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rb {

// Expands one item (a number or a range). Throws std::invalid_argument with a message that
// says what is wrong; values must be >= min_value.
std::vector<std::int64_t> parse_int_item(const std::string& item, std::int64_t min_value);

// Expands a whole list (items separated by commas), keeping order and dropping repeats.
std::vector<std::int64_t> parse_int_list(const std::string& list, std::int64_t min_value);

// "I/N" with 0 <= I < N: a shard of a sweep. Throws std::invalid_argument.
struct ShardSpec {
  int index = 0;
  int count = 1;
};
ShardSpec parse_shard(const std::string& s);

// A finite double > 0 ("1e-5"). Throws std::invalid_argument.
double parse_positive_double(const std::string& s);

}  // namespace rb

// Merges the CSVs of a sharded or repeated sweep into one: rows keep their input order, a
// row repeated byte for byte (the same case measured once, listed twice) is kept once, and
// the same case with different results is a conflict the caller must resolve.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "reports/record.h"

namespace rb {

// The same case_key() with rows that differ in some column. what() names the case, both
// inputs and the differing columns.
class MergeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// inputs: (name, rows) per input, in order; the name (a file path) is used in messages.
// Returns the rows of every input concatenated, identical duplicates collapsed to the first.
// Throws MergeError on a conflicting duplicate, within one input or across two.
std::vector<Record> merge_records(const std::vector<std::pair<std::string, std::vector<Record>>>& inputs);

}  // namespace rb

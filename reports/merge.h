// Merges the CSVs of a sharded or repeated sweep into one: rows keep their input order, a
// row repeated byte for byte (the same case measured once, listed twice) is kept once, and
// the same case with different results is a conflict the caller must resolve, or, asked to,
// the later input's row replaces the earlier one in its place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "reports/record.h"

namespace rb {

// The same case_key() with rows that differ in some column. what() names the case, both
// rows as FILE:LINE and the differing columns.
class MergeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a case met again in a later input with a different row does.
enum class OnConflict {
  refuse,      // MergeError: the shards of one sweep never measure a case twice
  later_wins,  // the later input's row takes the earlier row's place: refreshing part of a
               // baseline with rows measured since (`merge --update`)
};

// inputs: (name, rows) per input, in order; the name (a file path) is used in messages.
// Returns the rows of every input concatenated, identical duplicates collapsed to the first.
// Throws MergeError on a conflicting duplicate within one input (whatever on_conflict says:
// one file that holds two results for one case is broken) and, with OnConflict::refuse,
// across two. replaced, when given, receives how many rows a later input replaced. lines[k]:
// the file line of each row of input k (read_csv's lines); an input without them is counted as
// CsvWriter writes rows.
std::vector<Record> merge_records(const std::vector<std::pair<std::string, std::vector<Record>>>& inputs,
                                  OnConflict on_conflict = OnConflict::refuse,
                                  std::size_t* replaced = nullptr,
                                  const std::vector<std::vector<std::int64_t>>& lines = {});

}  // namespace rb

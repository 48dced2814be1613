#include "reports/merge.h"

#include <fmt/format.h>

#include <unordered_map>

#include "reports/columns.h"
#include "reports/csv_reader.h"
#include "reports/csv_writer.h"

namespace rb {
namespace {

// The columns whose values differ, each as "name 'a' vs 'b'" in the text the CSV holds.
std::string differences(const Record& a, const Record& b) {
  std::string diff;
  for (const Column& c : kRecordColumns) {
    const std::string va = column_text(c, a);
    const std::string vb = column_text(c, b);
    if (va == vb) continue;
    diff += fmt::format("{}{} '{}' vs '{}'", diff.empty() ? "" : ", ", c.name, va, vb);
  }
  return diff.empty() ? std::string("the rows differ") : diff;
}

struct Seen {
  std::size_t input;  // index into inputs
  std::size_t row;    // index into that input's rows
  std::size_t out;    // index into the merged rows
};

}  // namespace

std::vector<Record> merge_records(const std::vector<std::pair<std::string, std::vector<Record>>>& inputs,
                                  OnConflict on_conflict, std::size_t* replaced,
                                  const std::vector<std::vector<std::int64_t>>& lines) {
  const std::vector<std::int64_t> no_lines;
  // "FILE:LINE" of row i of input k.
  const auto where = [&](std::size_t k, std::size_t i) {
    return fmt::format("{}:{}", inputs[k].first, record_line(k < lines.size() ? lines[k] : no_lines, i));
  };
  std::vector<Record> merged;
  std::vector<std::string> merged_lines;  // csv_row of each merged row: the equality test
  std::unordered_map<std::string, Seen> seen;
  std::size_t n_replaced = 0;
  for (std::size_t in = 0; in < inputs.size(); ++in) {
    const std::vector<Record>& rows = inputs[in].second;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Record& r = rows[i];
      std::string line = csv_row(r);
      const auto [it, inserted] = seen.emplace(case_key(r), Seen{in, i, merged.size()});
      if (inserted) {
        merged.push_back(r);
        merged_lines.push_back(std::move(line));
        continue;
      }
      Seen& first = it->second;
      if (merged_lines[first.out] == line) continue;  // the same result listed twice
      if (on_conflict == OnConflict::later_wins && first.input < in) {
        merged[first.out] = r;
        merged_lines[first.out] = std::move(line);
        first.input = in;  // a second row for the case in this input is then a conflict
        first.row = i;
        ++n_replaced;
        continue;
      }
      throw MergeError(fmt::format("conflicting rows for case {}: {} and {} differ in {}", case_label(r),
                                   where(first.input, first.row), where(in, i),
                                   differences(merged[first.out], r)));
    }
  }
  if (replaced != nullptr) *replaced = n_replaced;
  return merged;
}

}  // namespace rb

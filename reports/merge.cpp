#include "reports/merge.h"

#include <fmt/format.h>

#include <unordered_map>

#include "reports/compare.h"
#include "reports/csv_writer.h"

namespace rb {
namespace {

// Every column as CsvWriter writes it, paired with its name (for the conflict message).
std::vector<std::pair<const char*, std::string>> named_fields(const Record& r) {
  const auto opt = [](const auto& v) { return v ? fmt::format("{}", *v) : std::string(); };
  const auto dbl = [](const std::optional<double>& v) { return v ? format_double(*v) : std::string(); };
  return {{"schema", r.schema},
          {"gpu", r.gpu},
          {"cc", r.cc},
          {"kernel", r.kernel},
          {"picked", r.picked},
          {"op", r.op},
          {"dtype", r.dtype},
          {"wdtype", r.wdtype},
          {"rdtype", r.rdtype},
          {"M", fmt::format("{}", r.M)},
          {"H", fmt::format("{}", r.H)},
          {"stride", fmt::format("{}", r.stride)},
          {"layout", r.layout},
          {"eps", format_double(r.eps)},
          {"dist", r.dist},
          {"seed", fmt::format("{}", r.seed)},
          {"status", status_name(r.status)},
          {"reason", r.reason},
          {"rows_checked", fmt::format("{}", r.rows_checked)},
          {"max_abs_err", format_double(r.max_abs_err)},
          {"max_rel_err", format_double(r.max_rel_err)},
          {"max_ulp", format_double(r.max_ulp)},
          {"mismatches", fmt::format("{}", r.mismatches)},
          {"worst_row", fmt::format("{}", r.worst_row)},
          {"worst_col", fmt::format("{}", r.worst_col)},
          {"atol", format_double(r.atol)},
          {"rtol", format_double(r.rtol)},
          {"median_us", dbl(r.median_us)},
          {"min_us", dbl(r.min_us)},
          {"max_us", dbl(r.max_us)},
          {"noise_pct", dbl(r.noise_pct)},
          {"samples", opt(r.samples)},
          {"graph_us", dbl(r.graph_us)},
          {"bytes", fmt::format("{}", r.bytes)},
          {"gbps", dbl(r.gbps)},
          {"copy_gbps", dbl(r.copy_gbps)},
          {"pct_of_copy", dbl(r.pct_of_copy)}};
}

std::string differences(const Record& a, const Record& b) {
  const auto fa = named_fields(a);
  const auto fb = named_fields(b);
  std::string diff;
  for (std::size_t i = 0; i < fa.size() && i < fb.size(); ++i) {
    if (fa[i].second == fb[i].second) continue;
    diff +=
        fmt::format("{}{} '{}' vs '{}'", diff.empty() ? "" : ", ", fa[i].first, fa[i].second, fb[i].second);
  }
  return diff.empty() ? std::string("the rows differ") : diff;
}

struct Seen {
  std::size_t input;  // index into inputs
  std::size_t row;    // index into that input's rows
  std::size_t out;    // index into the merged rows
};

}  // namespace

std::vector<Record> merge_records(const std::vector<std::pair<std::string, std::vector<Record>>>& inputs) {
  std::vector<Record> merged;
  std::vector<std::string> merged_lines;  // csv_row of each merged row: the equality test
  std::unordered_map<std::string, Seen> seen;
  for (std::size_t in = 0; in < inputs.size(); ++in) {
    const auto& [name, rows] = inputs[in];
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Record& r = rows[i];
      std::string line = csv_row(r);
      const auto [it, inserted] = seen.emplace(case_key(r), Seen{in, i, merged.size()});
      if (inserted) {
        merged.push_back(r);
        merged_lines.push_back(std::move(line));
        continue;
      }
      const Seen& first = it->second;
      if (merged_lines[first.out] == line) continue;  // the same result listed twice
      throw MergeError(fmt::format(
          "conflicting rows for case {}: {} data row {} and {} data row {} differ in {}", case_label(r),
          inputs[first.input].first, first.row + 1, name, i + 1, differences(merged[first.out], r)));
    }
  }
  return merged;
}

}  // namespace rb

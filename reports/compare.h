// The regression gate: joins a baseline CSV's rows with a current run's on case_key() and
// classifies each key. A regression is a case that stopped passing (pass -> fail, error or
// skip), a pass the baseline checked and the current run did not (--no-check), a key the
// current run lacks (unless allowed), or a bandwidth drop larger than both the threshold and
// the two rows' noise added together, so reruns within noise never trip it. A failure is
// fixed (an improvement) only by a checked pass.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "reports/record.h"

namespace rb {

// What a bandwidth change is measured in: the rows' GB/s, or their % of copy (each row against
// the copy ceiling its own run measured), which stays comparable across GPUs.
enum class Metric { gbps, pct_of_copy };

const char* metric_name(Metric m);  // "gbps", "pct-of-copy": the CLI's words

struct CompareOptions {
  double max_slowdown_pct = 5;  // a bandwidth drop must exceed this (and the summed noise)
  Metric metric = Metric::gbps;
  bool allow_missing = false;   // a baseline key absent from the current run is listed only
  bool ignore_gpu = false;      // compare files measured on different GPUs
  // A pass the baseline checked and the current run did not (a timing-only run, --no-check) is
  // listed and judged on bandwidth, not a regression.
  bool allow_unchecked = false;
};

enum class Change { regression, improvement, unchanged, missing, added };

const char* change_name(Change c);  // "regression", "improvement", "unchanged", "missing", "new"

// One key of the join. base is empty for a new key, cur for a missing one.
struct CompareRow {
  std::string key;  // case_key()
  Change change = Change::unchanged;
  std::optional<Record> base, cur;
  // Bandwidth in options.metric's column, where both rows carry it finite (the baseline's > 0).
  std::optional<double> change_pct;  // (cur - base) / base * 100
  std::optional<double> base_noise_pct, cur_noise_pct;
  // The status differs, a checked pass against an unchecked one (rows_checked 0) included.
  bool status_changed() const;
  std::string why;  // one phrase: "pass -> fail", "-10.2% GB/s (noise 1.0%)", "missing"
};

struct CompareResult {
  CompareOptions options;
  std::vector<std::string> base_gpus, cur_gpus;  // distinct gpu values of each file, sorted
  std::vector<CompareRow> rows;                  // baseline order, then new keys in current order

  std::size_t count(Change c) const;
  // Regressions, counting missing keys unless options.allow_missing.
  std::size_t regressions() const;
  bool failed() const { return regressions() > 0; }
};

// An input the gate refuses to judge: a key twice in one file, or different GPUs. line: the
// line of side's file it is about (a duplicate key's second row), 0 for none.
class CompareError : public std::runtime_error {
 public:
  enum class Side { baseline, current, both };
  CompareError(Side side, const std::string& message, std::int64_t line = 0)
      : std::runtime_error(message), side_(side), line_(line) {}
  Side side() const { return side_; }
  std::int64_t line() const { return line_; }

 private:
  Side side_;
  std::int64_t line_;
};

// Throws CompareError on a duplicate key in either input or, unless options.ignore_gpu, when
// the two inputs name different GPUs. base_lines and cur_lines: the file line of each row
// (read_csv's lines), so a duplicate names its lines; empty: counted as CsvWriter writes rows.
CompareResult compare_records(const std::vector<Record>& base, const std::vector<Record>& cur,
                              const CompareOptions& options, const std::vector<std::int64_t>& base_lines = {},
                              const std::vector<std::int64_t>& cur_lines = {});

// Markdown: the verdict, then regressions (worst first), improvements, the number of
// unchanged keys (with any other status changes), missing keys and new keys. The names stand
// for the two inputs (file paths).
std::string compare_markdown(const CompareResult& result, const std::string& base_name,
                             const std::string& cur_name);

// A few lines for the terminal: counts, each regression, the other status changes, and the
// verdict last.
std::string compare_text(const CompareResult& result, const std::string& base_name,
                         const std::string& cur_name);

}  // namespace rb

// The regression gate: joins a baseline CSV's rows with a current run's on case_key() and
// classifies each key. A regression is a case that stopped passing (pass -> fail, error or
// skip), a key the current run lacks (unless allowed), or a bandwidth drop larger than both
// the threshold and the two rows' noise added together, so reruns within noise never trip it.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "reports/record.h"

namespace rb {

struct CompareOptions {
  double max_slowdown_pct = 5;  // a bandwidth drop must exceed this (and the summed noise)
  bool allow_missing = false;   // a baseline key absent from the current run is listed only
  bool ignore_gpu = false;      // compare files measured on different GPUs
};

enum class Change { regression, improvement, unchanged, missing, added };

const char* change_name(Change c);  // "regression", "improvement", "unchanged", "missing", "new"

// One key of the join. base is empty for a new key, cur for a missing one.
struct CompareRow {
  std::string key;  // case_key()
  Change change = Change::unchanged;
  std::optional<Record> base, cur;
  // Bandwidth, where both rows carry a finite gbps (the baseline's > 0).
  std::optional<double> gbps_change_pct;  // (cur - base) / base * 100
  std::optional<double> base_noise_pct, cur_noise_pct;
  bool status_changed() const { return base && cur && base->status != cur->status; }
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

// An input the gate refuses to judge: a key twice in one file, or different GPUs.
class CompareError : public std::runtime_error {
 public:
  enum class Side { baseline, current, both };
  CompareError(Side side, const std::string& message) : std::runtime_error(message), side_(side) {}
  Side side() const { return side_; }

 private:
  Side side_;
};

// Throws CompareError on a duplicate key in either input or, unless options.ignore_gpu, when
// the two inputs name different GPUs.
CompareResult compare_records(const std::vector<Record>& base, const std::vector<Record>& cur,
                              const CompareOptions& options);

// Markdown: the verdict, then regressions (worst first), improvements, the number of
// unchanged keys (with any other status changes), missing keys and new keys. The names stand
// for the two inputs (file paths).
std::string compare_markdown(const CompareResult& result, const std::string& base_name,
                             const std::string& cur_name);

// A few lines for the terminal: counts, each regression, and the verdict last.
std::string compare_text(const CompareResult& result, const std::string& base_name,
                         const std::string& cur_name);

}  // namespace rb

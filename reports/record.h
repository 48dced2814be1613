// One result row: a (case, kernel) pair as it ran. Plain data so reports/ depends on nothing
// above it; the harness fills it, the writers and readers here move it to and from disk.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rb {

inline constexpr const char* kSchema = "rmsnorm-bench/1";

enum class Status { pass, fail, skip, error };

const char* status_name(Status s);
std::optional<Status> parse_status(const std::string& s);

struct Record {
  std::string schema = kSchema;
  std::string gpu;
  std::string cc;  // compute capability, "9.0"
  std::string kernel;
  std::string picked;
  std::string provider, provider_version;  // TEMP until the column table lands
  std::string op;
  std::string dtype;
  std::string wdtype;
  std::string rdtype;  // empty for ops without a residual stream
  std::int64_t M = 0;
  std::int64_t H = 0;
  std::int64_t stride = 0;
  std::string layout;
  double eps = 0;
  std::string dist;
  std::uint64_t seed = 0;

  Status status = Status::skip;
  std::string reason;
  std::int64_t rows_checked = 0;
  double max_abs_err = 0;
  double max_rel_err = 0;
  double max_ulp = 0;
  std::int64_t mismatches = 0;
  std::int64_t worst_row = -1;
  std::int64_t worst_col = -1;
  double atol = 0;
  double rtol = 0;

  // Timing; unset where the case was not timed.
  std::optional<double> median_us, min_us, max_us, noise_pct;
  std::optional<std::int64_t> samples;
  std::optional<double> graph_us;
  std::int64_t bytes = 0;
  std::optional<double> gbps, copy_gbps, pct_of_copy;
};

// The CSV header, in schema order.
const std::vector<std::string>& csv_columns();

// The case key: every column from kernel to seed except picked, joined for map lookups.
std::string case_key(const Record& r);

// Shortest text that reads back to the same double ("1e-05", "4275", "nan", "-inf"). The CSV
// writer and case_key share it, so a key built from a parsed row equals the original's.
std::string format_double(double v);

}  // namespace rb

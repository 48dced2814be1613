// One result row: a (case, kernel) pair as it ran. Plain data so reports/ depends on nothing
// above it; the harness fills it, the writers and readers here move it to and from disk.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rb {

// The CSV schema writers write. Readers also take every older version (see columns.h).
inline constexpr int kSchemaVersion = 3;
inline constexpr const char* kSchema = "rmsnorm-bench/3";

// "rmsnorm-bench/<version>".
std::string schema_name(int version);

enum class Status { pass, fail, skip, error };

const char* status_name(Status s);
std::optional<Status> parse_status(const std::string& s);

// Its fields are the CSV's columns; columns.h maps one to the other.
struct Record {
  std::string schema = kSchema;  // a row read from an older file is upgraded to kSchema
  std::string gpu;
  std::string cc;  // compute capability, "9.0"
  std::string kernel;
  std::string picked;
  // Who provides the kernel: "builtin", "cudnn", "cublas", "plugin"; empty in rows read from
  // schema 1 files. provider_version is the library's version ("9.10.2"), may be empty.
  std::string provider;
  std::string provider_version;
  std::string op;
  std::string dtype;
  std::string wdtype;
  std::string rdtype;  // empty for ops without a residual stream
  // Schema 3: the convention (rows of older files are fp32, the only one they could run),
  // y's dtype where it is fp8 (empty: x's, or the op has no y) and then its scale.
  std::string convention = "fp32";
  std::string ydtype;
  std::optional<double> y_scale;
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

// The CSV header of the current schema, in order (the names of kRecordColumns).
const std::vector<std::string>& csv_columns();

// The case key: the key columns of kRecordColumns (every column from kernel to y_scale
// except picked, provider and provider_version), joined for map lookups. A row read from a
// schema 1 or 2 file has the same key as its schema 3 rewrite.
std::string case_key(const Record& r);

// A readable name of the case key:
// "fwd/auto/bf16/bf16/M=16384/H=4096/contiguous/normal/eps=1e-05/seed=1", with "/r=RDTYPE"
// after the weight dtype for ops with a residual stream, "/stride=S" before the seed where
// the row stride is not H, and "/conv=NAME" and "/y=e4m3*SCALE" after it for a convention
// other than fp32 and an fp8 y. Distinct keys get distinct labels.
std::string case_label(const Record& r);

// Shortest text that reads back to the same double ("1e-05", "4275", "nan", "-inf"). The CSV
// writer and case_key share it, so a key built from a parsed row equals the original's.
std::string format_double(double v);

}  // namespace rb

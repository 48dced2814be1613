// The record's CSV columns, defined once. The header, the writer (csv_row), the reader, the
// merge's conflict message and case_key all walk this table; nothing else lists the fields.
// A column's kind is the type of the Record member it points at, so the two cannot disagree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "reports/record.h"

namespace rb {

// The Record member a column reads and writes. The alternatives are in ColumnKind's order.
using ColumnField =
    std::variant<std::string Record::*, std::int64_t Record::*, std::uint64_t Record::*, double Record::*,
                 std::optional<double> Record::*, std::optional<std::int64_t> Record::*, Status Record::*>;

enum class ColumnKind { text, int64, uint64, real, optional_real, optional_int64, status };

struct Column {
  const char* name;
  ColumnField field;
  bool in_key = false;  // part of case_key()
  int since = 1;        // the schema version that added the column

  constexpr ColumnKind kind() const { return static_cast<ColumnKind>(field.index()); }
};

inline constexpr bool kKey = true;

// Every column of the current schema (kSchemaVersion), in file order. A column added in a
// later version names it in `since`; older files are read with the columns they had.
inline constexpr Column kRecordColumns[] = {
    {"schema", &Record::schema},
    {"gpu", &Record::gpu},
    {"cc", &Record::cc},
    {"kernel", &Record::kernel, kKey},
    {"picked", &Record::picked},
    {"provider", &Record::provider, false, 2},
    {"provider_version", &Record::provider_version, false, 2},
    {"op", &Record::op, kKey},
    {"dtype", &Record::dtype, kKey},
    {"wdtype", &Record::wdtype, kKey},
    {"rdtype", &Record::rdtype, kKey},
    {"M", &Record::M, kKey},
    {"H", &Record::H, kKey},
    {"stride", &Record::stride, kKey},
    {"layout", &Record::layout, kKey},
    {"eps", &Record::eps, kKey},
    {"dist", &Record::dist, kKey},
    {"seed", &Record::seed, kKey},
    {"status", &Record::status},
    {"reason", &Record::reason},
    {"rows_checked", &Record::rows_checked},
    {"max_abs_err", &Record::max_abs_err},
    {"max_rel_err", &Record::max_rel_err},
    {"max_ulp", &Record::max_ulp},
    {"mismatches", &Record::mismatches},
    {"worst_row", &Record::worst_row},
    {"worst_col", &Record::worst_col},
    {"atol", &Record::atol},
    {"rtol", &Record::rtol},
    {"median_us", &Record::median_us},
    {"min_us", &Record::min_us},
    {"max_us", &Record::max_us},
    {"noise_pct", &Record::noise_pct},
    {"samples", &Record::samples},
    {"graph_us", &Record::graph_us},
    {"bytes", &Record::bytes},
    {"gbps", &Record::gbps},
    {"copy_gbps", &Record::copy_gbps},
    {"pct_of_copy", &Record::pct_of_copy},
};

// How many columns a file of schema version v has (0 for a version that never existed).
constexpr std::size_t column_count(int version) {
  if (version < 1 || version > kSchemaVersion) return 0;
  std::size_t n = 0;
  for (const Column& c : kRecordColumns) n += c.since <= version ? 1 : 0;
  return n;
}

// The columns of schema version v, in file order (empty for an unknown version).
std::vector<const Column*> schema_columns(int version);

// The column's value in r as the CSV holds it, before CSV quoting: text as is, integers in
// decimal, doubles as format_double, an unset optional as "", a status as status_name.
std::string column_text(const Column& c, const Record& r);

// A field that does not parse as its column's kind. what() is the message alone ("'abc' is
// not an integer"); the reader adds file, line and column.
class ColumnValueError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses text as column_text writes it and stores it in r. Strict: the whole field must
// parse, required numbers must be present. Throws ColumnValueError.
void set_column(const Column& c, Record& r, const std::string& text);

}  // namespace rb

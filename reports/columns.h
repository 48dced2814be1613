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

// Why a column's value is refused ("-3 is out of range (accepted: >= 1)"), or "" when it is
// valid. It sees the whole record: a rule may relate the column to others (min_us <= median_us).
using ColumnRule = std::string (*)(const Record&);

struct Column {
  const char* name;
  ColumnField field;
  bool in_key = false;  // part of case_key()
  int since = 1;        // the schema version that added the column
  // The values the column accepts: `domain` on its own, `relation` against the rest of the row
  // (checked once every column's domain holds, so it may rely on them). nullptr: anything.
  ColumnRule domain = nullptr;
  ColumnRule relation = nullptr;

  constexpr ColumnKind kind() const { return static_cast<ColumnKind>(field.index()); }
};

// The building blocks of the rules in kRecordColumns. Each returns "" or the refusal, naming
// the value and the accepted range.
namespace rule {
// bound names the limit when it is another column ("H"): "... (accepted: >= H = 4096)".
std::string at_least(std::int64_t v, std::int64_t min, const char* bound = nullptr);
std::string at_least(const std::optional<std::int64_t>& v, std::int64_t min);  // empty: ok
std::string at_most(std::int64_t v, std::int64_t max, const char* bound);
std::string positive(double v);                            // finite, > 0
std::string positive(const std::optional<double>& v);      // empty: ok
std::string non_negative(double v);                        // finite, >= 0
std::string non_negative(const std::optional<double>& v);  // empty: ok
// An error metric: finite and >= 0; a fail row may also hold +inf or NaN (an output that
// was NaN or Inf where the reference was finite).
std::string error_metric(double v, Status s);
// An index into a dimension of `size` ("M", "H"), or -1 for none.
std::string index_or_none(std::int64_t v, std::int64_t size, const char* dim);
// cc: the device's compute capability as the runner writes it (major.minor, e.g. 9.0), or
// empty, a row that does not say.
std::string compute_capability(const Record& r);
// kernel: not empty. Its names are open (built-ins, `plugin:<name>`, `peer:<name>`, variants
// such as `cudnn@eng3`), so only the empty name, which no run writes, is refused.
std::string kernel(const Record& r);
// provider: empty or one of kProviders. Empty is a row that does not say: schema 1 had no
// provider column, and merge writes such rows on in schema 3.
std::string provider(const Record& r);
// A `plugin:<name>` kernel comes from provider plugin and a `peer:<name>` one from peer, and
// those providers' kernels carry those prefixes (the plugin loader and scripts/peers.py name
// them so).
std::string provider_with_kernel(const Record& r);
// op, layout, dist, convention: a name core/names.h knows.
std::string op(const Record& r);
std::string layout(const Record& r);
std::string dist(const Record& r);
std::string convention(const Record& r);
// dtype, wdtype, a set rdtype: a dtype a tensor other than y may have (core/names.h
// is_input_dtype: fp8 is y's alone).
std::string input_dtype(const std::string& v);
// rdtype: set exactly where the op has a residual stream (the runner leaves it empty for the
// others, in every schema).
std::string residual_with_op(const Record& r);
// ydtype: empty or an fp8 dtype's name.
std::string output_dtype(const Record& r);
// y_scale is set exactly where ydtype is.
std::string scale_with_fp8(const Record& r);
// mismatches: 0 in a pass row.
std::string pass_has_no_mismatches(const Record& r);
// A timing column is set exactly where median_us is (the case was timed).
std::string timed_like_median(bool set, const Record& r);
// median_us: only pass and fail rows are timed, and min_us <= median_us <= max_us.
std::string median_relation(const Record& r);
// gbps = bytes / median_us / 1e3 and pct_of_copy = 100 * gbps / copy_gbps, as the runner
// derives them (to a relative 1e-9: the CSV's doubles round-trip, so a file the runner wrote
// matches exactly).
std::string gbps_relation(const Record& r);
std::string pct_of_copy_relation(const Record& r);
}  // namespace rule

// The providers a row may name: the kernel registry's (kernels/registry.h: builtin, cudnn,
// cublas, plugin) and scripts/peers.py's (peer). A CPU test checks every registered kernel's
// provider is here (HarnessRegistry.EveryProviderIsOneTheReaderTakes).
inline constexpr const char* kProviders[] = {"builtin", "cudnn", "cublas", "plugin", "peer"};

inline constexpr bool kKey = true;

// Every column of the current schema (kSchemaVersion), in file order. A column added in a
// later version names it in `since`; older files are read with the columns they had.
inline constexpr Column kRecordColumns[] = {
    {"schema", &Record::schema},
    {"gpu", &Record::gpu},
    {"cc", &Record::cc, false, 1, rule::compute_capability},
    {"kernel", &Record::kernel, kKey, 1, rule::kernel},
    {"picked", &Record::picked},
    {"provider", &Record::provider, false, 2, rule::provider, rule::provider_with_kernel},
    {"provider_version", &Record::provider_version, false, 2},
    {"op", &Record::op, kKey, 1, rule::op},
    {"dtype", &Record::dtype, kKey, 1, [](const Record& r) { return rule::input_dtype(r.dtype); }},
    {"wdtype", &Record::wdtype, kKey, 1, [](const Record& r) { return rule::input_dtype(r.wdtype); }},
    {"rdtype", &Record::rdtype, kKey, 1,
     [](const Record& r) { return r.rdtype.empty() ? std::string() : rule::input_dtype(r.rdtype); },
     rule::residual_with_op},
    {"M", &Record::M, kKey, 1, [](const Record& r) { return rule::at_least(r.M, 1); }},
    {"H", &Record::H, kKey, 1, [](const Record& r) { return rule::at_least(r.H, 1); }},
    {"stride", &Record::stride, kKey, 1, [](const Record& r) { return rule::at_least(r.stride, 1); },
     [](const Record& r) { return rule::at_least(r.stride, r.H, "H"); }},
    {"layout", &Record::layout, kKey, 1, rule::layout},
    {"eps", &Record::eps, kKey, 1, [](const Record& r) { return rule::positive(r.eps); }},
    {"dist", &Record::dist, kKey, 1, rule::dist},
    {"seed", &Record::seed, kKey},
    {"convention", &Record::convention, kKey, 3, rule::convention},
    {"ydtype", &Record::ydtype, kKey, 3, rule::output_dtype},
    {"y_scale", &Record::y_scale, kKey, 3, [](const Record& r) { return rule::positive(r.y_scale); },
     rule::scale_with_fp8},
    {"status", &Record::status},
    {"reason", &Record::reason},
    {"rows_checked", &Record::rows_checked, false, 1,
     [](const Record& r) { return rule::at_least(r.rows_checked, 0); },
     [](const Record& r) { return rule::at_most(r.rows_checked, r.M, "M"); }},
    {"max_abs_err", &Record::max_abs_err, false, 1,
     [](const Record& r) { return rule::error_metric(r.max_abs_err, r.status); }},
    {"max_rel_err", &Record::max_rel_err, false, 1,
     [](const Record& r) { return rule::error_metric(r.max_rel_err, r.status); }},
    {"max_ulp", &Record::max_ulp, false, 1,
     [](const Record& r) { return rule::error_metric(r.max_ulp, r.status); }},
    {"mismatches", &Record::mismatches, false, 1,
     [](const Record& r) { return rule::at_least(r.mismatches, 0); }, rule::pass_has_no_mismatches},
    {"worst_row", &Record::worst_row, false, 1,
     [](const Record& r) { return rule::at_least(r.worst_row, -1); },
     [](const Record& r) { return rule::index_or_none(r.worst_row, r.M, "M"); }},
    {"worst_col", &Record::worst_col, false, 1,
     [](const Record& r) { return rule::at_least(r.worst_col, -1); },
     [](const Record& r) { return rule::index_or_none(r.worst_col, r.H, "H"); }},
    {"atol", &Record::atol, false, 1, [](const Record& r) { return rule::non_negative(r.atol); }},
    {"rtol", &Record::rtol, false, 1, [](const Record& r) { return rule::non_negative(r.rtol); }},
    {"median_us", &Record::median_us, false, 1, [](const Record& r) { return rule::positive(r.median_us); },
     rule::median_relation},
    {"min_us", &Record::min_us, false, 1, [](const Record& r) { return rule::positive(r.min_us); },
     [](const Record& r) { return rule::timed_like_median(r.min_us.has_value(), r); }},
    {"max_us", &Record::max_us, false, 1, [](const Record& r) { return rule::positive(r.max_us); },
     [](const Record& r) { return rule::timed_like_median(r.max_us.has_value(), r); }},
    {"noise_pct", &Record::noise_pct, false, 1,
     [](const Record& r) { return rule::non_negative(r.noise_pct); },
     [](const Record& r) { return rule::timed_like_median(r.noise_pct.has_value(), r); }},
    {"samples", &Record::samples, false, 1, [](const Record& r) { return rule::at_least(r.samples, 1); },
     [](const Record& r) { return rule::timed_like_median(r.samples.has_value(), r); }},
    // Only small launches are graph-timed: set or empty in a timed row, empty in an untimed one.
    {"graph_us", &Record::graph_us, false, 1, [](const Record& r) { return rule::positive(r.graph_us); },
     [](const Record& r) {
       return r.median_us ? std::string() : rule::timed_like_median(r.graph_us.has_value(), r);
     }},
    {"bytes", &Record::bytes, false, 1, [](const Record& r) { return rule::at_least(r.bytes, 0); }},
    {"gbps", &Record::gbps, false, 1, [](const Record& r) { return rule::positive(r.gbps); },
     rule::gbps_relation},
    {"copy_gbps", &Record::copy_gbps, false, 1, [](const Record& r) { return rule::positive(r.copy_gbps); },
     [](const Record& r) { return rule::timed_like_median(r.copy_gbps.has_value(), r); }},
    {"pct_of_copy", &Record::pct_of_copy, false, 1,
     [](const Record& r) { return rule::positive(r.pct_of_copy); }, rule::pct_of_copy_relation},
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

// The first column of r whose value is outside its accepted values (every column's domain
// first, then the relations, each in table order), with the reason; nullopt when r is valid.
// The reader refuses such a row; the runner never writes one.
struct ColumnViolation {
  const Column* column;
  std::string message;
};
std::optional<ColumnViolation> find_violation(const Record& r);

}  // namespace rb

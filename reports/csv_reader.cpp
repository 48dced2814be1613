#include "reports/csv_reader.h"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>
#include <tuple>
#include <utility>

// fast-cpp-csv-parser is not -Wall -Wextra clean; its warnings are not ours to fix.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wall"
#pragma GCC diagnostic ignored "-Wextra"
#pragma GCC diagnostic ignored "-Wstringop-truncation"
#include <libfccp/csv.h>
#pragma GCC diagnostic pop

namespace rb {
namespace {

constexpr unsigned kColumns = 37;

// No trimming, so text fields read back byte for byte; double quotes escape commas.
using Reader = io::CSVReader<kColumns, io::trim_chars<>, io::double_quote_escape<',', '"'>,
                             io::throw_on_overflow, io::empty_line_comment>;
using Fields = std::array<std::string, kColumns>;

std::string where_line(std::int64_t line) {
  return line > 0 ? fmt::format(":{}", line) : std::string();
}

std::string where_column(const std::string& column) {
  return column.empty() ? std::string() : fmt::format(": column {}", column);
}

// Turns a field of one row into typed values, naming the column on every failure.
class RowParser {
 public:
  RowParser(const std::string& file, std::int64_t line, const Fields& fields)
      : file_(file), line_(line), fields_(fields) {}

  const std::string& text(std::size_t i) const { return fields_[i]; }

  [[noreturn]] void fail(std::size_t i, const std::string& message) const {
    throw CsvError(file_, line_, csv_columns()[i], message);
  }

  template <typename T>
  T integer(std::size_t i) const {
    const std::optional<T> v = optional_integer<T>(i);
    if (!v) fail(i, "empty, expected an integer");
    return *v;
  }

  template <typename T>
  std::optional<T> optional_integer(std::size_t i) const {
    const std::string& s = fields_[i];
    if (s.empty()) return std::nullopt;
    T v{};
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc::result_out_of_range) fail(i, fmt::format("'{}' is out of range", s));
    if (ec != std::errc() || end != s.data() + s.size()) {
      fail(i, fmt::format("'{}' is not an integer", s));
    }
    return v;
  }

  double real(std::size_t i) const {
    const std::optional<double> v = optional_real(i);
    if (!v) fail(i, "empty, expected a number");
    return *v;
  }

  std::optional<double> optional_real(std::size_t i) const {
    const std::string& s = fields_[i];
    if (s.empty()) return std::nullopt;
    double v = 0;
    // from_chars is locale-independent and reads "nan" and "inf" as the writer prints them.
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) {
      fail(i, fmt::format("'{}' is not a number", s));
    }
    return v;
  }

 private:
  const std::string& file_;
  std::int64_t line_;
  const Fields& fields_;
};

Record to_record(const RowParser& p) {
  Record r;
  std::size_t i = 0;
  r.schema = p.text(i);
  if (r.schema != kSchema) {
    p.fail(i, fmt::format("unknown schema '{}' (expected '{}')", r.schema, kSchema));
  }
  r.gpu = p.text(++i);
  r.cc = p.text(++i);
  r.kernel = p.text(++i);
  r.picked = p.text(++i);
  r.op = p.text(++i);
  r.dtype = p.text(++i);
  r.wdtype = p.text(++i);
  r.rdtype = p.text(++i);
  r.M = p.integer<std::int64_t>(++i);
  r.H = p.integer<std::int64_t>(++i);
  r.stride = p.integer<std::int64_t>(++i);
  r.layout = p.text(++i);
  r.eps = p.real(++i);
  r.dist = p.text(++i);
  r.seed = p.integer<std::uint64_t>(++i);
  const std::optional<Status> status = parse_status(p.text(++i));
  if (!status) {
    p.fail(i, fmt::format("unknown status '{}' (expected pass, fail, skip or error)", p.text(i)));
  }
  r.status = *status;
  r.reason = p.text(++i);
  r.rows_checked = p.integer<std::int64_t>(++i);
  r.max_abs_err = p.real(++i);
  r.max_rel_err = p.real(++i);
  r.max_ulp = p.real(++i);
  r.mismatches = p.integer<std::int64_t>(++i);
  r.worst_row = p.integer<std::int64_t>(++i);
  r.worst_col = p.integer<std::int64_t>(++i);
  r.atol = p.real(++i);
  r.rtol = p.real(++i);
  r.median_us = p.optional_real(++i);
  r.min_us = p.optional_real(++i);
  r.max_us = p.optional_real(++i);
  r.noise_pct = p.optional_real(++i);
  r.samples = p.optional_integer<std::int64_t>(++i);
  r.graph_us = p.optional_real(++i);
  r.bytes = p.integer<std::int64_t>(++i);
  r.gbps = p.optional_real(++i);
  r.copy_gbps = p.optional_real(++i);
  r.pct_of_copy = p.optional_real(++i);
  return r;
}

// fccp's errors carry their line (and sometimes column) through mix-in bases.
CsvError translate(const std::string& file, const io::error::base& e) {
  std::int64_t line = 0;
  if (const auto* l = dynamic_cast<const io::error::with_file_line*>(&e)) line = l->file_line;
  std::string column;
  if (const auto* c = dynamic_cast<const io::error::with_column_name*>(&e)) {
    column = c->column_name;
  }
  std::string message;
  if (const auto* open = dynamic_cast<const io::error::can_not_open_file*>(&e)) {
    message = fmt::format("cannot open: {}",
                          open->errno_value != 0 ? std::strerror(open->errno_value) : "unknown");
  } else if (dynamic_cast<const io::error::too_few_columns*>(&e)) {
    message = fmt::format("too few columns (expected {}): truncated line?", kColumns);
  } else if (dynamic_cast<const io::error::too_many_columns*>(&e)) {
    message = fmt::format("too many columns (expected {})", kColumns);
  } else if (dynamic_cast<const io::error::escaped_string_not_closed*>(&e)) {
    message = "unterminated quoted field";
  } else {
    message = e.what();
  }
  return CsvError(file, line, column, message);
}

bool read_fields(Reader& reader, Fields& fields) {
  return std::apply([&](auto&... f) { return reader.read_row(f...); }, fields);
}

void check_header(const std::string& file, std::int64_t line, const Fields& header) {
  const std::vector<std::string>& expected = csv_columns();
  for (std::size_t i = 0; i < kColumns; ++i) {
    if (header[i] != expected[i]) {
      throw CsvError(file, line, expected[i],
                     fmt::format("header has '{}' where '{}' belongs (expected schema {})",
                                 header[i], expected[i], kSchema));
    }
  }
}

template <typename... SourceArgs>
std::vector<Record> read_all(const std::string& file, SourceArgs&&... source) {
  std::vector<Record> records;
  try {
    Reader reader(std::forward<SourceArgs>(source)...);
    // The header is read as a plain row so its order is checked too (fccp's read_header
    // would accept the columns in any order).
    Fields fields;
    if (!read_fields(reader, fields)) throw CsvError(file, 1, "", "empty file, expected header");
    check_header(file, reader.get_file_line(), fields);
    while (read_fields(reader, fields)) {
      records.push_back(to_record(RowParser(file, reader.get_file_line(), fields)));
    }
  } catch (const io::error::base& e) {
    throw translate(file, e);
  }
  return records;
}

}  // namespace

CsvError::CsvError(std::string file, std::int64_t line, std::string column, std::string message)
    : std::runtime_error(file + where_line(line) + where_column(column) + ": " + message),
      file_(std::move(file)),
      line_(line),
      column_(std::move(column)),
      message_(std::move(message)) {}

std::vector<Record> read_csv(const std::string& path) { return read_all(path, path); }

std::vector<Record> read_csv_text(const std::string& name, const std::string& text) {
  return read_all(name, name, text.data(), text.data() + text.size());
}

}  // namespace rb

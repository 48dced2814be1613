#include "reports/csv_reader.h"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>
#include <tuple>
#include <utility>

#include "reports/columns.h"

// fast-cpp-csv-parser is not -Wall -Wextra clean; its warnings are not ours to fix.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wall"
#pragma GCC diagnostic ignored "-Wextra"
#pragma GCC diagnostic ignored "-Wstringop-truncation"
#include <libfccp/csv.h>
#pragma GCC diagnostic pop

namespace rb {
namespace {

template <std::size_t N>
using Fields = std::array<std::string, N>;

// No trimming, so text fields read back byte for byte; double quotes escape commas.
template <std::size_t N>
using Reader = io::CSVReader<static_cast<unsigned>(N), io::trim_chars<>,
                             io::double_quote_escape<',', '"'>, io::throw_on_overflow,
                             io::empty_line_comment>;

std::string where_line(std::int64_t line) {
  return line > 0 ? fmt::format(":{}", line) : std::string();
}

std::string where_column(const std::string& column) {
  return column.empty() ? std::string() : fmt::format(": column {}", column);
}

std::string header_line(int version) {
  std::string line;
  for (const Column* c : schema_columns(version)) {
    if (!line.empty()) line += ',';
    line += c->name;
  }
  return line;
}

// The schema version whose header the file's first line is, or, when it is none of them,
// the one it resembles most (the longest common prefix, ties to the newest), so the header
// check names the first column that differs from the schema the file was meant to be.
int guess_version(const char* first_line) {
  const std::string line = first_line;
  int best = kSchemaVersion;
  std::size_t best_prefix = 0;
  for (int v = kSchemaVersion; v >= 1; --v) {
    const std::string header = header_line(v);
    if (line == header) return v;
    std::size_t prefix = 0;
    while (prefix < line.size() && prefix < header.size() && line[prefix] == header[prefix]) {
      ++prefix;
    }
    if (prefix > best_prefix) {
      best = v;
      best_prefix = prefix;
    }
  }
  return best;
}

// fccp's errors carry their line (and sometimes column) through mix-in bases.
CsvError translate(const std::string& file, std::size_t columns, const io::error::base& e) {
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
    message = fmt::format("too few columns (expected {}): truncated line?", columns);
  } else if (dynamic_cast<const io::error::too_many_columns*>(&e)) {
    message = fmt::format("too many columns (expected {})", columns);
  } else if (dynamic_cast<const io::error::escaped_string_not_closed*>(&e)) {
    message = "unterminated quoted field";
  } else {
    message = e.what();
  }
  return CsvError(file, line, column, message);
}

template <std::size_t N>
bool read_fields(Reader<N>& reader, Fields<N>& fields) {
  return std::apply([&](auto&... f) { return reader.read_row(f...); }, fields);
}

template <std::size_t N>
void check_header(const std::string& file, std::int64_t line, int version,
                  const std::vector<const Column*>& columns, const Fields<N>& header) {
  for (std::size_t i = 0; i < N; ++i) {
    if (header[i] != columns[i]->name) {
      throw CsvError(file, line, columns[i]->name,
                     fmt::format("header has '{}' where '{}' belongs (expected schema {})",
                                 header[i], columns[i]->name, schema_name(version)));
    }
  }
}

// One data row of a schema `version` file. The row's schema column must name that version;
// the record is then upgraded to the current schema (columns the file lacks keep their
// defaults: empty provider fields for schema 1).
template <std::size_t N>
Record to_record(const std::string& file, std::int64_t line, int version,
                 const std::vector<const Column*>& columns, const Fields<N>& fields) {
  Record r;
  for (std::size_t i = 0; i < N; ++i) {
    try {
      set_column(*columns[i], r, fields[i]);
    } catch (const ColumnValueError& e) {
      throw CsvError(file, line, columns[i]->name, e.what());
    }
    if (columns[i]->field == ColumnField(&Record::schema) && r.schema != schema_name(version)) {
      throw CsvError(file, line, columns[i]->name,
                     fmt::format("unknown schema '{}' (expected '{}', as the header says)",
                                 r.schema, schema_name(version)));
    }
  }
  // The values each column accepts (columns.h): a number that parses can still be impossible.
  if (const std::optional<ColumnViolation> v = find_violation(r)) {
    throw CsvError(file, line, v->column->name, v->message);
  }
  r.schema = kSchema;
  return r;
}

template <std::size_t N, typename... SourceArgs>
std::vector<Record> read_version(const std::string& file, int version, SourceArgs&&... source) {
  const std::vector<const Column*> columns = schema_columns(version);
  std::vector<Record> records;
  try {
    Reader<N> reader(std::forward<SourceArgs>(source)...);
    // The header is read as a plain row so its order is checked too (fccp's read_header
    // would accept the columns in any order).
    Fields<N> fields;
    if (!read_fields(reader, fields)) throw CsvError(file, 1, "", "empty file, expected header");
    check_header(file, reader.get_file_line(), version, columns, fields);
    while (read_fields(reader, fields)) {
      records.push_back(to_record(file, reader.get_file_line(), version, columns, fields));
    }
  } catch (const io::error::base& e) {
    throw translate(file, N, e);
  }
  return records;
}

// Reads the first line to pick the schema version, then the whole input with a reader of
// that version's column count (fccp fixes the count at compile time: one reader per version).
template <typename... SourceArgs>
std::vector<Record> read_all(const std::string& file, const SourceArgs&... source) {
  int version = kSchemaVersion;
  try {
    io::LineReader lines(source...);
    const char* first = lines.next_line();
    while (first != nullptr && io::empty_line_comment::is_comment(first)) first = lines.next_line();
    if (first == nullptr) throw CsvError(file, 1, "", "empty file, expected header");
    version = guess_version(first);
  } catch (const io::error::base& e) {
    throw translate(file, column_count(kSchemaVersion), e);
  }
  static_assert(kSchemaVersion == 3, "a new schema version needs its reader here");
  switch (version) {
    case 1:
      return read_version<column_count(1)>(file, version, source...);
    case 2:
      return read_version<column_count(2)>(file, version, source...);
    default:
      return read_version<column_count(3)>(file, version, source...);
  }
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

#include "reports/csv_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>
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

struct CloseFile {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// The whole file, read once: a pipe or FIFO (`compare base.csv <(...)`) yields its bytes a
// single time, and the header must be seen before the reader of its schema is chosen.
std::string file_text(const std::string& path) {
  const auto refuse = [&](const char* what) {
    const int err = errno;
    throw CsvError(path, 0, "",
                   fmt::format("cannot {}: {}", what, err != 0 ? std::strerror(err) : "unknown"));
  };
  errno = 0;
  const std::unique_ptr<std::FILE, CloseFile> f(std::fopen(path.c_str(), "rb"));
  if (!f) refuse("open");
  std::string text;
  char block[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(block, 1, sizeof block, f.get())) > 0) text.append(block, n);
  if (std::ferror(f.get())) refuse("read");  // a directory: EISDIR
  return text;
}

// The 1-based line that byte `offset` of text is on.
std::int64_t line_at(const std::string& text, std::size_t offset) {
  return 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n');
}

// Calls f with the column count of schema `version` as a compile-time constant (fccp fixes the
// count in the reader's type: one reader per version).
template <typename F>
decltype(auto) with_column_count(int version, F&& f) {
  static_assert(kSchemaVersion == 3, "a new schema version needs its reader here");
  switch (version) {
    case 1:
      return f(std::integral_constant<std::size_t, column_count(1)>());
    case 2:
      return f(std::integral_constant<std::size_t, column_count(2)>());
    default:
      return f(std::integral_constant<std::size_t, column_count(3)>());
  }
}

// How a header line names the columns of schema `version`, by name and in any order.
struct HeaderMatch {
  int version = kSchemaVersion;
  std::size_t found = 0;               // the schema's columns it names
  std::vector<std::string> missing;    // the schema's columns it lacks, in schema order
  std::optional<std::string> unknown;  // the first name it has that the schema lacks
};

// Schema `version`'s column names, for fccp's read_header.
template <std::size_t N>
std::array<std::string, N> column_names(int version) {
  const std::vector<const Column*> columns = schema_columns(version);
  std::array<std::string, N> names;
  for (std::size_t i = 0; i < N; ++i) names[i] = columns[i]->name;
  return names;
}

template <std::size_t N>
void read_header_as(Reader<N>& reader, io::ignore_column policy, const std::array<std::string, N>& names) {
  std::apply([&](const auto&... name) { reader.read_header(policy, name...); }, names);
}

// Which of schema `version`'s columns the header names (found, missing; not `unknown`).
template <std::size_t N>
HeaderMatch match_header(const std::string& file, const std::string& text, int version) {
  const std::array<std::string, N> names = column_names<N>(version);
  HeaderMatch m;
  m.version = version;
  Reader<N> by_name(file, text.data(), text.data() + text.size());
  read_header_as(by_name, io::ignore_missing_column | io::ignore_extra_column, names);
  for (const std::string& name : names) {
    if (by_name.has_column(name)) {
      ++m.found;
    } else {
      m.missing.push_back(name);
    }
  }
  return m;
}

// The first name the header has that schema `version` lacks. A reader of its own: each fccp
// reader allocates megabytes, so this is asked of the chosen schema only.
template <std::size_t N>
std::optional<std::string> unknown_column(const std::string& file, const std::string& text, int version) {
  Reader<N> no_extra(file, text.data(), text.data() + text.size());
  try {
    read_header_as(no_extra, io::ignore_missing_column, column_names<N>(version));
  } catch (const io::error::extra_column_in_header& e) {
    return std::string(e.column_name);
  }
  return std::nullopt;
}

// The schema a header that is none of them exactly was meant to be: the one whose columns it
// names most, then the one it lacks fewest of, ties to the newest. So a v3 header without `gpu`
// is schema 3 lacking one column, not schema 1 lacking six.
HeaderMatch closest_schema(const std::string& file, const std::string& text) {
  std::optional<HeaderMatch> best;
  for (int v = kSchemaVersion; v >= 1; --v) {
    HeaderMatch m =
        with_column_count(v, [&](auto n) { return match_header<decltype(n)::value>(file, text, v); });
    if (!best || m.found > best->found ||
        (m.found == best->found && m.missing.size() < best->missing.size())) {
      best = std::move(m);
    }
  }
  // A header naming none of the columns is reported as such (header_problem), unknown unused.
  if (best->found > 0) {
    best->unknown = with_column_count(
        best->version, [&](auto n) { return unknown_column<decltype(n)::value>(file, text, best->version); });
  }
  return *best;
}

// Why a header with another number of columns than its schema's cannot be read: what it lacks
// and what it has beyond the schema, rather than fccp's "too few columns".
std::string header_problem(const HeaderMatch& m) {
  const std::vector<const Column*> columns = schema_columns(m.version);
  if (m.found == 0) {
    return fmt::format(
        "not an rmsnorm-bench CSV: its header line names no column of any schema (expected "
        "'{},{},{},...')",
        columns[0]->name, columns[1]->name, columns[2]->name);
  }
  std::string parts;
  if (!m.missing.empty()) {
    constexpr std::size_t kListed = 8;
    std::string names;
    for (std::size_t i = 0; i < m.missing.size() && i < kListed; ++i) {
      names += (i ? ", " : "") + m.missing[i];
    }
    if (m.missing.size() > kListed) names += fmt::format(", ... ({} in all)", m.missing.size());
    parts = fmt::format("missing column{} {}", m.missing.size() == 1 ? "" : "s", names);
  }
  if (m.unknown) {
    parts += fmt::format("{}unknown column '{}'", parts.empty() ? "" : "; ", *m.unknown);
  }
  if (parts.empty()) parts = fmt::format("expected its {} columns", columns.size());
  return fmt::format("header does not match schema {}: {}", schema_name(m.version), parts);
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
  if (dynamic_cast<const io::error::too_few_columns*>(&e)) {
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

template <std::size_t N>
std::vector<Record> read_version(const std::string& file, const std::string& text, const HeaderMatch& header,
                                 std::vector<std::int64_t>* lines) {
  const std::vector<const Column*> columns = schema_columns(header.version);
  std::vector<Record> records;
  try {
    Reader<N> reader(file, text.data(), text.data() + text.size());
    // The header is read as a plain row so its order is checked too (fccp's read_header
    // would accept the columns in any order).
    Fields<N> fields;
    try {
      read_fields(reader, fields);  // there is a header line: read_all found it
    } catch (const io::error::too_few_columns&) {
      throw CsvError(file, reader.get_file_line(), "", header_problem(header));
    } catch (const io::error::too_many_columns&) {
      throw CsvError(file, reader.get_file_line(), "", header_problem(header));
    }
    check_header(file, reader.get_file_line(), header.version, columns, fields);
    while (read_fields(reader, fields)) {
      records.push_back(to_record(file, reader.get_file_line(), header.version, columns, fields));
      if (lines) lines->push_back(reader.get_file_line());
    }
  } catch (const io::error::base& e) {
    throw translate(file, N, e);
  }
  return records;
}

// Picks the schema from the header line (exactly one schema's, or the closest for the error
// message), then reads text with a reader of that schema's column count.
std::vector<Record> read_all(const std::string& file, const std::string& text,
                             std::vector<std::int64_t>* lines) {
  // fccp reads lines as C strings: a NUL would silently cut its line short.
  if (const std::size_t nul = text.find('\0'); nul != std::string::npos) {
    throw CsvError(file, line_at(text, nul), "", "a NUL byte: binary data, not a CSV file");
  }
  if (lines) lines->clear();
  HeaderMatch header;
  std::int64_t header_at = 1;
  try {
    io::LineReader reader(file, text.data(), text.data() + text.size());
    const char* first = reader.next_line();
    while (first != nullptr && io::empty_line_comment::is_comment(first)) first = reader.next_line();
    if (first == nullptr) throw CsvError(file, 1, "", "empty file (or only blank lines), expected header");
    header_at = reader.get_file_line();
    int exact = 0;
    for (int v = kSchemaVersion; v >= 1 && exact == 0; --v) {
      if (header_line(v) == first) exact = v;
    }
    if (exact != 0) {
      header.version = exact;
    } else {
      header = closest_schema(file, text);
    }
  } catch (const io::error::duplicated_column_in_header& e) {
    throw CsvError(file, header_at, e.column_name, "named twice in the header");
  } catch (const io::error::base& e) {
    // fccp's read_header leaves its errors without a line: they are the header's.
    const CsvError error = translate(file, column_count(kSchemaVersion), e);
    if (error.line() > 0) throw error;
    throw CsvError(file, header_at, error.column(), error.message());
  }
  return with_column_count(
      header.version, [&](auto n) { return read_version<decltype(n)::value>(file, text, header, lines); });
}

}  // namespace

CsvError::CsvError(std::string file, std::int64_t line, std::string column, std::string message)
    : std::runtime_error(file + where_line(line) + where_column(column) + ": " + message),
      file_(std::move(file)),
      line_(line),
      column_(std::move(column)),
      message_(std::move(message)) {}

std::vector<Record> read_csv(const std::string& path, std::vector<std::int64_t>* lines) {
  return read_all(path, file_text(path), lines);
}

std::vector<Record> read_csv_text(const std::string& name, const std::string& text,
                                  std::vector<std::int64_t>* lines) {
  return read_all(name, text, lines);
}

std::int64_t record_line(const std::vector<std::int64_t>& lines, std::size_t i) {
  return i < lines.size() ? lines[i] : static_cast<std::int64_t>(i) + 2;
}

}  // namespace rb

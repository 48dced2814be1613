// Reads a CSV written by CsvWriter back into Records (for compare, merge and tests). The
// header picks the schema: rmsnorm-bench/2 (kRecordColumns) or an older one (its subset of
// the columns; rows are upgraded, the columns they lack left at their defaults). Strict: the
// header must be exactly one schema's columns in order, every row must carry that schema, and
// any malformed field, or a value outside its column's accepted values (columns.h: M >= 1,
// finite bandwidths, min_us <= median_us <= max_us, ...), is an error that names file, line and
// column.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "reports/record.h"

namespace rb {

// A CSV input error. what() is "FILE:LINE: column COL: message"; the line part is left out
// when there is no line (the file cannot be opened) and the column part when the error is
// about the whole line (too few or too many fields).
class CsvError : public std::runtime_error {
 public:
  CsvError(std::string file, std::int64_t line, std::string column, std::string message);

  const std::string& file() const { return file_; }
  std::int64_t line() const { return line_; }  // 1-based, the header is line 1; 0 = none
  const std::string& column() const { return column_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  std::int64_t line_;
  std::string column_;
  std::string message_;
};

// Reads every row of the CSV at path. Blank lines are skipped. Throws CsvError.
std::vector<Record> read_csv(const std::string& path);

// The same for CSV text held in memory; name stands for the file in error messages.
std::vector<Record> read_csv_text(const std::string& name, const std::string& text);

}  // namespace rb

// Reads a CSV written by CsvWriter back into Records (for compare, merge and tests). The
// header picks the schema: rmsnorm-bench/2 (kRecordColumns) or an older one (its subset of
// the columns; rows are upgraded, the columns they lack left at their defaults). Strict: the
// header must be exactly one schema's columns in order, every row must carry that schema, and
// any malformed field, or a value outside its column's accepted values (columns.h: M >= 1,
// finite bandwidths, min_us <= median_us <= max_us, ...), is an error that names file, line and
// column. A header that lacks columns or has unknown ones is named as such, a file holding a
// NUL byte as binary.
#pragma once

#include <cstddef>
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

// Reads every row of the CSV at path. Blank lines are skipped. The file is read once, start to
// end, so a pipe or FIFO works as well as a file. lines, when given, receives the line each
// record was read from (1-based, parallel to the result), for errors found after reading (a
// duplicate key). Throws CsvError.
std::vector<Record> read_csv(const std::string& path, std::vector<std::int64_t>* lines = nullptr);

// The same for CSV text held in memory; name stands for the file in error messages.
std::vector<Record> read_csv_text(const std::string& name, const std::string& text,
                                  std::vector<std::int64_t>* lines = nullptr);

// The line of the i-th record: lines[i] from read_csv, or, where there are no lines (records
// held in memory), the line CsvWriter writes it on (the header on line 1, one row per line).
std::int64_t record_line(const std::vector<std::int64_t>& lines, std::size_t i);

}  // namespace rb

// Streams Records to a CSV file, one flushed line per case, so a crash loses nothing that
// completed. Columns and their order are kRecordColumns (columns.h), always the current
// schema (kSchema).
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "reports/record.h"

namespace rb {

// One CSV line for r, without the trailing newline. Text fields holding a comma or a quote
// are quoted RFC-4180 style; line breaks inside a field are written as spaces, because a
// record is one line (the reader, fast-cpp-csv-parser, splits lines before it unquotes).
// Doubles use the shortest round-tripping text; unset optionals are empty.
std::string csv_row(const Record& r);

// The header line (csv_columns() joined by commas), without the trailing newline.
std::string csv_header();

// A whole CSV file: the header and one line per row, each ending in a newline. For writers
// that replace a file in one go (write_file_atomic) rather than stream it.
std::string csv_file_text(const std::vector<Record>& rows);

class CsvWriter {
 public:
  // Creates (truncates) path and writes the header. Throws std::runtime_error naming path.
  explicit CsvWriter(const std::string& path);

  // Appends one row and flushes it to the OS. Throws std::runtime_error naming the path.
  void write(const Record& r);

  const std::string& path() const { return path_; }

 private:
  void write_line(const std::string& line);

  struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::string path_;
  std::unique_ptr<std::FILE, FileCloser> file_;
};

}  // namespace rb

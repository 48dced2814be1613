#include "reports/csv_writer.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "reports/columns.h"

namespace rb {
namespace {

std::string csv_field(const std::string& s) {
  std::string flat = s;
  for (char& c : flat) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  if (flat.find_first_of(",\"") == std::string::npos) return flat;
  std::string quoted = "\"";
  for (char c : flat) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

std::string errno_text(int err) { return err != 0 ? std::strerror(err) : "unknown error"; }

}  // namespace

std::string csv_header() {
  std::string line;
  for (const std::string& c : csv_columns()) {
    if (!line.empty()) line += ',';
    line += c;
  }
  return line;
}

std::string csv_row(const Record& r) {
  std::string line;
  for (const Column& c : kRecordColumns) {
    if (&c != &kRecordColumns[0]) line += ',';
    line += csv_field(column_text(c, r));
  }
  return line;
}

std::string csv_file_text(const std::vector<Record>& rows) {
  std::string text = csv_header() + '\n';
  for (const Record& r : rows) text += csv_row(r) + '\n';
  return text;
}

CsvWriter::CsvWriter(const std::string& path) : path_(path), file_(std::fopen(path.c_str(), "w")) {
  if (!file_) {
    throw std::runtime_error(
        fmt::format("cannot create CSV file {}: {}", path_, errno_text(errno)));
  }
  write_line(csv_header());
}

void CsvWriter::write(const Record& r) { write_line(csv_row(r)); }

void CsvWriter::write_line(const std::string& line) {
  const std::string text = line + '\n';
  errno = 0;
  if (std::fwrite(text.data(), 1, text.size(), file_.get()) != text.size() ||
      std::fflush(file_.get()) != 0) {
    throw std::runtime_error(fmt::format("cannot write CSV file {}: {}", path_, errno_text(errno)));
  }
}

}  // namespace rb

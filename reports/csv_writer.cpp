#include "reports/csv_writer.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>

namespace rb {
namespace {

std::string csv_text(const std::string& s) {
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

std::string csv_opt(const std::optional<double>& v) {
  return v ? format_double(*v) : std::string();
}

std::string csv_opt(const std::optional<std::int64_t>& v) {
  return v ? fmt::format("{}", *v) : std::string();
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
  // Same order as csv_columns(); the round-trip test holds the two together.
  return fmt::format(
      "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},"
      "{},{},{},{},{},{},{}",
      csv_text(r.schema), csv_text(r.gpu), csv_text(r.cc), csv_text(r.kernel), csv_text(r.picked),
      csv_text(r.op), csv_text(r.dtype), csv_text(r.wdtype), csv_text(r.rdtype), r.M, r.H, r.stride,
      csv_text(r.layout), format_double(r.eps), csv_text(r.dist), r.seed, status_name(r.status),
      csv_text(r.reason), r.rows_checked, format_double(r.max_abs_err),
      format_double(r.max_rel_err), format_double(r.max_ulp), r.mismatches, r.worst_row,
      r.worst_col, format_double(r.atol), format_double(r.rtol), csv_opt(r.median_us),
      csv_opt(r.min_us), csv_opt(r.max_us), csv_opt(r.noise_pct), csv_opt(r.samples),
      csv_opt(r.graph_us), r.bytes, csv_opt(r.gbps), csv_opt(r.copy_gbps), csv_opt(r.pct_of_copy));
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

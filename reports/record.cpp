#include "reports/record.h"

#include <fmt/format.h>

namespace rb {

const char* status_name(Status s) {
  switch (s) {
    case Status::pass:
      return "pass";
    case Status::fail:
      return "fail";
    case Status::skip:
      return "skip";
    case Status::error:
      return "error";
  }
  return "error";  // unreachable for a valid enum; keeps -Wreturn-type quiet
}

std::optional<Status> parse_status(const std::string& s) {
  for (Status st : {Status::pass, Status::fail, Status::skip, Status::error}) {
    if (s == status_name(st)) return st;
  }
  return std::nullopt;
}

const std::vector<std::string>& csv_columns() {
  static const std::vector<std::string> columns = {
      "schema",       "gpu",         "cc",          "kernel",    "picked",     "op",
      "dtype",        "wdtype",      "rdtype",      "M",         "H",          "stride",
      "layout",       "eps",         "dist",        "seed",      "status",     "reason",
      "rows_checked", "max_abs_err", "max_rel_err", "max_ulp",   "mismatches", "worst_row",
      "worst_col",    "atol",        "rtol",        "median_us", "min_us",     "max_us",
      "noise_pct",    "samples",     "graph_us",    "bytes",     "gbps",       "copy_gbps",
      "pct_of_copy"};
  return columns;
}

std::string format_double(double v) { return fmt::format("{}", v); }

std::string case_key(const Record& r) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", r.kernel, r.op, r.dtype, r.wdtype,
                     r.rdtype, r.M, r.H, r.stride, r.layout, format_double(r.eps), r.dist, r.seed);
}

}  // namespace rb

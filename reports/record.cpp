#include "reports/record.h"

#include <fmt/format.h>

#include "reports/columns.h"

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

std::string schema_name(int version) { return fmt::format("rmsnorm-bench/{}", version); }

const std::vector<std::string>& csv_columns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> names;
    for (const Column& c : kRecordColumns) names.emplace_back(c.name);
    return names;
  }();
  return columns;
}

std::string format_double(double v) { return fmt::format("{}", v); }

std::string case_key(const Record& r) {
  std::string key;
  bool first = true;
  for (const Column& c : kRecordColumns) {
    if (!c.in_key) continue;
    if (!first) key += '|';
    key += column_text(c, r);
    first = false;
  }
  return key;
}

std::string case_label(const Record& r) {
  std::string label = fmt::format("{}/{}/{}/{}", r.op, r.kernel, r.dtype, r.wdtype);
  if (!r.rdtype.empty()) label += "/r=" + r.rdtype;
  label += fmt::format("/M={}/H={}/{}/{}/eps={}", r.M, r.H, r.layout, r.dist, format_double(r.eps));
  if (r.stride != r.H) label += fmt::format("/stride={}", r.stride);
  label += fmt::format("/seed={}", r.seed);
  if (r.convention != "fp32") label += "/conv=" + r.convention;
  if (!r.ydtype.empty() || r.y_scale) label += fmt::format("/y={}*{}", r.ydtype, r.y_scale ? format_double(*r.y_scale) : "");
  return label;
}

}  // namespace rb

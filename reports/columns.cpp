#include "reports/columns.h"

#include <fmt/format.h>

#include "core/names.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>
#include <type_traits>

namespace rb {
namespace {

template <typename>
inline constexpr bool kAlwaysFalse = false;

template <typename T>
std::optional<T> optional_integer(const std::string& s) {
  if (s.empty()) return std::nullopt;
  T v{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range) {
    throw ColumnValueError(fmt::format("'{}' is out of range", s));
  }
  if (ec != std::errc() || end != s.data() + s.size()) {
    throw ColumnValueError(fmt::format("'{}' is not an integer", s));
  }
  return v;
}

template <typename T>
T integer(const std::string& s) {
  const std::optional<T> v = optional_integer<T>(s);
  if (!v) throw ColumnValueError("empty, expected an integer");
  return *v;
}

std::optional<double> optional_real(const std::string& s) {
  if (s.empty()) return std::nullopt;
  double v = 0;
  // from_chars is locale-independent and reads "nan" and "inf" as format_double prints them.
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) {
    throw ColumnValueError(fmt::format("'{}' is not a number", s));
  }
  return v;
}

double real(const std::string& s) {
  const std::optional<double> v = optional_real(s);
  if (!v) throw ColumnValueError("empty, expected a number");
  return *v;
}

}  // namespace

namespace rule {
namespace {

std::string refused(const std::string& value, const std::string& accepted) {
  return fmt::format("{} is out of range (accepted: {})", value, accepted);
}

std::string bound_text(std::int64_t limit, const char* bound) {
  return bound ? fmt::format("{} = {}", bound, limit) : fmt::format("{}", limit);
}

// Relative 1e-9: far below anything a gate could read as a change, far above the last-digit
// differences of a writer that rounds to 15 significant digits.
bool close(double got, double want) { return std::fabs(got - want) <= 1e-9 * std::fabs(want); }

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// "" when v is one of E's names (core/names.h: what the runner writes), else the refusal
// listing them.
template <class E>
std::string one_of(const std::string& v) {
  return parse_name<E>(v) ? std::string() : refused("'" + v + "'", joined(all_names<E>()));
}

}  // namespace

std::string at_least(std::int64_t v, std::int64_t min, const char* bound) {
  return v >= min ? std::string() : refused(fmt::format("{}", v), ">= " + bound_text(min, bound));
}

std::string at_least(const std::optional<std::int64_t>& v, std::int64_t min) {
  return v ? at_least(*v, min) : std::string();
}

std::string at_most(std::int64_t v, std::int64_t max, const char* bound) {
  return v <= max ? std::string() : refused(fmt::format("{}", v), "<= " + bound_text(max, bound));
}

std::string positive(double v) {
  return std::isfinite(v) && v > 0 ? std::string() : refused(format_double(v), "finite and > 0");
}

std::string positive(const std::optional<double>& v) { return v ? positive(*v) : std::string(); }

std::string non_negative(double v) {
  return std::isfinite(v) && v >= 0 ? std::string() : refused(format_double(v), "finite and >= 0");
}

std::string non_negative(const std::optional<double>& v) { return v ? non_negative(*v) : std::string(); }

std::string error_metric(double v, Status s) {
  if (std::isfinite(v) && v >= 0) return std::string();
  if (s == Status::fail && (std::isnan(v) || v > 0)) return std::string();
  return refused(format_double(v), s == Status::fail ? "finite and >= 0, inf or nan"
                                                     : fmt::format("finite and >= 0 where status is {}; "
                                                                   "inf or nan only where it is fail",
                                                                   status_name(s)));
}

std::string index_or_none(std::int64_t v, std::int64_t size, const char* dim) {
  return v < size ? std::string()
                  : refused(fmt::format("{}", v), fmt::format("-1 or below {} = {}", dim, size));
}

std::string compute_capability(const Record& r) {
  const auto number = [](const std::string& t) {
    return !t.empty() && std::all_of(t.begin(), t.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  };
  const std::size_t dot = r.cc.find('.');
  if (r.cc.empty() ||
      (dot != std::string::npos && number(r.cc.substr(0, dot)) && number(r.cc.substr(dot + 1))))
    return std::string();
  return refused("'" + r.cc + "'", "empty or major.minor, e.g. 9.0");
}

std::string kernel(const Record& r) {
  return r.kernel.empty() ? refused("''", "a kernel's name, not empty") : std::string();
}

std::string provider(const Record& r) {
  // Checked on every row read: the list of names is built only for a refusal.
  if (r.provider.empty() || std::find(std::begin(kProviders), std::end(kProviders), r.provider) != std::end(kProviders))
    return std::string();
  return refused("'" + r.provider + "'",
                 "empty or " + joined(std::vector<std::string>(std::begin(kProviders), std::end(kProviders))));
}

std::string provider_with_kernel(const Record& r) {
  for (const char* p : {"plugin", "peer"}) {
    const bool named = r.kernel.rfind(std::string(p) + ":", 0) == 0;
    if (named && r.provider != p && !r.provider.empty())
      return refused("'" + r.provider + "'", fmt::format("{} for kernel {}", p, r.kernel));
    if (!named && r.provider == p)
      return fmt::format("'{}' for kernel {}, whose name lacks the '{}:' prefix that provider's kernels carry",
                         r.provider, r.kernel, p);
  }
  return std::string();
}

std::string op(const Record& r) { return one_of<Op>(r.op); }
std::string layout(const Record& r) { return one_of<Layout>(r.layout); }
std::string dist(const Record& r) { return one_of<Dist>(r.dist); }
std::string convention(const Record& r) { return one_of<Convention>(r.convention); }

std::string input_dtype(const std::string& v) {
  const std::optional<DType> d = parse_dtype(v);
  if (d && is_input_dtype(*d)) return std::string();
  std::vector<std::string> names;
  for (DType t : all_of<DType>())
    if (is_input_dtype(t)) names.emplace_back(dtype_name(t));
  return refused("'" + v + "'", joined(names));
}

std::string residual_with_op(const Record& r) {
  const std::optional<Op> o = parse_op(r.op);
  if (!o) return std::string();  // op's own rule names it
  if (has_residual(*o) != r.rdtype.empty()) return std::string();
  if (r.rdtype.empty()) {
    return fmt::format("empty while op is {} (an op with a residual stream records its dtype)", r.op);
  }
  std::vector<std::string> residual_ops;
  for (Op each : all_of<Op>())
    if (has_residual(each)) residual_ops.emplace_back(op_name(each));
  return refused("'" + r.rdtype + "'", fmt::format("empty where op is {}; only {} have a residual stream",
                                                   r.op, joined(residual_ops)));
}

std::string output_dtype(const Record& r) {
  if (r.ydtype.empty()) return std::string();
  const std::optional<DType> d = parse_dtype(r.ydtype);
  if (d && is_fp8(*d)) return std::string();
  return refused("'" + r.ydtype + "'", "empty (x's dtype) or an fp8 dtype: e4m3, e5m2");
}

std::string scale_with_fp8(const Record& r) {
  if (r.y_scale.has_value() == !r.ydtype.empty()) return std::string();
  return r.y_scale ? "set while ydtype is empty (only an fp8 y has a scale)" : "empty while ydtype is fp8 (an fp8 y has a scale)";
}

std::string pass_has_no_mismatches(const Record& r) {
  return r.status != Status::pass || r.mismatches == 0
             ? std::string()
             : refused(fmt::format("{}", r.mismatches), "0 where status is pass");
}

std::string timed_like_median(bool set, const Record& r) {
  if (set == r.median_us.has_value()) return std::string();
  return set ? "set while median_us is empty (a row is timed or not: the timing columns are all set or all "
               "empty)"
             : "empty while median_us is set (a row is timed or not: the timing columns are all set or all "
               "empty)";
}

std::string median_relation(const Record& r) {
  if (!r.median_us) return std::string();
  if (r.status != Status::pass && r.status != Status::fail) {
    return fmt::format("{} in a {} row (accepted: empty; only pass and fail rows are timed)",
                       format_double(*r.median_us), status_name(r.status));
  }
  if (r.min_us && r.max_us && !(*r.min_us <= *r.median_us && *r.median_us <= *r.max_us)) {
    return refused(format_double(*r.median_us),
                   fmt::format("min_us = {} <= median_us <= max_us = {}", format_double(*r.min_us),
                               format_double(*r.max_us)));
  }
  return std::string();
}

std::string gbps_relation(const Record& r) {
  if (!r.gbps) return timed_like_median(false, r);
  if (!r.median_us) return timed_like_median(true, r);
  const double want = static_cast<double>(r.bytes) / (*r.median_us * 1e3);
  if (close(*r.gbps, want)) return std::string();
  return fmt::format("{} does not match bytes / median_us / 1e3 = {} / {} / 1e3 = {}", format_double(*r.gbps),
                     r.bytes, format_double(*r.median_us), format_double(want));
}

std::string pct_of_copy_relation(const Record& r) {
  if (!r.pct_of_copy) return timed_like_median(false, r);
  if (!r.median_us) return timed_like_median(true, r);
  if (!r.gbps || !r.copy_gbps) return std::string();  // their own relations name them
  const double want = 100.0 * *r.gbps / *r.copy_gbps;
  if (close(*r.pct_of_copy, want)) return std::string();
  return fmt::format("{} does not match 100 * gbps / copy_gbps = 100 * {} / {} = {}",
                     format_double(*r.pct_of_copy), format_double(*r.gbps), format_double(*r.copy_gbps),
                     format_double(want));
}

}  // namespace rule

std::optional<ColumnViolation> find_violation(const Record& r) {
  for (const Column& c : kRecordColumns) {
    if (!c.domain) continue;
    std::string why = c.domain(r);
    if (!why.empty()) return ColumnViolation{&c, std::move(why)};
  }
  for (const Column& c : kRecordColumns) {
    if (!c.relation) continue;
    std::string why = c.relation(r);
    if (!why.empty()) return ColumnViolation{&c, std::move(why)};
  }
  return std::nullopt;
}

std::vector<const Column*> schema_columns(int version) {
  std::vector<const Column*> columns;
  if (column_count(version) == 0) return columns;
  for (const Column& c : kRecordColumns) {
    if (c.since <= version) columns.push_back(&c);
  }
  return columns;
}

std::string column_text(const Column& c, const Record& r) {
  return std::visit(
      [&](auto member) -> std::string {
        using T = std::decay_t<decltype(r.*member)>;
        const T& v = r.*member;
        if constexpr (std::is_same_v<T, std::string>) {
          return v;
        } else if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint64_t>) {
          return fmt::format("{}", v);
        } else if constexpr (std::is_same_v<T, double>) {
          return format_double(v);
        } else if constexpr (std::is_same_v<T, std::optional<double>>) {
          return v ? format_double(*v) : std::string();
        } else if constexpr (std::is_same_v<T, std::optional<std::int64_t>>) {
          return v ? fmt::format("{}", *v) : std::string();
        } else if constexpr (std::is_same_v<T, Status>) {
          return status_name(v);
        } else {
          static_assert(kAlwaysFalse<T>, "a column kind without a text form");
        }
      },
      c.field);
}

void set_column(const Column& c, Record& r, const std::string& text) {
  std::visit(
      [&](auto member) {
        using T = std::decay_t<decltype(r.*member)>;
        T& v = r.*member;
        if constexpr (std::is_same_v<T, std::string>) {
          v = text;
        } else if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint64_t>) {
          v = integer<T>(text);
        } else if constexpr (std::is_same_v<T, double>) {
          v = real(text);
        } else if constexpr (std::is_same_v<T, std::optional<double>>) {
          v = optional_real(text);
        } else if constexpr (std::is_same_v<T, std::optional<std::int64_t>>) {
          v = optional_integer<std::int64_t>(text);
        } else if constexpr (std::is_same_v<T, Status>) {
          const std::optional<Status> s = parse_status(text);
          if (!s) {
            throw ColumnValueError(
                fmt::format("unknown status '{}' (expected pass, fail, skip or error)", text));
          }
          v = *s;
        } else {
          static_assert(kAlwaysFalse<T>, "a column kind without a parser");
        }
      },
      c.field);
}

}  // namespace rb

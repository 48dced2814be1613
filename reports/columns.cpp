#include "reports/columns.h"

#include <fmt/format.h>

#include <charconv>
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

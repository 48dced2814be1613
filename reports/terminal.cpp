#include "reports/terminal.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>

namespace rb {
namespace {

constexpr const char* kNone = "—";

std::string kernel_label(const Record& r) {
  if (r.picked.empty() || r.picked == r.kernel) return r.kernel;
  return r.kernel + "→" + r.picked;
}

// Failures shout so they stand out in a column of "pass".
std::string status_label(Status s) {
  switch (s) {
    case Status::fail:
      return "FAIL";
    case Status::error:
      return "ERROR";
    default:
      return status_name(s);
  }
}

std::string opt(const std::optional<double>& v, const char* format) {
  return v ? fmt::format(fmt::runtime(format), *v) : kNone;
}

// Display width in terminal columns: UTF-8 code points (our labels use only narrow ones).
std::size_t width(const std::string& s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

}  // namespace

std::string counts_line(const std::vector<Record>& records) {
  std::array<std::size_t, 4> counts{};
  for (const Record& r : records) ++counts[static_cast<std::size_t>(r.status)];
  return fmt::format("{} pass, {} fail, {} skip, {} error", counts[0], counts[1], counts[2],
                     counts[3]);
}

std::string summary_table(const std::vector<Record>& records) {
  constexpr std::size_t kCols = 9;
  using Row = std::array<std::string, kCols>;
  // Text columns are left-aligned, numbers right-aligned.
  constexpr std::array<bool, kCols> right = {false, false, false, true, true,
                                             true,  true,  true,  false};
  std::vector<Row> rows = {
      {"kernel", "op", "dtype", "M", "H", "median µs", "GB/s", "% copy", "status"}};
  for (const Record& r : records) {
    const bool timed = r.median_us.has_value();
    if (!timed && r.status != Status::fail && r.status != Status::error) continue;
    rows.push_back({kernel_label(r), r.op, r.dtype, fmt::format("{}", r.M), fmt::format("{}", r.H),
                    opt(r.median_us, "{:.2f}"), opt(r.gbps, "{:.0f}"),
                    opt(r.pct_of_copy, "{:.1f}%"), status_label(r.status)});
  }

  std::string out;
  if (rows.size() > 1) {
    std::array<std::size_t, kCols> w{};
    for (const Row& row : rows) {
      for (std::size_t c = 0; c < kCols; ++c) w[c] = std::max(w[c], width(row[c]));
    }
    for (const Row& row : rows) {
      std::string line;
      for (std::size_t c = 0; c < kCols; ++c) {
        const std::string pad(w[c] - width(row[c]), ' ');
        if (c > 0) line += "  ";
        line += right[c] ? pad + row[c] : row[c] + pad;
      }
      line.erase(line.find_last_not_of(' ') + 1);
      out += line + '\n';
    }
  }
  out += counts_line(records) + '\n';
  return out;
}

std::string progress_line(std::size_t done, std::size_t total, const Record& last) {
  const int digits = static_cast<int>(fmt::format("{}", total).size());
  std::string line =
      fmt::format("[{:>{}}/{}] {} {} {} M={} H={} {}", done, digits, total, last.op, last.dtype,
                  kernel_label(last), last.M, last.H, status_label(last.status));
  if (last.status == Status::pass && last.gbps) {
    line += fmt::format(" {:.0f} GB/s", *last.gbps);
    if (last.pct_of_copy) line += fmt::format(" ({:.1f}%)", *last.pct_of_copy);
  }
  return line;
}

}  // namespace rb

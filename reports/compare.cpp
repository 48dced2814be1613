#include "reports/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

#include "reports/csv_reader.h"
#include "reports/markdown.h"

namespace rb {
namespace {

using Index = std::unordered_map<std::string, std::size_t>;

Index index_by_key(const std::vector<Record>& rows, const std::vector<std::int64_t>& lines,
                   CompareError::Side side) {
  Index index;
  index.reserve(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto [it, inserted] = index.emplace(case_key(rows[i]), i);
    if (!inserted) {
      const std::int64_t line = record_line(lines, i);
      throw CompareError(side,
                         fmt::format("case {} appears twice, on lines {} and {}; a key must be unique "
                                     "within a file",
                                     case_label(rows[i]), record_line(lines, it->second), line),
                         line);
    }
  }
  return index;
}

std::vector<std::string> distinct_gpus(const std::vector<Record>& rows) {
  std::set<std::string> gpus;
  for (const Record& r : rows) gpus.insert(r.gpu);
  return {gpus.begin(), gpus.end()};
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += fmt::format("{}'{}'", s.empty() ? "" : ", ", n);
  return s;
}

// Missing or NaN noise adds nothing; an infinite noise makes every change "within noise".
double noise_or_zero(const std::optional<double>& noise) {
  return noise && !std::isnan(*noise) ? *noise : 0.0;
}

bool passes(Status s) { return s == Status::pass; }
bool fails(Status s) { return s == Status::fail || s == Status::error; }

// A pass that was never compared with the reference: a --no-check run writes status pass with
// rows_checked 0 (harness/runner.cpp), while a checked case checks at least its first and last
// rows. It says the kernel ran, not that its numerics hold.
bool unchecked(const Record& r) { return r.status == Status::pass && r.rows_checked == 0; }

// The status as the gate tells states apart: an unchecked pass is not a checked one.
std::string state_name(const Record& r) {
  return unchecked(r) ? "pass (not checked)" : status_name(r.status);
}

// The row's bandwidth in the metric's column.
const std::optional<double>& bandwidth(const Record& r, Metric m) {
  return m == Metric::gbps ? r.gbps : r.pct_of_copy;
}

// The rule, numerics first. A case that stopped passing is a regression (pass -> skip too: the
// current run no longer covers it), and so is a pass the baseline checked and the current run
// did not (pass -> pass (not checked)): its numerics are no longer covered either, and a gate
// fed a timing-only run must not vouch for them. A failure becomes an improvement only through
// a checked pass: fail -> pass (not checked) says nothing about the numerics, so it is shown as
// a status change that is neither, and the row is judged on bandwidth like any other. A gate
// meant for timing alone says so (options.allow_unchecked): checked -> unchecked is then such a
// status change too.
void judge(CompareRow& row, const CompareOptions& options) {
  const Record& b = *row.base;
  const Record& c = *row.cur;
  row.base_noise_pct = b.noise_pct;
  row.cur_noise_pct = c.noise_pct;
  const std::optional<double>& bv = bandwidth(b, options.metric);
  const std::optional<double>& cv = bandwidth(c, options.metric);
  if (bv && cv && std::isfinite(*bv) && std::isfinite(*cv) && *bv > 0) {
    row.change_pct = (*cv - *bv) / *bv * 100.0;
  }
  const std::string status_change = fmt::format("{} -> {}", state_name(b), state_name(c));
  if (passes(b.status) && (!passes(c.status) || (!unchecked(b) && unchecked(c) && !options.allow_unchecked))) {
    row.change = Change::regression;
    row.why = status_change;
    return;
  }
  if (fails(b.status) && passes(c.status) && !unchecked(c)) {
    row.change = Change::improvement;
    row.why = status_change;
    return;
  }
  if (row.change_pct) {
    const double change = *row.change_pct;
    const double noise = noise_or_zero(b.noise_pct) + noise_or_zero(c.noise_pct);
    const double moved = std::abs(change);
    row.why = fmt::format("{:+.1f}% {} ({:.1f} -> {:.1f}; noise {:.2f}% + {:.2f}%)", change,
                          options.metric == Metric::gbps ? "GB/s" : "in % of copy", *bv, *cv,
                          noise_or_zero(b.noise_pct), noise_or_zero(c.noise_pct));
    if (moved > options.max_slowdown_pct && moved > noise) {
      row.change = change < 0 ? Change::regression : Change::improvement;
    } else {
      row.change = Change::unchanged;
    }
  } else {
    row.change = Change::unchanged;
  }
  if (row.status_changed()) row.why = row.why.empty() ? status_change : status_change + ", " + row.why;
}

// ---------------------------------------------------------------------------------------
// Text output

// The metric's column heading, and a row's value in it.
const char* metric_unit(Metric m) { return m == Metric::gbps ? "GB/s" : "% of copy"; }

std::string value_text(const std::optional<Record>& r, Metric m) {
  return r && bandwidth(*r, m) ? fmt::format("{:.1f}", *bandwidth(*r, m)) : std::string("-");
}

std::string noise_text(const std::optional<double>& v) {
  return v ? fmt::format("{:.2f}%", *v) : std::string("-");
}

std::string change_text(const CompareRow& row) {
  return row.change_pct ? fmt::format("{:+.1f}%", *row.change_pct) : std::string("-");
}

const Record& any_record(const CompareRow& row) { return row.base ? *row.base : *row.cur; }

// Status changes first (they are binary), then by the size of the bandwidth change.
std::vector<const CompareRow*> sorted(const CompareResult& result, Change change) {
  std::vector<const CompareRow*> out;
  for (const CompareRow& r : result.rows)
    if (r.change == change) out.push_back(&r);
  std::stable_sort(out.begin(), out.end(), [](const CompareRow* a, const CompareRow* b) {
    if (a->status_changed() != b->status_changed()) return a->status_changed();
    const double da = a->change_pct ? std::abs(*a->change_pct) : 0.0;
    const double db = b->change_pct ? std::abs(*b->change_pct) : 0.0;
    return da > db;
  });
  return out;
}

// Unchanged keys whose status changed all the same (fail -> pass (not checked), skip -> pass):
// listed in both reports, so a case the current run no longer verifies is never only a count.
std::vector<const CompareRow*> other_status_changes(const CompareResult& result) {
  std::vector<const CompareRow*> out;
  for (const CompareRow* r : sorted(result, Change::unchanged))
    if (r->status_changed()) out.push_back(r);
  return out;
}

std::string gpus_text(const std::vector<std::string>& gpus) {
  return gpus.empty() ? std::string("no rows") : quoted_list(gpus);
}

std::string threshold_text(const CompareOptions& o) {
  return fmt::format(
      "a bandwidth change{} counts when it exceeds {}% and the two rows' noise added together",
      o.metric == Metric::gbps ? "" : ", in % of copy (each row against its own run's copy ceiling),",
      format_double(o.max_slowdown_pct));
}

// Bandwidth in GB/s between files of different GPUs: each card's own speed, not the code's.
bool gbps_across_gpus(const CompareResult& result) {
  return result.options.metric == Metric::gbps && !result.base_gpus.empty() && !result.cur_gpus.empty() &&
         result.base_gpus != result.cur_gpus;
}

constexpr const char* kAcrossGpusNote =
    "the files name different GPUs and bandwidth is compared in GB/s, which differ by card; --metric "
    "pct-of-copy compares each row against its own run's copy ceiling";

std::string verdict(const CompareResult& result) {
  const std::size_t n = result.regressions();
  if (n == 0) return "PASS: no regression";
  const std::size_t missing = result.options.allow_missing ? 0 : result.count(Change::missing);
  return fmt::format("FAIL: {} regression{}{}", n, n == 1 ? "" : "s",
                     missing ? fmt::format(" ({} missing from current)", missing) : std::string());
}

void md_table(std::string& md, const std::vector<const CompareRow*>& rows, Metric m) {
  md += fmt::format(
      "| case | status | {0} baseline | {0} current | change | noise baseline | noise current |\n",
      metric_unit(m));
  md += "|---|---|--:|--:|--:|--:|--:|\n";
  for (const CompareRow* r : rows) {
    const std::string status = r->status_changed()
                                   ? fmt::format("{} -> {}", state_name(*r->base), state_name(*r->cur))
                                   : state_name(*r->cur);
    md +=
        fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", md_escape(md_code(case_label(any_record(*r)))),
                    status, value_text(r->base, m), value_text(r->cur, m), change_text(*r),
                    noise_text(r->base_noise_pct), noise_text(r->cur_noise_pct));
  }
}

void md_list(std::string& md, const std::vector<const CompareRow*>& rows, Metric m) {
  for (const CompareRow* r : rows) {
    const Record& rec = any_record(*r);
    const std::optional<double>& v = bandwidth(rec, m);
    md += fmt::format("- {} ({}{})\n", md_code(case_label(rec)), state_name(rec),
                      v ? fmt::format(", {:.1f} {}", *v, metric_unit(m)) : std::string());
  }
}

}  // namespace

const char* metric_name(Metric m) { return m == Metric::gbps ? "gbps" : "pct-of-copy"; }

const char* change_name(Change c) {
  switch (c) {
    case Change::regression:
      return "regression";
    case Change::improvement:
      return "improvement";
    case Change::unchanged:
      return "unchanged";
    case Change::missing:
      return "missing";
    case Change::added:
      return "new";
  }
  return "unchanged";  // unreachable for a valid enum; keeps -Wreturn-type quiet
}

bool CompareRow::status_changed() const { return base && cur && state_name(*base) != state_name(*cur); }

std::size_t CompareResult::count(Change c) const {
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [c](const CompareRow& r) { return r.change == c; }));
}

std::size_t CompareResult::regressions() const {
  return count(Change::regression) + (options.allow_missing ? 0 : count(Change::missing));
}

CompareResult compare_records(const std::vector<Record>& base, const std::vector<Record>& cur,
                              const CompareOptions& options, const std::vector<std::int64_t>& base_lines,
                              const std::vector<std::int64_t>& cur_lines) {
  CompareResult result;
  result.options = options;
  const Index base_index = index_by_key(base, base_lines, CompareError::Side::baseline);
  const Index cur_index = index_by_key(cur, cur_lines, CompareError::Side::current);
  result.base_gpus = distinct_gpus(base);
  result.cur_gpus = distinct_gpus(cur);
  if (!options.ignore_gpu && !base.empty() && !cur.empty() && result.base_gpus != result.cur_gpus) {
    throw CompareError(CompareError::Side::both,
                       fmt::format("different GPUs: the baseline ran on {}, the current run on {} "
                                   "(--ignore-gpu compares them anyway)",
                                   quoted_list(result.base_gpus), quoted_list(result.cur_gpus)));
  }

  result.rows.reserve(base.size() + cur.size());
  for (const Record& b : base) {
    CompareRow row;
    row.key = case_key(b);
    row.base = b;
    const auto it = cur_index.find(row.key);
    if (it == cur_index.end()) {
      row.change = Change::missing;
      row.base_noise_pct = b.noise_pct;
      row.why = options.allow_missing ? "missing from current (allowed)" : "missing from current";
    } else {
      row.cur = cur[it->second];
      judge(row, options);
    }
    result.rows.push_back(std::move(row));
  }
  for (const Record& c : cur) {
    std::string key = case_key(c);
    if (base_index.count(key)) continue;
    CompareRow row;
    row.key = std::move(key);
    row.cur = c;
    row.change = Change::added;
    row.cur_noise_pct = c.noise_pct;
    row.why = "new in current";
    result.rows.push_back(std::move(row));
  }
  return result;
}

std::string compare_markdown(const CompareResult& result, const std::string& base_name,
                             const std::string& cur_name) {
  const CompareOptions& o = result.options;
  std::string md = "# rmsnorm-bench compare\n\n";
  md += fmt::format("**{}**\n\n", verdict(result));
  md += fmt::format("- Baseline: {} (GPU {})\n", md_code(base_name), md_escape(gpus_text(result.base_gpus)));
  md += fmt::format("- Current: {} (GPU {})\n", md_code(cur_name), md_escape(gpus_text(result.cur_gpus)));
  md += fmt::format(
      "- Rule: a case that stopped passing, or that the baseline checked and the current run "
      "did not (--no-check), is a regression; a failure is fixed only by a checked pass; {}{}\n",
      threshold_text(o), o.ignore_gpu ? " (GPU names not checked: --ignore-gpu)" : "");
  if (gbps_across_gpus(result)) md += fmt::format("- Note: {}\n", kAcrossGpusNote);
  md += fmt::format("- Missing keys: {}\n\n",
                    o.allow_missing ? "listed only (--allow-missing)" : "count as regressions");

  // A section of rows shown as a table, or "None.".
  const auto table_section = [&](const char* title, Change change) {
    const auto rows = sorted(result, change);
    md += fmt::format("## {} ({})\n\n", title, rows.size());
    if (rows.empty()) {
      md += "None.\n\n";
      return;
    }
    md_table(md, rows, o.metric);
    md += "\n";
  };
  table_section("Regressions", Change::regression);
  table_section("Improvements", Change::improvement);

  const auto unchanged = sorted(result, Change::unchanged);
  md += fmt::format("## Unchanged ({})\n\n", unchanged.size());
  md += fmt::format("{} key{} in both files within the threshold or within noise, or not timed in both.\n\n",
                    unchanged.size(), unchanged.size() == 1 ? "" : "s");
  const std::vector<const CompareRow*> other_status = other_status_changes(result);
  if (!other_status.empty()) {
    md += "Status changes that are neither a regression nor an improvement:\n\n";
    md_table(md, other_status, o.metric);
    md += "\n";
  }

  const auto missing = sorted(result, Change::missing);
  md += fmt::format("## Missing from current ({}{})\n\n", missing.size(),
                    missing.empty()   ? ""
                    : o.allow_missing ? ", listed only"
                                      : ", counted as regressions");
  if (missing.empty()) {
    md += "None.\n\n";
  } else {
    md_list(md, missing, o.metric);
    md += "\n";
  }

  const auto added = sorted(result, Change::added);
  md += fmt::format("## New in current ({})\n\n", added.size());
  if (added.empty()) {
    md += "None.\n";
  } else {
    md_list(md, added, o.metric);
  }
  return md;
}

std::string compare_text(const CompareResult& result, const std::string& base_name,
                         const std::string& cur_name) {
  constexpr std::size_t kMaxListed = 10;  // per kind that does not fail the gate
  std::string s = fmt::format("compare: baseline {} (GPU {}), current {} (GPU {})\n", base_name,
                              gpus_text(result.base_gpus), cur_name, gpus_text(result.cur_gpus));
  s += fmt::format("  {} keys: {} regression(s), {} improvement(s), {} unchanged, {} missing{}, {} new\n",
                   result.rows.size(), result.count(Change::regression), result.count(Change::improvement),
                   result.count(Change::unchanged), result.count(Change::missing),
                   result.options.allow_missing ? " (allowed)" : "", result.count(Change::added));
  if (gbps_across_gpus(result)) s += fmt::format("  note: {}\n", kAcrossGpusNote);
  const auto line = [&](const char* tag, const CompareRow& r) {
    s += fmt::format("  {:<12} {}: {}\n", tag, case_label(any_record(r)), r.why);
  };
  const auto listing = [&](const char* tag, const std::vector<const CompareRow*>& rows, bool all) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (!all && i == kMaxListed) {
        s += fmt::format("  {:<12} ... and {} more\n", tag, rows.size() - i);
        break;
      }
      line(tag, *rows[i]);
    }
  };
  listing("REGRESSION", sorted(result, Change::regression), true);
  listing("MISSING", sorted(result, Change::missing), !result.options.allow_missing);
  listing("improvement", sorted(result, Change::improvement), false);
  listing("status", other_status_changes(result), false);
  listing("new", sorted(result, Change::added), false);
  s += verdict(result) + "\n";
  return s;
}

}  // namespace rb

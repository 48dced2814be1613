// The run's markdown report: context, failures (with their worst location) first, then
// bandwidth tables of kernels x H per (op, dtype, wdtype[, rdtype], M) (a vendor kernel
// named with its provider and version), then the best built-in kernel against the best
// vendor kernel per shape where both passed, then skips.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reports/atomic_file.h"
#include "reports/record.h"

namespace rb {

struct RunContext {
  std::string gpu, cc, driver, cuda_runtime, tool_version, commit, command_line, started_at;
  double copy_gbps = 0;  // measured copy ceiling (read + write); 0 = not measured
  std::int64_t sms = 0;  // 0 = unknown
  double l2_mb = 0;      // 0 = unknown
  std::string timing_note;         // how cold samples were taken (L2 flush mode)
  std::vector<std::string> plots;  // image paths relative to the report, linked when present
};

// The plot file a (op, dtype, wdtype, M) panel set gets from scripts/plot.py, e.g.
// "fwd_bf16_bf16_M16384.png" (rdtype appended after an 'r' when set).
std::string plot_file_name(const Record& r);

std::string markdown_report(const RunContext& ctx, const std::vector<Record>& records);

// Markdown text: '|' escaped (it would end a table cell) and line breaks turned into spaces
// (they would end the table or the list item). The one escaper of every markdown writer here;
// a table cell holding inline code escapes the code span too (GFM reads "\|" there as '|').
std::string md_escape(const std::string& s);

// Inline code: s fenced by more backticks than its longest run of them (CommonMark), line
// breaks turned into spaces. Not escaped for a table: wrap it in md_escape there.
std::string md_code(const std::string& s);

// write_file_atomic (atomic_file.h) under its old name, for callers not yet switched.
inline void write_markdown_atomic(const std::string& path, const std::string& text) {
  write_file_atomic(path, text);
}

}  // namespace rb

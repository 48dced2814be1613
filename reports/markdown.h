// The run's markdown report: context, failures (with their worst location) first, then
// bandwidth tables of kernels x H per (op, dtype, wdtype[, rdtype], M), then skips.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

// Writes text to path + ".tmp.<pid>", flushes, closes and renames it over path, so a reader
// never sees a half-written report. Throws std::runtime_error naming path on failure (the
// temporary file is removed).
void write_markdown_atomic(const std::string& path, const std::string& text);

}  // namespace rb

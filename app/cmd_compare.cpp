#include "app/cmd_compare.h"

#include "app/cli_checks.h"
#include "app/lists.h"
#include "app/run_output.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <stdexcept>
#include <utility>
#include <vector>

#include "reports/atomic_file.h"
#include "reports/compare.h"
#include "reports/csv_reader.h"
#include "reports/record.h"

namespace rb {
namespace {

void print_error(const std::string& message) { fmt::print(stderr, "rmsnorm-bench compare: {}\n", message); }

// Checked before anything is judged, as the sweep checks its outputs: a verdict printed before
// the report fails to be written reads as a result, and a report written over an input
// (`--md base.csv`) destroys the baseline. The same file is the same directory entry (../x, a
// symlinked directory: same_entry) or the same file reached another way (a symlink to it, a
// hard link: equivalent). Throws std::invalid_argument naming --md.
void check_report_path(const CompareCmdOptions& o) {
  for (const auto& [what, input] : {std::pair{"BASELINE", o.baseline}, std::pair{"CURRENT", o.current}}) {
    std::error_code ec;  // an input that does not exist is the reader's to report
    if (same_entry(o.md, input) || std::filesystem::equivalent(o.md, input, ec)) {
      throw std::invalid_argument(fmt::format(
          "--md: '{}' is the same file as {} '{}'; the report would replace it", o.md, what, input));
    }
  }
  check_writable(o.md, "--md");
}

}  // namespace

CLI::App* setup_compare(CLI::App& app, CompareCmdOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "compare",
      "Regression gate: compare CURRENT.csv against BASELINE.csv (exit 0 no regression, 1 regression, "
      "2 bad input)");
  sub->add_option("BASELINE", o.baseline,
                  fmt::format("Baseline CSV (schema rmsnorm-bench/1 to /{})", kSchemaVersion))
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("CURRENT", o.current,
                  fmt::format("Current CSV (schema rmsnorm-bench/1 to /{})", kSchemaVersion))
      ->required()
      ->check(CLI::ExistingFile);
  add_parsed(
      *sub, "--max-slowdown", o.compare.max_slowdown_pct,
      [](const std::string& s) { return parse_double_in(s, 0.0, 1000.0); }, "PCT",
      "Bandwidth drop in % (0 to 1000) that fails the gate when it also exceeds both rows' noise added",
      fmt::format("{:g}", o.compare.max_slowdown_pct));
  sub->add_option("--md", o.md, "Also write a markdown report here")->check(non_empty_path())->default_str("none");
  sub->add_flag("--allow-missing", o.compare.allow_missing,
                "A baseline case absent from CURRENT is listed, not a regression (default: off)");
  sub->add_flag(
      "--ignore-gpu", o.compare.ignore_gpu,
      "Compare files measured on different GPUs (default: off; with --metric pct-of-copy their bandwidth "
      "compares too)");
  sub->add_option_function<std::string>(
         "--metric",
         [&o](const std::string& v) {
           o.compare.metric = v == metric_name(Metric::gbps) ? Metric::gbps : Metric::pct_of_copy;
         },
         "What a bandwidth change is measured in: gbps (the rows' GB/s), or pct-of-copy (each "
         "row's % of the copy ceiling its own run measured: comparable across GPUs)")
      ->check(CLI::IsMember({metric_name(Metric::gbps), metric_name(Metric::pct_of_copy)}))
      ->default_str(metric_name(o.compare.metric));
  sub->add_flag("--allow-unchecked", o.compare.allow_unchecked,
                "A case the baseline checked and CURRENT did not (a --no-check run) is judged on bandwidth, not a "
                "regression (default: off)");
  return sub;
}

int run_compare(const CompareCmdOptions& o) {
  if (!o.md.empty()) {
    try {
      check_report_path(o);
    } catch (const std::invalid_argument& e) {
      print_error(e.what());
      return 2;
    }
  }
  std::vector<Record> base, cur;
  std::vector<std::int64_t> base_lines, cur_lines;  // a duplicate key names FILE:LINE
  try {
    base = read_csv(o.baseline, &base_lines);
    cur = read_csv(o.current, &cur_lines);
  } catch (const CsvError& e) {
    print_error(e.what());
    return 2;
  } catch (const std::exception& e) {  // the reader names the file in every error it raises
    print_error(e.what());
    return 2;
  }

  CompareResult result;
  try {
    result = compare_records(base, cur, o.compare, base_lines, cur_lines);
  } catch (const CompareError& e) {
    const char* where = e.side() == CompareError::Side::baseline  ? o.baseline.c_str()
                        : e.side() == CompareError::Side::current ? o.current.c_str()
                                                                  : nullptr;
    const std::string line = e.line() > 0 ? fmt::format(":{}", e.line()) : std::string();
    print_error(where ? fmt::format("{}{}: {}", where, line, e.what()) : std::string(e.what()));
    return 2;
  }

  // The report before the verdict: a write that fails all the same (a full disk) then exits 2
  // without a PASS on the terminal.
  if (!o.md.empty()) {
    try {
      write_file_atomic(o.md, compare_markdown(result, o.baseline, o.current));
    } catch (const std::exception& e) {
      print_error(e.what());
      return 2;
    }
  }
  fmt::print("{}", compare_text(result, o.baseline, o.current));
  std::fflush(stdout);
  return result.failed() ? 1 : 0;
}

}  // namespace rb

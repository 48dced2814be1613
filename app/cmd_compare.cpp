#include "app/cmd_compare.h"

#include "app/cli_checks.h"
#include "app/lists.h"

#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <vector>

#include "reports/atomic_file.h"
#include "reports/compare.h"
#include "reports/csv_reader.h"
#include "reports/record.h"

namespace rb {
namespace {

void print_error(const std::string& message) { fmt::print(stderr, "rmsnorm-bench compare: {}\n", message); }

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
  sub->add_option("--md", o.md, "Also write a markdown report here")->default_str("none");
  sub->add_flag("--allow-missing", o.compare.allow_missing,
                "A baseline case absent from CURRENT is listed, not a regression (default: off)");
  sub->add_flag("--ignore-gpu", o.compare.ignore_gpu, "Compare files measured on different GPUs (default: off)");
  return sub;
}

int run_compare(const CompareCmdOptions& o) {
  std::vector<Record> base, cur;
  try {
    base = read_csv(o.baseline);
    cur = read_csv(o.current);
  } catch (const CsvError& e) {
    print_error(e.what());
    return 2;
  } catch (const std::exception& e) {  // the reader names the file in every error it raises
    print_error(e.what());
    return 2;
  }

  CompareResult result;
  try {
    result = compare_records(base, cur, o.compare);
  } catch (const CompareError& e) {
    const char* where = e.side() == CompareError::Side::baseline  ? o.baseline.c_str()
                        : e.side() == CompareError::Side::current ? o.current.c_str()
                                                                  : nullptr;
    print_error(where ? fmt::format("{}: {}", where, e.what()) : std::string(e.what()));
    return 2;
  }

  fmt::print("{}", compare_text(result, o.baseline, o.current));
  std::fflush(stdout);
  if (!o.md.empty()) {
    try {
      write_file_atomic(o.md, compare_markdown(result, o.baseline, o.current));
    } catch (const std::exception& e) {
      print_error(e.what());
      return 2;
    }
  }
  return result.failed() ? 1 : 0;
}

}  // namespace rb

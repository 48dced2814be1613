#include "app/cmd_merge.h"

#include <fmt/format.h>

#include <cstdint>
#include <exception>
#include <utility>

#include "app/cli_checks.h"
#include "reports/atomic_file.h"
#include "reports/csv_reader.h"
#include "reports/csv_writer.h"
#include "reports/merge.h"
#include "reports/record.h"

namespace rb {
namespace {

void print_error(const std::string& message) { fmt::print(stderr, "rmsnorm-bench merge: {}\n", message); }

}  // namespace

CLI::App* setup_merge(CLI::App& app, MergeOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "merge", "Merge CSVs (e.g. the shards of a sweep) into one; identical repeated rows are kept once");
  sub->add_option("INPUTS", o.inputs,
                  fmt::format("CSV files (schema rmsnorm-bench/1 to /{0}), in order; the output is /{0}",
                              kSchemaVersion))
      ->required()
      ->check(CLI::ExistingFile)
      ->default_str("");
  sub->add_option("-o,--output", o.output, "The merged CSV")->required()->check(non_empty_path());
  sub->add_flag("--update", o.update,
                "A later input's row replaces an earlier input's row of the same case, in its place "
                "(e.g. a baseline refreshed with the cases measured again); without it that is a conflict "
                "(exit 2). Two rows of one case within one input are a conflict either way");
  return sub;
}

int run_merge(const MergeOptions& o) {
  std::vector<std::pair<std::string, std::vector<Record>>> inputs;
  std::vector<std::vector<std::int64_t>> lines(o.inputs.size());  // a conflict names FILE:LINE
  std::vector<Record> merged;
  std::size_t replaced = 0;
  try {
    for (std::size_t k = 0; k < o.inputs.size(); ++k)
      inputs.emplace_back(o.inputs[k], read_csv(o.inputs[k], &lines[k]));
    merged = merge_records(inputs, o.update ? OnConflict::later_wins : OnConflict::refuse, &replaced, lines);
  } catch (const std::exception& e) {  // CsvError names file:line, MergeError the case and files
    print_error(e.what());
    return 2;
  }
  try {
    // Beside the output, then renamed: a failed merge never leaves a half-written file where
    // a complete one is expected (and an input named as the output is read before it goes).
    write_file_atomic(o.output, csv_file_text(merged));
  } catch (const std::exception& e) {
    print_error(e.what());
    return 2;
  }
  std::size_t total = 0;
  for (const auto& in : inputs) total += in.second.size();
  fmt::print("merged {} rows from {} file(s) into {} ({} replaced by a later file's row, {} identical duplicate(s) "
             "dropped)\n",
             merged.size(), inputs.size(), o.output, replaced, total - merged.size() - replaced);
  return 0;
}

}  // namespace rb

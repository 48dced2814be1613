// `compare BASELINE.csv CURRENT.csv`: the CI regression gate. Exit 0 no regression, 1 a
// regression, 2 bad input (unreadable or malformed CSV, duplicate key, different GPUs).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "reports/compare.h"

namespace rb {

struct CompareCmdOptions {
  std::string baseline;
  std::string current;
  std::string md;  // markdown report path; empty = none
  CompareOptions compare;
};

CLI::App* setup_compare(CLI::App& app, CompareCmdOptions& o);
int run_compare(const CompareCmdOptions& o);

}  // namespace rb

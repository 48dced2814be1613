// `merge A.csv B.csv ... -o ALL.csv`: one CSV from the shards of a sweep. Exit 0 merged,
// 2 bad input (unreadable or malformed CSV) or a conflict (one case, different rows).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace rb {

struct MergeOptions {
  std::vector<std::string> inputs;
  std::string output;
};

CLI::App* setup_merge(CLI::App& app, MergeOptions& o);
int run_merge(const MergeOptions& o);

}  // namespace rb

// `merge A.csv B.csv ... -o ALL.csv`: one CSV from the shards of a sweep. Exit 0 merged,
// 2 bad input (unreadable or malformed CSV) or a conflict (one case, different rows).
// `merge --update BASE.csv NEW.csv -o BASE.csv`: NEW's rows replace BASE's rows of the same
// case, in their place (the rest appended): a baseline refreshed where it was re-measured.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace rb {

struct MergeOptions {
  std::vector<std::string> inputs;
  std::string output;
  bool update = false;  // a later input's row replaces an earlier input's row of the same case
};

CLI::App* setup_merge(CLI::App& app, MergeOptions& o);
int run_merge(const MergeOptions& o);

}  // namespace rb

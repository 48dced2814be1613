// `list`: each kernel with its capabilities; --all adds the mutants.
#pragma once

#include <CLI/CLI.hpp>

namespace rb {

struct ListOptions {
  bool all = false;
};

CLI::App* setup_list(CLI::App& app, ListOptions& o);
int run_list(const ListOptions& o);

}  // namespace rb

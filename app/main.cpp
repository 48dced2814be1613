// rmsnorm-bench: validates and benchmarks GPU RMSNorm kernels. main only wires the
// subcommands; each lives in its own file.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <new>
#include <rb_version.h>

#include "app/cli_checks.h"
#include "app/cmd_bench.h"
#include "app/cmd_bisect.h"
#include "app/cmd_compare.h"
#include "app/cmd_list.h"
#include "app/cmd_merge.h"
#include "app/exit_codes.h"
#include "harness/cuda_check.h"
#include "harness/wait.h"
#include "kernels/plugin.h"
#include "kernels/vendor/vendor.h"

namespace {

// --plugin PATH (repeatable, anywhere on the line): loaded before the options are set up, so
// the plugin's kernels are known to --kernel's check and to every subcommand, list included.
// Returns false (after saying why) when one cannot be used.
bool load_plugins(int argc, char** argv) {
  const std::string flag = "--plugin";
  // --cudnn-lib too is needed before the registry is built: the cudnn kernel's version is
  // the loaded library's.
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--cudnn-lib") rb::vendor::set_options({argv[i + 1], false});
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    std::string path;
    if (a == flag) {
      if (i + 1 >= argc) return true;  // CLI11 reports the missing value
      path = argv[++i];
    } else if (a.rfind(flag + "=", 0) == 0) {
      path = a.substr(flag.size() + 1);
    } else {
      continue;
    }
    try {
      rb::load_plugin(path);
    } catch (const rb::PluginError& e) {
      std::cerr << "rmsnorm-bench: " << e.what() << "\n";
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rmsnorm-bench: validate and benchmark GPU RMSNorm kernels against an fp64 reference.\n"
               "With no subcommand, runs a sweep (exit 0 pass, 1 fail, 2 bad input, 3 no GPU, 4 CUDA error, "
               "5 host error, 130/143 interrupted by SIGINT/SIGTERM)."};
  // --help shows every option's default.
  app.option_defaults()->always_capture_default();
  app.set_version_flag("--version", std::string("rmsnorm-bench ") + RB_VERSION + " commit=" + RB_COMMIT);
  if (!load_plugins(argc, argv)) return 2;
  std::vector<std::string> plugins;  // already loaded; declared so --help shows it
  const auto add_plugin_option = [&](CLI::App& a) {
    a.add_option("--plugin", plugins,
                 "Load user kernels from a shared library (C ABI: include/rmsnorm_bench_plugin.h); "
                 "registers plugin:<name> kernels. Repeatable")
        ->check(CLI::ExistingFile)
        ->default_str("none");
  };
  add_plugin_option(app);
  rb::BenchOptions bench;
  rb::setup_bench(app, bench);
  rb::ListOptions list;
  CLI::App* list_cmd = rb::setup_list(app, list);
  rb::CompareCmdOptions compare;
  CLI::App* compare_cmd = rb::setup_compare(app, compare);
  rb::MergeOptions merge;
  CLI::App* merge_cmd = rb::setup_merge(app, merge);
  rb::BisectOptions bisect;
  CLI::App* bisect_cmd = rb::setup_bisect(app, bisect);
  // Every command takes --plugin (a script may pass the same options to each); compare and
  // merge read CSVs only, so the plugin's kernels go unused there.
  for (CLI::App* cmd : {list_cmd, compare_cmd, merge_cmd, bisect_cmd}) add_plugin_option(*cmd);
  for (int i = 0; i < argc; ++i) bench.command_line += (i ? " " : "") + std::string(argv[i]);
  bisect.command_line = bench.command_line;
  for (int i = 1; i < argc; ++i) bench.args.emplace_back(argv[i]);

  for (const auto check : {rb::unknown_option, rb::empty_list_item})
    if (const std::string why = check(app, argc, argv); !why.empty()) {
      std::cerr << "rmsnorm-bench: " << why << "\nRun with --help for more information.\n";
      return rb::kExitUsage;
    }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  const auto dispatch = [&]() -> int {
    try {
      if (list_cmd->parsed()) return rb::run_list(list);
      if (compare_cmd->parsed()) return rb::run_compare(compare);
      if (merge_cmd->parsed()) return rb::run_merge(merge);
      if (bisect_cmd->parsed()) return rb::run_bisect_command(bisect);
      return rb::run_bench(bench);
    } catch (const std::invalid_argument& e) {
      std::cerr << "rmsnorm-bench: " << e.what() << "\n";
      return rb::kExitUsage;
    } catch (const rb::CudaError& e) {
      std::cerr << "rmsnorm-bench: CUDA error: " << e.what() << "\n";
      return rb::kExitCudaError;
    } catch (const std::bad_alloc&) {
      std::cerr << "rmsnorm-bench: out of host memory (std::bad_alloc); this is not a CUDA error\n";
      return rb::kExitHostError;
    } catch (const std::exception& e) {
      std::cerr << "rmsnorm-bench: " << e.what() << "\n";
      return rb::kExitHostError;
    }
  };
  const int rc = dispatch();
  // A kernel still runs on the device (harness/wait.h): the outputs are written, and the exit
  // skips the static destructors and the CUDA runtime's teardown, which would wait on it.
  if (rb::device_wedged()) {
    std::cout.flush();
    std::cerr.flush();
    std::_Exit(rc);
  }
  return rc;
}

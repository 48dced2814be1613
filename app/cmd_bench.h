// The default action: run a sweep, write CSV + markdown, print a summary table.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/wait.h"

namespace rb {

// --max-cases: default and the most it may be raised to.
constexpr std::int64_t kDefaultMaxCases = 100000;
constexpr std::int64_t kMaxMaxCases = 10000000;
// --device / --devices: the highest device index accepted.
constexpr std::int64_t kMaxDeviceIndex = 1023;

struct BenchOptions {
  std::string preset = "bench";  // bench | validation
  std::vector<std::string> H, M;  // raw list items, counted then expanded after parsing
  std::vector<std::string> ops, dtypes, wdtypes, rdtypes, eps, kernels, dists, layouts;
  std::vector<std::string> conventions, ydtypes, y_scales;
  std::uint64_t seed = 0x5eed;
  bool no_check = false;
  bool no_time = false;
  int min_samples = 10;
  double max_noise = 0.5;
  double max_time = 0.1;
  double kernel_timeout = kDefaultKernelTimeoutS;  // seconds a wait for a kernel may take; 0 = no limit
  std::string out_dir = "results";
  std::string csv, md;
  int device = 0;
  bool quiet = false;
  bool plots = false;
  std::string flush = "read";   // read | write (harness/timing.h)
  std::string shard;            // "I/N", empty = the whole sweep
  std::string cudnn_lib;        // libcudnn.so.9 to load ("" = the loader's search path)
  std::string cudnn_engines = "heuristic";  // heuristic | all
  std::vector<int> devices;     // one worker process per device, merged
  std::int64_t max_cases = kDefaultMaxCases;  // refuse a sweep of more cases
  std::int64_t max_device_mem = 0;            // bytes a case may take; 0 = what the device has free
  std::int64_t copy_bytes = std::int64_t{1} << 30;  // the copy-ceiling run's buffer, each way
  std::string worker_run;       // set by a --devices parent for its workers (hidden option)
  std::string command_line;
  std::vector<std::string> args;  // argv[1..], for the --devices workers
};

// Adds the sweep options to `app` (the top-level app: the sweep is the default action).
void setup_bench(CLI::App& app, BenchOptions& o);

// Runs the sweep; returns the process exit code (app/exit_codes.h: 0 pass, 1 fail, 2 input,
// 3 no device, 4 CUDA error, 5 host error, 130/143 interrupted).
int run_bench(const BenchOptions& o);

}  // namespace rb

#include "app/cmd_bench.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <rb_version.h>
#include <stdexcept>

#include "app/lists.h"
#include "app/process.h"
#include "harness/case.h"
#include "harness/cuda_check.h"
#include "harness/device.h"
#include "harness/runner.h"
#include "kernels/registry.h"
#include "kernels/vendor/vendor.h"
#include "reports/csv_reader.h"
#include "reports/csv_writer.h"
#include "reports/markdown.h"
#include "reports/merge.h"
#include "reports/terminal.h"

namespace rb {

namespace {

std::vector<std::string> kernel_names() {
  std::vector<std::string> v;
  for (const KernelInfo& k : kernel_registry()) v.push_back(k.name);
  return v;
}

std::vector<std::string> dist_names() {
  std::vector<std::string> v;
  for (Dist d : ref::all_dists()) v.emplace_back(ref::dist_name(d));
  return v;
}

std::vector<std::string> layout_names() {
  std::vector<std::string> v;
  for (Layout l : all_layouts()) v.emplace_back(layout_name(l));
  return v;
}

// A CLI11 validator from a parse function that throws std::invalid_argument.
template <class F>
CLI::Validator parses_as(const std::string& what, F parse) {
  return CLI::Validator(
      [parse](std::string& s) -> std::string {
        try {
          parse(s);
          return {};
        } catch (const std::invalid_argument& e) {
          return e.what();
        }
      },
      what);
}

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// Overrides the preset's list with the option's values where the option was given.
template <class T, class P>
void override_list(std::vector<T>& dst, const std::vector<std::string>& raw, P parse) {
  if (raw.empty()) return;
  dst.clear();
  for (const std::string& s : raw) dst.push_back(parse(s));
}

// The same for --H / --M, whose items may each expand to a range.
void override_sizes(std::vector<std::int64_t>& dst, const std::vector<std::string>& items) {
  if (items.empty()) return;
  dst.clear();
  for (const std::string& item : items)
    for (std::int64_t v : parse_int_item(item, 1)) dst.push_back(v);
}

Sweep build_sweep(const BenchOptions& o) {
  Sweep s = o.preset == "validation" ? validation_sweep(default_kernels()) : default_bench_sweep();
  s.seed = o.seed;
  override_sizes(s.Hs, o.H);
  override_sizes(s.Ms, o.M);
  override_list(s.ops, o.ops, [](const std::string& n) { return *parse_op(n); });
  override_list(s.dtypes, o.dtypes, [](const std::string& n) { return *parse_dtype(n); });
  const auto choice = [](const std::string& n) { return n == "same" ? WDtypeChoice{} : WDtypeChoice{*parse_dtype(n)}; };
  override_list(s.wdtypes, o.wdtypes, choice);
  override_list(s.rdtypes, o.rdtypes, choice);
  override_list(s.eps, o.eps, parse_positive_double);
  override_list(s.kernels, o.kernels, [](const std::string& n) { return n; });
  override_list(s.dists, o.dists, [](const std::string& n) { return *ref::parse_dist(n); });
  override_list(s.layouts, o.layouts, [](const std::string& n) { return *parse_layout(n); });
  return s;
}

bool any_failed(const std::vector<Record>& recs) {
  for (const Record& r : recs)
    if (r.status == Status::fail || r.status == Status::error) return true;
  return false;
}

// --plots: runs scripts/plot.py (found beside the source tree the binary was built in, or
// at $RB_PLOT_SCRIPT) on the CSV into PLOTS next to the report; returns the plots made,
// relative to the report, for it to link.
std::vector<std::string> make_plots(const std::string& csv_path, const std::string& md_path,
                                    const std::vector<Record>& records, bool quiet) {
  namespace fs = std::filesystem;
  const char* env = std::getenv("RB_PLOT_SCRIPT");
  std::string script = env ? env : (fs::path(executable_dir()) / ".." / "scripts" / "plot.py").string();
  if (!env && !fs::exists(script)) script = (fs::path(RB_SOURCE_DIR_STR) / "scripts" / "plot.py").string();
  const fs::path plots_dir = fs::path(md_path).parent_path() / "plots";
  const pid_t pid = spawn_process("/usr/bin/python3", {"python3", script, csv_path, "-o", plots_dir.string()});
  const int rc = pid < 0 ? -1 : wait_process(pid);
  if (rc != 0) {
    std::cerr << "rmsnorm-bench: --plots: " << script << " failed (exit " << rc
              << "); the report has no plots (needs /usr/bin/python3 with matplotlib)\n";
    return {};
  }
  std::vector<std::string> out;
  for (const Record& r : records) {
    const std::string rel = (fs::path("plots") / plot_file_name(r)).string();
    if (fs::exists(fs::path(md_path).parent_path() / rel) && std::find(out.begin(), out.end(), rel) == out.end())
      out.push_back(rel);
  }
  if (!quiet) std::cerr << "plots: " << out.size() << " in " << plots_dir.string() << "\n";
  return out;
}

// Options the --devices parent sets for each worker itself.
constexpr const char* kWorkerValueOptions[] = {"--devices", "--device", "--out", "--csv", "--md", "--shard"};

bool takes_value(const std::string& a) {
  return std::find(std::begin(kWorkerValueOptions), std::end(kWorkerValueOptions), a) != std::end(kWorkerValueOptions);
}

bool dropped_for_workers(const std::string& a) {
  if (takes_value(a) || a == "--quiet" || a == "--plots") return true;
  for (const std::string opt : kWorkerValueOptions)
    if (a.rfind(opt + "=", 0) == 0) return true;
  return false;
}

// Exit codes are ordered by severity (a CUDA error outranks no device, which outranks bad
// input, which outranks a failed case), so combining workers is a max.
int worse_exit(int a, int b) { return std::max(a, b); }

struct ReportPaths {
  std::string csv, md;
};

ReportPaths report_paths(const BenchOptions& o) {
  namespace fs = std::filesystem;
  return {o.csv.empty() ? (fs::path(o.out_dir) / "results.csv").string() : o.csv,
          o.md.empty() ? (fs::path(o.out_dir) / "report.md").string() : o.md};
}

// The report context every run knows without a device.
RunContext base_context(const BenchOptions& o) {
  RunContext ctx;
  ctx.tool_version = RB_VERSION;
  ctx.commit = RB_COMMIT;
  ctx.command_line = o.command_line;
  ctx.started_at = now_utc();
  return ctx;
}

// --devices: one worker process per device, each running shard k/N of the same sweep into
// OUT/shards/k, then one merged CSV and report. Workers are this binary again, with the
// same options less the ones the parent sets for them.
int run_on_devices(const BenchOptions& o) {
  namespace fs = std::filesystem;
  const auto [csv_path, md_path] = report_paths(o);
  const int n = static_cast<int>(o.devices.size());
  std::vector<std::string> base;
  for (std::size_t i = 0; i < o.args.size(); ++i) {
    if (dropped_for_workers(o.args[i])) {
      if (takes_value(o.args[i])) ++i;
      continue;
    }
    base.push_back(o.args[i]);
  }
  std::vector<pid_t> pids;
  std::vector<std::string> shard_csvs;
  for (int k = 0; k < n; ++k) {
    const std::string dir = (fs::path(o.out_dir) / "shards" / std::to_string(k)).string();
    std::vector<std::string> args{"rmsnorm-bench"};
    args.insert(args.end(), base.begin(), base.end());
    for (const std::string& a : {std::string("--device"), std::to_string(o.devices[static_cast<std::size_t>(k)]),
                                 std::string("--shard"), fmt::format("{}/{}", k, n), std::string("--out"), dir,
                                 std::string("--quiet")})
      args.push_back(a);
    const pid_t pid = spawn_process("/proc/self/exe", args);
    if (pid < 0) {
      std::cerr << "rmsnorm-bench: --devices: cannot start a worker process\n";
      return 4;
    }
    pids.push_back(pid);
    shard_csvs.push_back((fs::path(dir) / "results.csv").string());
    if (!o.quiet) std::cerr << fmt::format("worker {} on device {}: shard {}/{} -> {}\n", pid, o.devices[static_cast<std::size_t>(k)], k, n, dir);
  }
  int code = 0;
  for (pid_t pid : pids) {
    const int rc = wait_process(pid);
    code = worse_exit(code, rc > 4 ? 4 : rc);  // a worker killed by a signal counts as aborted
  }
  std::vector<Record> merged;
  try {
    std::vector<std::pair<std::string, std::vector<Record>>> parts;
    for (const std::string& f : shard_csvs)
      if (fs::exists(f)) parts.emplace_back(f, read_csv(f));
    merged = merge_records(parts);
    const fs::path parent = fs::path(csv_path).parent_path();
    if (!parent.empty()) fs::create_directories(parent);
    CsvWriter csv(csv_path);
    for (const Record& r : merged) csv.write(r);
    RunContext ctx = base_context(o);
    ctx.gpu = merged.empty() ? "" : merged.front().gpu;
    ctx.cc = merged.empty() ? "" : merged.front().cc;
    if (o.plots) ctx.plots = make_plots(csv_path, md_path, merged, o.quiet);
    write_markdown_atomic(md_path, markdown_report(ctx, merged));
  } catch (const std::exception& e) {
    std::cerr << "rmsnorm-bench: --devices: merging the workers' CSVs: " << e.what() << "\n";
    return worse_exit(code, 2);
  }
  std::cout << summary_table(merged);
  std::cout << "reports: " << csv_path << ", " << md_path << " (merged from " << n << " worker(s))\n";
  return worse_exit(code, any_failed(merged) ? 1 : 0);
}

}  // namespace

void setup_bench(CLI::App& app, BenchOptions& o) {
  const std::vector<std::string> dtypes{"fp32", "fp16", "bf16"};
  const std::vector<std::string> wdtypes{"same", "fp32", "fp16", "bf16"};
  auto int_list = parses_as("LIST", [](const std::string& s) { parse_int_item(s, 1); });
  app.add_option("--preset", o.preset, "Base sweep the other options override: bench (default) or validation")
      ->check(CLI::IsMember({"bench", "validation"}));
  app.add_option("--H", o.H, "Hidden sizes: 4096 | 1024,4096,4097 | 1024:16384:x2 | 128:1024:+128")
      ->delimiter(',')
      ->check(int_list);
  app.add_option("--M", o.M, "Rows, same syntax as --H")->delimiter(',')->check(int_list);
  app.add_option("--op", o.ops, "Ops: fwd, bwd, add (residual add + norm), add-bwd (default: all)")
      ->delimiter(',')
      ->check(CLI::IsMember({"fwd", "bwd", "add", "add-bwd"}));
  app.add_option("--dtype", o.dtypes, "x/y dtypes: fp32,fp16,bf16")->delimiter(',')->check(CLI::IsMember(dtypes));
  app.add_option("--wdtype", o.wdtypes, "Weight dtypes: same (as x), fp32, fp16, bf16")
      ->delimiter(',')
      ->check(CLI::IsMember(wdtypes));
  app.add_option("--rdtype", o.rdtypes, "Residual-stream dtypes of add / add-bwd: same (as x), fp32, fp16, bf16")
      ->delimiter(',')
      ->check(CLI::IsMember(wdtypes));
  app.add_option("--eps", o.eps, "eps values (finite, > 0)")
      ->delimiter(',')
      ->check(parses_as("EPS", [](const std::string& s) { parse_positive_double(s); }));
  app.add_option("--kernel", o.kernels, "Kernels (default: every non-mutant kernel and auto; see `list --all`)")
      ->delimiter(',')
      ->check(CLI::IsMember(kernel_names()));
  app.add_option("--dist", o.dists, "Input distributions")->delimiter(',')->check(CLI::IsMember(dist_names()));
  app.add_option("--layout", o.layouts, "Memory layouts")->delimiter(',')->check(CLI::IsMember(layout_names()));
  app.add_option("--seed", o.seed, "Seed of the input generators");
  app.add_flag("--no-check", o.no_check, "Skip validation against the fp64 reference");
  app.add_flag("--no-time", o.no_time, "Skip timing");
  app.add_option("--min-samples", o.min_samples, "Minimum timed samples per case")->check(CLI::Range(1, 100000));
  app.add_option("--max-noise", o.max_noise, "Stop sampling below this relative stdev, in %")
      ->check(CLI::Range(0.0, 100.0));
  app.add_option("--max-time", o.max_time, "Timing budget per case, seconds")->check(CLI::Range(0.0, 3600.0));
  app.add_option("--out", o.out_dir, "Output directory (default: results)");
  app.add_option("--csv", o.csv, "CSV path (default: OUT/results.csv)");
  app.add_option("--md", o.md, "Markdown report path (default: OUT/report.md)");
  app.add_option("--device", o.device, "CUDA device index")->check(CLI::NonNegativeNumber);
  app.add_flag("--quiet", o.quiet, "Only the summary table");
  app.add_flag("--plots", o.plots, "Also draw PNG plots with scripts/plot.py (python3-matplotlib) and link them");
  app.add_option("--flush", o.flush,
                 "L2 flush before each cold sample: read (default; leaves clean lines) or write "
                 "(memset, as nvbench/do_bench; the kernel then pays the flush's write-backs)")
      ->check(CLI::IsMember({"read", "write"}));
  app.add_option("--shard", o.shard, "Run part I of N of the case list (0-based I), e.g. 0/4")
      ->check(parses_as("I/N", [](const std::string& s) { parse_shard(s); }));
  app.add_option("--cudnn-lib", o.cudnn_lib,
                 "libcudnn.so.9 to load for the cudnn kernel (default: the dynamic loader's search path)")
      ->check(CLI::ExistingFile);
  app.add_option("--cudnn-engines", o.cudnn_engines,
                 "cudnn: heuristic (cuDNN's first choice, default) or all (one row per engine config)")
      ->check(CLI::IsMember({"heuristic", "all"}));
  app.add_option("--devices", o.devices,
                 "Run one worker per listed GPU (each a shard of the sweep) and merge their CSVs")
      ->delimiter(',')
      ->check(CLI::NonNegativeNumber)
      ->excludes("--shard")
      ->excludes("--device");
}

int run_bench(const BenchOptions& o) {
  if (!o.devices.empty()) return run_on_devices(o);
  vendor::set_options({o.cudnn_lib, o.cudnn_engines == "all"});
  const Sweep sweep = build_sweep(o);
  std::vector<Case> cases = expand(sweep);
  if (cases.empty()) {
    std::cerr << "rmsnorm-bench: --kernel/--op: none of the kernels given implements any of the ops given "
                 "(see `rmsnorm-bench list`)\n";
    return 2;
  }
  if (!o.shard.empty()) {
    const ShardSpec sh = parse_shard(o.shard);
    cases = take_shard(cases, sh.index, sh.count);
  }

  DeviceInfo dev;
  try {
    dev = open_device(o.device);
  } catch (const NoDeviceError& e) {
    std::cerr << "rmsnorm-bench: " << e.what() << "\n";
    return 3;
  } catch (const CudaError& e) {
    std::cerr << "rmsnorm-bench: " << e.what() << "\n";
    return 3;
  }

  namespace fs = std::filesystem;
  const auto [csv_path, md_path] = report_paths(o);
  std::unique_ptr<CsvWriter> csv;
  try {
    for (const std::string& p : {csv_path, md_path}) {
      const fs::path parent = fs::path(p).parent_path();
      if (!parent.empty()) fs::create_directories(parent);
    }
    csv = std::make_unique<CsvWriter>(csv_path);
  } catch (const std::exception& e) {
    std::cerr << "rmsnorm-bench: --out/--csv/--md: " << e.what() << "\n";
    return 2;
  }

  RunConfig cfg;
  cfg.check = !o.no_check;
  cfg.time = !o.no_time;
  cfg.timing.min_samples = o.min_samples;
  cfg.timing.max_noise_pct = o.max_noise;
  cfg.timing.max_time_s = o.max_time;
  cfg.timing.flush = o.flush == "write" ? FlushMode::write : FlushMode::read;

  RunContext ctx = base_context(o);
  ctx.gpu = dev.name;
  ctx.cc = dev.cc;
  ctx.sms = dev.sms;
  ctx.l2_mb = static_cast<double>(dev.l2_bytes) / (1024.0 * 1024.0);
  ctx.driver = dev.driver;
  ctx.cuda_runtime = dev.runtime;

  const bool tty = isatty(STDERR_FILENO) != 0;
  std::vector<Record> records;
  int code = 0;
  try {
    Runner runner(dev, cfg);
    if (!o.quiet)
      std::cerr << fmt::format("rmsnorm-bench {} ({}) on {} (cc {}, {} SMs): {} cases\n", RB_VERSION, RB_COMMIT,
                               dev.name, dev.cc, dev.sms, cases.size());
    if (cfg.time) {
      ctx.copy_gbps = runner.copy_ceiling().gbps;
      if (!o.quiet)
        std::cerr << fmt::format("copy ceiling: {:.0f} GB/s (read + write; L2 flush: {})\n", ctx.copy_gbps, o.flush);
    }
    runner.run(cases, [&](const Record& r) {
      csv->write(r);
      records.push_back(r);
      if (o.quiet) return;
      if (tty)
        std::cerr << "\r" << progress_line(records.size(), cases.size(), r) << "\033[K" << std::flush;
      else
        std::cerr << progress_line(records.size(), cases.size(), r) << "\n";
    });
    if (tty && !o.quiet) std::cerr << "\n";
  } catch (const CudaError& e) {
    if (tty && !o.quiet) std::cerr << "\n";
    std::cerr << "rmsnorm-bench: CUDA error aborted the run: " << e.what() << "\n"
              << "rmsnorm-bench: " << records.size() << " completed row(s) are in " << csv_path << "\n";
    code = 4;
  }

  ctx.timing_note = fmt::format(
      "cold samples, L2 flushed by a {} of 2x L2 before each; >= {} samples, stop below {}% noise or after {} s "
      "per case; CUDA-graph replay for M <= 256",
      o.flush == "write" ? "memset" : "read", o.min_samples, o.max_noise, o.max_time);
  if (o.plots) ctx.plots = make_plots(csv_path, md_path, records, o.quiet);
  try {
    write_markdown_atomic(md_path, markdown_report(ctx, records));
  } catch (const std::exception& e) {
    std::cerr << "rmsnorm-bench: --md: " << e.what() << "\n";
    if (code == 0) code = 2;
  }
  std::cout << summary_table(records);
  std::cout << "reports: " << csv_path << ", " << md_path << "\n";
  if (code == 0 && any_failed(records)) code = 1;
  return code;
}

}  // namespace rb

#include "app/cmd_bench.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <rb_version.h>
#include <stdexcept>

#include "app/lists.h"
#include "harness/case.h"
#include "harness/cuda_check.h"
#include "harness/device.h"
#include "harness/runner.h"
#include "kernels/registry.h"
#include "reports/csv_writer.h"
#include "reports/markdown.h"
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

Sweep build_sweep(const BenchOptions& o) {
  Sweep s = o.preset == "validation" ? validation_sweep(default_kernels()) : default_bench_sweep();
  s.seed = o.seed;
  if (!o.H.empty()) {
    s.Hs.clear();
    for (const std::string& item : o.H)
      for (std::int64_t v : parse_int_item(item, 1)) s.Hs.push_back(v);
  }
  if (!o.M.empty()) {
    s.Ms.clear();
    for (const std::string& item : o.M)
      for (std::int64_t v : parse_int_item(item, 1)) s.Ms.push_back(v);
  }
  override_list(s.dtypes, o.dtypes, [](const std::string& n) { return *parse_dtype(n); });
  override_list(s.wdtypes, o.wdtypes, [](const std::string& n) {
    return n == "same" ? WDtypeChoice{} : WDtypeChoice{*parse_dtype(n)};
  });
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
  app.add_option("--dtype", o.dtypes, "x/y dtypes: fp32,fp16,bf16")->delimiter(',')->check(CLI::IsMember(dtypes));
  app.add_option("--wdtype", o.wdtypes, "Weight dtypes: same (as x), fp32, fp16, bf16")
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
}

int run_bench(const BenchOptions& o) {
  const Sweep sweep = build_sweep(o);
  const std::vector<Case> cases = expand(sweep);

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
  const std::string csv_path = o.csv.empty() ? (fs::path(o.out_dir) / "results.csv").string() : o.csv;
  const std::string md_path = o.md.empty() ? (fs::path(o.out_dir) / "report.md").string() : o.md;
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

  RunContext ctx;
  ctx.gpu = dev.name;
  ctx.cc = dev.cc;
  ctx.sms = dev.sms;
  ctx.l2_mb = static_cast<double>(dev.l2_bytes) / (1024.0 * 1024.0);
  ctx.driver = dev.driver;
  ctx.cuda_runtime = dev.runtime;
  ctx.tool_version = RB_VERSION;
  ctx.commit = RB_COMMIT;
  ctx.command_line = o.command_line;
  ctx.started_at = now_utc();

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
      if (!o.quiet) std::cerr << fmt::format("copy ceiling: {:.0f} GB/s (read + write)\n", ctx.copy_gbps);
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

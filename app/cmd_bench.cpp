#include "app/cmd_bench.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <random>
#include <set>
#include <filesystem>
#include <iostream>
#include <rb_version.h>
#include <stdexcept>

#include "app/cli_checks.h"
#include "app/exit_codes.h"
#include "app/interrupt.h"
#include "app/lists.h"
#include "app/process.h"
#include "app/run_output.h"
#include "harness/case.h"
#include "harness/cuda_check.h"
#include "harness/device.h"
#include "harness/wait.h"
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

// A preset's sweep with the options' overrides.
Sweep apply_options(Sweep s, const BenchOptions& o) {
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
  override_list(s.conventions, o.conventions, [](const std::string& n) { return *parse_convention(n); });
  override_list(s.ydtypes, o.ydtypes,
                [](const std::string& n) { return n == "same" ? YDtypeChoice{} : YDtypeChoice{*parse_dtype(n)}; });
  override_list(s.y_scales, o.y_scales, parse_positive_double);
  return s;
}

// The sweeps a run expands: the preset's (validation: its five; wide: its two, tensors past
// 2^31 elements; harness/case.h), each with the options' overrides.
std::vector<Sweep> build_sweeps(const BenchOptions& o) {
  std::vector<Sweep> v = o.preset == "wide"         ? wide_sweeps(default_kernels())
                         : o.preset == "validation" ? validation_sweeps(default_kernels())
                                                    : std::vector<Sweep>{default_bench_sweep()};
  for (Sweep& s : v) s = apply_options(std::move(s), o);
  return v;
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
  const std::string script = env ? env : find_script("plot.py");
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
constexpr const char* kWorkerValueOptions[] = {"--devices", "--device", "--out", "--csv", "--md", "--shard", "--worker-run"};

bool takes_value(const std::string& a) {
  return std::find(std::begin(kWorkerValueOptions), std::end(kWorkerValueOptions), a) != std::end(kWorkerValueOptions);
}

bool dropped_for_workers(const std::string& a) {
  if (takes_value(a) || a == "--quiet" || a == "--plots") return true;
  for (const std::string opt : kWorkerValueOptions)
    if (a.rfind(opt + "=", 0) == 0) return true;
  return false;
}

struct ReportPaths {
  std::string csv, md;
};

ReportPaths report_paths(const BenchOptions& o) {
  namespace fs = std::filesystem;
  return {o.csv.empty() ? (fs::path(o.out_dir) / "results.csv").string() : o.csv,
          o.md.empty() ? (fs::path(o.out_dir) / "report.md").string() : o.md};
}

// Output paths: created and test-written before any GPU work (exit 2 naming the option).
bool check_outputs(const BenchOptions& o) {
  const auto [csv_path, md_path] = report_paths(o);
  try {
    if (same_entry(csv_path, md_path))
      throw std::invalid_argument(fmt::format("--csv/--md: '{}' and '{}' name the same file; give them different paths",
                                              csv_path, md_path));
    check_writable(csv_path, o.csv.empty() ? "--out" : "--csv");
    check_writable(md_path, o.md.empty() ? "--out" : "--md");
    if (!o.devices.empty())
      check_writable((std::filesystem::path(o.out_dir) / "shards" / "0" / "results.csv").string(), "--out");
  } catch (const std::invalid_argument& e) {
    std::cerr << "rmsnorm-bench: " << e.what() << "\n";
    return false;
  }
  return true;
}

// How many values --H or --M stand for, counted without expanding a range (repeats included).
std::uint64_t count_size_items(const std::vector<std::string>& items) {
  std::uint64_t n = 0;
  for (const std::string& item : items) n += static_cast<std::uint64_t>(count_int_item(item, 1));
  return n;
}

// The sweep, its size checked against --max-cases before anything is built: --H and --M are
// counted item by item (a range arithmetically) before they are expanded, then the cases are
// counted from the lists. Returns 0, or the exit code after saying why.
int plan_sweep(const BenchOptions& o, std::vector<Sweep>& sweep, std::uint64_t& n_cases) {
  const auto limit = static_cast<std::uint64_t>(o.max_cases);
  const auto refuse = [&](const std::string& what, std::uint64_t n) {
    std::cerr << fmt::format(
        "rmsnorm-bench: {} {} case(s), more than --max-cases {} allows (narrow --H/--M/--op/--dtype/--kernel/..., "
        "or raise --max-cases, at most {})\n",
        what, n, o.max_cases, kMaxMaxCases);
    return kExitUsage;
  };
  for (const auto& [name, items] : {std::pair<const char*, const std::vector<std::string>*>{"--H", &o.H},
                                    std::pair<const char*, const std::vector<std::string>*>{"--M", &o.M}}) {
    const std::uint64_t n = count_size_items(*items);
    if (n > limit) return refuse(fmt::format("{} gives {} values, so the sweep has at least", name, n), n);
  }
  sweep = build_sweeps(o);
  // A dtype option no case reads (--ydtype e4m3 with --op bwd alone) is refused, not dropped.
  std::vector<Op> ops;
  bool fp8_y = false;
  for (const Sweep& s : sweep)
    for (Op op : ops_with_cases(s)) {
      if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
      if (has_fp8_output(op))
        fp8_y = fp8_y || std::any_of(s.ydtypes.begin(), s.ydtypes.end(),
                                     [](const YDtypeChoice& y) { return y.has_value(); });
    }
  if (const std::string why = unread_dtype_option(ops, o.ydtypes, o.rdtypes, !o.y_scales.empty(), fp8_y);
      !why.empty()) {
    std::cerr << "rmsnorm-bench: " << why << "\n";
    return kExitUsage;
  }
  // --cudnn-engines all with no cuDNN kernel in the run would list nothing, silently.
  if (o.cudnn_engines == "all" && std::none_of(sweep.begin(), sweep.end(), [](const Sweep& s) {
        return std::any_of(s.kernels.begin(), s.kernels.end(), [](const std::string& name) {
          const KernelInfo* k = find_kernel(name);
          return k && k->provider == "cudnn";
        });
      })) {
    std::cerr
        << "rmsnorm-bench: --cudnn-engines all: it lists cuDNN's engine configurations, and no kernel of the "
           "run is cuDNN's (give --kernel cudnn; `rmsnorm-bench list` says whether it is available here)\n";
    return kExitUsage;
  }
  // The largest M with the largest H of each sweep: past 2^56 elements a matrix the harness's
  // byte counts would wrap, so such sizes are refused here, before any device work.
  for (const Sweep& s : sweep) {
    if (s.Ms.empty() || s.Hs.empty()) continue;
    const std::int64_t M = *std::max_element(s.Ms.begin(), s.Ms.end());
    const std::int64_t H = *std::max_element(s.Hs.begin(), s.Hs.end());
    if (auto why = too_large(M, H)) {
      std::cerr << "rmsnorm-bench: --M/--H: " << *why << "; narrow --M or --H\n";
      return kExitUsage;
    }
  }
  n_cases = count_cases(sweep);
  if (n_cases == 0) {
    std::cerr << "rmsnorm-bench: --kernel/--op: none of the kernels given implements any of the ops given "
                 "(see `rmsnorm-bench list`)\n";
    return kExitUsage;
  }
  if (n_cases > limit) return refuse("the sweep has", n_cases);
  return 0;
}

// The report context every run knows without a device.
RunContext base_context(const BenchOptions& o) {
  RunContext ctx;
  ctx.tool_version = RB_VERSION;
  ctx.commit = RB_COMMIT;
  ctx.command_line = o.command_line;
  ctx.started_at = now_utc();
  ctx.timing_note = fmt::format(
      "cold samples, L2 flushed by a {} of 2x L2 before each; >= {} samples, stop below {}% noise or "
      "after {} s per case; CUDA-graph replay for M <= 256; copy ceiling: cudaMemcpy of {} B each way",
      o.flush == "write" ? "memset" : "read", o.min_samples, o.max_noise, o.max_time, o.copy_bytes);
  return ctx;
}

std::string new_run_id() {
  std::random_device rd;
  return fmt::format("{}-{}-{:08x}{:08x}", static_cast<long>(::getpid()),
                     std::chrono::steady_clock::now().time_since_epoch().count(), rd(), rd());
}

// A worker's exit code as the parent counts it: its own codes as they are, an interruption
// as one, any other death by signal (killed, crashed) as a host error.
int worker_exit(int rc) {
  if (rc <= kExitHostError || rc == 128 + SIGINT || rc == 128 + SIGTERM) return rc;
  return kExitHostError;
}

// --devices: one worker process per device, each running shard k/N of the same sweep into
// OUT/shards/k, then one merged CSV and report. Workers are this binary again, with the
// same options less the ones the parent sets for them. Each worker leaves its report context
// (device, driver, runtime) beside its CSV, tagged with this run's id, so the merged report
// has the same header as a single device's and a stale shard from an earlier run is never
// merged. The parent touches no GPU.
int run_on_devices(const BenchOptions& o, std::uint64_t n_cases) {
  namespace fs = std::filesystem;
  const auto [csv_path, md_path] = report_paths(o);
  const int n = static_cast<int>(o.devices.size());
  const std::string run_id = new_run_id();
  std::vector<std::string> base;
  for (std::size_t i = 0; i < o.args.size(); ++i) {
    if (dropped_for_workers(o.args[i])) {
      if (takes_value(o.args[i])) ++i;
      continue;
    }
    base.push_back(o.args[i]);
  }
  std::vector<pid_t> pids;
  std::vector<std::string> dirs;
  int code = 0;
  for (int k = 0; k < n; ++k) {
    const std::string dir = (fs::path(o.out_dir) / "shards" / std::to_string(k)).string();
    std::vector<std::string> args{"rmsnorm-bench"};
    args.insert(args.end(), base.begin(), base.end());
    for (const std::string& a : {std::string("--device"), std::to_string(o.devices[static_cast<std::size_t>(k)]),
                                 std::string("--shard"), fmt::format("{}/{}", k, n), std::string("--out"), dir,
                                 std::string("--quiet"), std::string("--worker-run"), run_id})
      args.push_back(a);
    const pid_t pid = spawn_process("/proc/self/exe", args);
    if (pid < 0) {
      std::cerr << "rmsnorm-bench: --devices: cannot start the worker for device "
                << o.devices[static_cast<std::size_t>(k)] << "\n";
      code = kExitHostError;
      continue;
    }
    pids.push_back(pid);
    dirs.push_back(dir);
    if (!o.quiet)
      std::cerr << fmt::format("worker {} on device {}: shard {}/{} -> {}\n", pid,
                               o.devices[static_cast<std::size_t>(k)], k, n, dir);
  }
  const std::vector<int> codes = wait_forwarding_signals(pids);
  for (std::size_t i = 0; i < pids.size(); ++i) {
    code = worse_exit(code, worker_exit(codes[i]));
    if (codes[i] != 0 && codes[i] != 1)
      std::cerr << fmt::format("rmsnorm-bench: --devices: worker {} ({}) exited {}\n", pids[i], dirs[i], codes[i]);
  }
  if (const int sig = interrupt_signal()) code = worse_exit(code, 128 + sig);

  // Only shards this run's workers finished: their context file names this run.
  const WorkerResults results = collect_worker_results(dirs, run_id);
  for (const std::string& e : results.errors) {
    std::cerr << "rmsnorm-bench: --devices: " << e << "\n";
    code = worse_exit(code, kExitHostError);
  }
  const std::vector<Record>& merged = results.records;
  if (merged.empty()) {
    std::cerr << fmt::format("rmsnorm-bench: --devices: no worker finished a case: {} and {} are left as they were\n",
                             csv_path, md_path);
    return code;
  }
  RunContext ctx = merged_context(base_context(o), results.contexts);
  try {
    write_file_atomic(csv_path, csv_file_text(merged));
    if (o.plots) ctx.plots = make_plots(csv_path, md_path, merged, o.quiet);
    write_file_atomic(md_path, mark_incomplete(markdown_report(ctx, merged), code, merged.size(), n_cases));
  } catch (const std::exception& e) {
    std::cerr << "rmsnorm-bench: --devices: " << e.what() << "\n";
    return worse_exit(code, kExitHostError);
  }
  std::cout << summary_table(merged);
  std::cout << "reports: " << csv_path << ", " << md_path << " (merged from " << results.contexts.size() << " of " << n
            << " worker(s))\n";
  return worse_exit(code, any_failed(merged) ? kExitFail : kExitPass);
}

}  // namespace

void setup_bench(CLI::App& app, BenchOptions& o) {
  const DtypeOptionNames names = dtype_option_names();
  const std::vector<std::string>&dtypes = names.x, &wdtypes = names.w, &ydtypes = names.y;
  auto int_list = parses_as([](const std::string& s) { count_int_item(s, 1); });
  // A list's items may have spaces around them ("naive, auto", "1024, 4096"): trimmed before
  // each item's check, which would otherwise refuse " auto".
  const CLI::Validator trimmed(
      [](std::string& item) {
        const auto space = [](unsigned char c) { return std::isspace(c) != 0; };
        item.erase(std::find_if_not(item.rbegin(), item.rend(), space).base(), item.end());
        item.erase(item.begin(), std::find_if_not(item.begin(), item.end(), space));
        return std::string();
      },
      "", "trimmed");
  app.add_option("--preset", o.preset,
                 "Base sweep the other options override: bench, validation or wide (tensors past 2^31 "
                 "elements: bf16 and fp32 M=524289 H=4096, bf16 M=524162 H=4097; up to 34 GiB of device memory a case)")
      ->check(CLI::IsMember({"bench", "validation", "wide"}));
  app.add_option("--H", o.H,
                 fmt::format("Hidden sizes (>= 1): 4096 | 1024,4096,4097 | 1024:16384:x2 | 128:1024:+128 (a range "
                             "holds at most {} values)",
                             kMaxRangeItems))
      ->delimiter(',')
      ->transform(trimmed)
      ->check(int_list)
      ->type_name("LIST")
      ->default_str("preset (bench: 128,1024,2048,4096,4097,8192,16384)");
  app.add_option("--M", o.M, "Rows (>= 1), same syntax as --H")
      ->delimiter(',')
      ->transform(trimmed)
      ->check(int_list)
      ->type_name("LIST")
      ->default_str("preset (bench: 1,16384)");
  app.add_option("--op", o.ops, "Ops: fwd, bwd, add (residual add + norm), add-bwd")
      ->delimiter(',')
      ->transform(trimmed)
      ->check(CLI::IsMember(all_names<Op>()))
      ->default_str("fwd,bwd,add,add-bwd");
  app.add_option("--dtype", o.dtypes, "x/y dtypes: fp32,fp16,bf16")
      ->delimiter(',')
      ->transform(trimmed)
      ->check(CLI::IsMember(dtypes))
      ->default_str("fp32,fp16,bf16");
  app.add_option("--wdtype", o.wdtypes, "Weight dtypes: same (as x), fp32, fp16, bf16")
      ->delimiter(',')
      ->transform(trimmed)
      ->check(CLI::IsMember(wdtypes))
      ->default_str("same");
  app.add_option("--rdtype", o.rdtypes, "Residual-stream dtypes of add / add-bwd: same (as x), fp32, fp16, bf16")
      ->delimiter(',')
      ->transform(trimmed)
      ->check(CLI::IsMember(wdtypes))
      ->default_str("same");
  app.add_option("--convention", o.conventions,
                 "Where the forward rounds and whether w is an offset from 1: fp32, llama, gemma, zero-centered "
                 "(README, Conventions)")
      ->delimiter(',')
      ->transform(trimmed)
      ->check(CLI::IsMember(all_names<Convention>()))
      ->default_str("fp32");
  app.add_option("--ydtype", o.ydtypes,
                 "y dtype of fwd and add: same (as x) or fp8 e4m3, e5m2 (y8 = saturate(round(y * scale)), with "
                 "amax)")
      ->delimiter(',')
      ->transform(trimmed)
      ->check(CLI::IsMember(ydtypes))
      ->default_str("same");
  app.add_option("--y-scale", o.y_scales, "Per-tensor scales of an fp8 y (> 0, within fp32's normal range)")
      ->delimiter(',')
      ->transform(trimmed)
      ->check(parses_as([](const std::string& s) { parse_positive_double(s); }))
      ->type_name("LIST")
      ->default_str("1");
  app.add_option("--eps", o.eps, "eps values (> 0, within fp32's normal range: the kernels take eps as fp32)")
      ->delimiter(',')
      ->transform(trimmed)
      ->check(parses_as([](const std::string& s) { parse_positive_double(s); }))
      ->type_name("LIST")
      ->default_str("1e-5,1e-6");
  app.add_option("--kernel", o.kernels, "Kernels (see `list --all`; mutants only when named)")
      ->delimiter(',')
      ->transform(trimmed)
      ->check(CLI::IsMember(kernel_names()))
      ->default_str("every non-mutant kernel and auto");
  app.add_option("--dist", o.dists, "Input distributions")
      ->delimiter(',')
      ->transform(trimmed)
      ->check(CLI::IsMember(all_names<Dist>()))
      ->default_str("normal");
  app.add_option("--layout", o.layouts, "Memory layouts")
      ->delimiter(',')
      ->transform(trimmed)
      ->check(CLI::IsMember(all_names<Layout>()))
      ->default_str("contiguous");
  add_parsed(app, "--seed", o.seed, parse_seed, "UINT64", "Seed of the input generators (0 to 2^64-1)",
             std::to_string(o.seed));
  app.add_flag("--no-check", o.no_check, "Skip validation against the fp64 reference (default: off)");
  app.add_flag("--no-time", o.no_time, "Skip timing (default: off)");
  add_parsed(
      app, "--min-samples", o.min_samples, [](const std::string& s) { return parse_int_in(s, 1, 100000); }, "INT",
      "Minimum timed samples per case (1 to 100000)", std::to_string(o.min_samples));
  add_parsed(
      app, "--max-noise", o.max_noise, [](const std::string& s) { return parse_double_in(s, 0.0, 100.0); }, "PCT",
      "Stop sampling below this relative stdev, in % (0 to 100)", fmt::format("{:g}", o.max_noise));
  add_parsed(
      app, "--max-time", o.max_time, [](const std::string& s) { return parse_double_in(s, 0.0, 3600.0); }, "S",
      "Timing budget per case, seconds (0 to 3600)", fmt::format("{:g}", o.max_time));
  add_parsed(
      app, "--kernel-timeout", o.kernel_timeout,
      [](const std::string& s) { return parse_double_in(s, 0.0, 86400.0); }, "S",
      "Seconds one wait for a kernel may take before the run stops as hung (exit 4, every earlier row kept); "
      "0 waits forever (0 to 86400)",
      fmt::format("{:g}", o.kernel_timeout));
  add_parsed(
      app, "--max-cases", o.max_cases, [](const std::string& s) { return parse_int_in(s, 1, kMaxMaxCases); }, "N",
      fmt::format("Refuse a sweep of more cases than this, counted before any is built (1 to {})", kMaxMaxCases),
      std::to_string(o.max_cases));
  add_parsed(app, "--max-device-mem", o.max_device_mem, parse_bytes, "BYTES",
             "Device memory a case may take (inputs, outputs, guards, workspace); bytes or with a K/M/G/T suffix "
             "(powers of 1024); a case needing more is a skip",
             "what the device has free");
  add_parsed(
      app, "--copy-bytes", o.copy_bytes,
      [](const std::string& s) {
        const std::int64_t b = parse_bytes(s);
        if (b < 1024 * 1024 || b > (std::int64_t{1} << 34) || b % 16 != 0)
          throw std::invalid_argument("'" + s + "': want a multiple of 16 bytes from 1M to 16G");
        return b;
      },
      "BYTES",
      "Bytes each way of the copy that sets the ceiling (% of copy); a problem's own size gives the "
      "ceiling a copy reaches at that size (ramp-up and tail included); bytes or K/M/G suffix",
      "1G");
  app.add_option("--out", o.out_dir, "Output directory")->check(non_empty_path());
  app.add_option("--csv", o.csv, "CSV path")->check(non_empty_path())->default_str("OUT/results.csv");
  app.add_option("--md", o.md, "Markdown report path")->check(non_empty_path())->default_str("OUT/report.md");
  add_parsed(
      app, "--device", o.device, [](const std::string& s) { return parse_int_in(s, 0, kMaxDeviceIndex); }, "INDEX",
      fmt::format("CUDA device index (0 to {})", kMaxDeviceIndex), std::to_string(o.device));
  app.add_flag("--quiet", o.quiet, "Only the summary table (default: off)");
  app.add_flag("--plots", o.plots, "Also draw PNG plots with scripts/plot.py (python3-matplotlib) and link them (default: off)");
  app.add_option("--flush", o.flush,
                 "L2 flush before each cold sample: read (leaves clean lines) or write "
                 "(memset, as nvbench/do_bench; the kernel then pays the flush's write-backs)")
      ->check(CLI::IsMember({"read", "write"}));
  app.add_option("--shard", o.shard,
                 fmt::format("Run part I of N of the case list (0 <= I < N <= {}), e.g. 0/4", kMaxShards))
      ->check(parses_as([](const std::string& s) { parse_shard(s); }))
      ->type_name("I/N")
      ->default_str("0/1 (the whole sweep)");
  app.add_option("--cudnn-lib", o.cudnn_lib,
                 "libcudnn.so.9 to load for the cudnn kernel")
      ->check(CLI::ExistingFile)
      ->default_str("the dynamic loader's search path");
  app.add_option("--cudnn-engines", o.cudnn_engines,
                 "cudnn: heuristic (cuDNN's first choice) or all (one row per engine config)")
      ->check(CLI::IsMember({"heuristic", "all"}));
  const auto device_index = [](const std::string& s) { return parse_int_in(s, 0, kMaxDeviceIndex); };
  app.add_option_function<std::vector<std::string>>(
         "--devices",
         [&o, device_index](const std::vector<std::string>& items) {
           o.devices.clear();
           for (const std::string& s : items) {
             const int d = static_cast<int>(device_index(s));
             if (std::find(o.devices.begin(), o.devices.end(), d) != o.devices.end())
               throw CLI::ValidationError("--devices", fmt::format("device {} is listed twice: each device runs one "
                                                                   "worker (expected distinct indices 0 to {})",
                                                                   d, kMaxDeviceIndex));
             o.devices.push_back(d);
           }
         },
         fmt::format("Run one worker per listed GPU (distinct indices 0 to {}), each a shard of the sweep, and merge "
                     "their CSVs",
                     kMaxDeviceIndex))
      ->delimiter(',')
      ->transform(trimmed)
      ->check(parses_as(device_index))
      ->type_name("LIST")
      ->default_str("off")
      ->excludes("--shard")
      ->excludes("--device");
  app.add_option("--worker-run", o.worker_run, "Set by a --devices parent for its workers")->group("");
}

int run_bench(const BenchOptions& o) {
  install_interrupt_handlers();
  set_wait_policy(o.kernel_timeout, [] { return interrupt_signal() != 0; });
  if (!check_outputs(o)) return kExitUsage;
  std::vector<Sweep> sweep;
  std::uint64_t n_cases = 0;
  if (const int rc = plan_sweep(o, sweep, n_cases)) return rc;
  if (!o.devices.empty()) return run_on_devices(o, n_cases);
  vendor::set_options({o.cudnn_lib, o.cudnn_engines == "all"});
  const ShardSpec shard = o.shard.empty() ? ShardSpec{} : parse_shard(o.shard);
  const std::vector<Case> cases = expand(sweep, shard.index, shard.count);
  const auto [csv_path, md_path] = report_paths(o);
  RunContext ctx = base_context(o);
  // A --devices worker leaves its context beside its CSV for the parent, whatever happens.
  const auto tell_parent = [&](std::size_t rows) {
    if (o.worker_run.empty()) return;
    try {
      write_worker_context(worker_context_path(o.out_dir), {o.worker_run, rows, ctx});
    } catch (const std::exception& e) {
      std::cerr << "rmsnorm-bench: worker: " << e.what() << "\n";
    }
  };
  if (cases.empty()) {
    std::cerr << fmt::format("rmsnorm-bench: --shard {}: this shard holds no case ({} in the whole sweep); {} and "
                             "{} are left as they were\n",
                             o.shard, n_cases, csv_path, md_path);
    tell_parent(0);
    return kExitPass;
  }
  if (const int sig = interrupt_signal()) return 128 + sig;

  DeviceInfo dev;
  try {
    dev = open_device(o.device);
  } catch (const std::exception& e) {  // NoDeviceError, or a CudaError while describing it
    std::cerr << "rmsnorm-bench: " << e.what() << "\n";
    std::cerr << fmt::format("rmsnorm-bench: no case ran: {} and {} are left as they were\n", csv_path, md_path);
    tell_parent(0);
    return kExitNoDevice;
  }

  std::unique_ptr<PendingCsv> csv;
  try {
    csv = std::make_unique<PendingCsv>(csv_path);
  } catch (const std::exception& e) {
    std::cerr << "rmsnorm-bench: --csv: " << e.what() << "\n";
    return kExitHostError;
  }

  RunConfig cfg;
  cfg.check = !o.no_check;
  cfg.time = !o.no_time;
  cfg.timing.min_samples = o.min_samples;
  cfg.timing.max_noise_pct = o.max_noise;
  cfg.timing.max_time_s = o.max_time;
  cfg.timing.flush = o.flush == "write" ? FlushMode::write : FlushMode::read;
  cfg.max_device_bytes = o.max_device_mem;
  cfg.copy_bytes = o.copy_bytes;

  ctx.gpu = dev.name;
  ctx.cc = dev.cc;
  ctx.sms = dev.sms;
  ctx.l2_mb = static_cast<double>(dev.l2_bytes) / (1024.0 * 1024.0);
  ctx.driver = dev.driver;
  ctx.cuda_runtime = dev.runtime;

  const bool tty = isatty(STDERR_FILENO) != 0;
  std::vector<Record> records;
  SweepOutput out;
  out.md_path = md_path;
  out.planned = cases.size();
  out.progress = [&](const Record& r) {
    if (o.quiet) return;
    if (tty)
      std::cerr << "\r" << progress_line(records.size(), cases.size(), r) << "\033[K" << std::flush;
    else
      std::cerr << progress_line(records.size(), cases.size(), r) << "\n";
  };
  if (o.plots) out.before_report = [&](RunContext& c) { c.plots = make_plots(csv_path, md_path, records, o.quiet); };
  const auto run = [&](const std::function<void(const Record&)>& sink) {
    Runner runner(dev, cfg);
    if (!o.quiet)
      std::cerr << fmt::format("rmsnorm-bench {} ({}) on {} (cc {}, {} SMs): {} cases\n", RB_VERSION, RB_COMMIT,
                               dev.name, dev.cc, dev.sms, cases.size());
    if (cfg.time) {
      ctx.copy_gbps = runner.copy_ceiling().gbps;
      if (!o.quiet)
        std::cerr << fmt::format("copy ceiling: {:.0f} GB/s (read + write; L2 flush: {})\n", ctx.copy_gbps, o.flush);
    }
    throw_if_interrupted();
    runner.run(cases, sink);
    if (tty && !o.quiet) std::cerr << "\n";
  };
  int code = run_and_publish(run, *csv, out, ctx, records);
  tell_parent(csv->committed() ? records.size() : 0);
  std::cout << summary_table(records);
  if (!records.empty()) std::cout << "reports: " << csv_path << ", " << md_path << "\n";
  if (code == kExitPass && any_failed(records)) code = kExitFail;
  return code;
}

}  // namespace rb

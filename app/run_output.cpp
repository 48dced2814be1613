#include "app/run_output.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <new>
#include <stdexcept>

#include "app/exit_codes.h"
#include "app/interrupt.h"
#include "harness/cuda_check.h"
#include "reports/atomic_file.h"
#include "reports/csv_reader.h"
#include "reports/merge.h"

namespace rb {

namespace fs = std::filesystem;

namespace {

std::string dir_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

void sync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

void check_writable(const std::string& path, const std::string& option) {
  const auto refuse = [&](const std::string& why) {
    throw std::invalid_argument(fmt::format("{}: cannot write '{}': {}", option, path, why));
  };
  if (path.empty()) refuse("empty path");
  std::error_code ec;
  if (fs::is_directory(path, ec)) refuse("it is a directory");
  const std::string dir = dir_of(path);
  fs::create_directories(dir, ec);
  if (ec) refuse(fmt::format("cannot create directory '{}': {}", dir, ec.message()));
  const std::string probe = fmt::format("{}/.rmsnorm-bench-probe.{}", dir, static_cast<long>(::getpid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int err = errno;
    refuse(fmt::format("cannot create a file in '{}': {}", dir, std::strerror(err)));
  }
  ::close(fd);
  ::unlink(probe.c_str());  // the file itself is replaced by a rename, so the directory is what counts
}

bool same_entry(const std::string& a, const std::string& b) {
  const auto entry = [](const std::string& p) {
    std::error_code ec;
    const fs::path abs = fs::absolute(p, ec).lexically_normal();
    const fs::path dir = fs::weakly_canonical(abs.parent_path(), ec);
    return ec ? abs : dir / abs.filename();
  };
  return entry(a) == entry(b);
}

PendingCsv::PendingCsv(std::string path)
    : path_(std::move(path)), partial_(fmt::format("{}.partial.{}", path_, static_cast<long>(::getpid()))) {
  writer_ = std::make_unique<CsvWriter>(partial_);
}

PendingCsv::~PendingCsv() {
  writer_.reset();
  if (!committed_) ::unlink(partial_.c_str());
}

void PendingCsv::write(const Record& r) {
  writer_->write(r);
  ++rows_;
}

void PendingCsv::commit() {
  writer_.reset();  // closes the file; every line was flushed as it was written
  sync_path(partial_, O_RDONLY);
  if (std::rename(partial_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    throw std::runtime_error(
        fmt::format("cannot rename {} to {}: {}", partial_, path_, std::strerror(err)));
  }
  committed_ = true;
  sync_path(dir_of(path_), O_RDONLY | O_DIRECTORY);
}

int run_streaming(const RunFn& run, PendingCsv& csv, std::vector<Record>& records,
                  const std::function<void(const Record&)>& progress) {
  try {
    throw_if_interrupted();
    run([&](const Record& r) {
      csv.write(r);
      records.push_back(r);
      if (progress) progress(r);
      throw_if_interrupted();  // between cases: the one that just finished is kept
    });
    throw_if_interrupted();
    return kExitPass;
  } catch (const Interrupted& e) {
    std::cerr << fmt::format("\nrmsnorm-bench: interrupted by signal {} ({}): stopping after {} finished case(s)\n",
                             e.signal, e.signal == 2 ? "SIGINT" : e.signal == 15 ? "SIGTERM" : "signal",
                             records.size());
    return 128 + e.signal;
  } catch (const CudaError& e) {
    std::cerr << "\nrmsnorm-bench: CUDA error aborted the run: " << e.what() << "\n";
    // A wait given up after a signal (harness/wait.h) ends the run as the signal asked.
    if (const int sig = interrupt_signal()) return 128 + sig;
    return kExitCudaError;
  } catch (const std::bad_alloc&) {
    std::cerr << "\nrmsnorm-bench: out of host memory (std::bad_alloc) after " << records.size()
              << " finished case(s); this is not a CUDA error\n";
    return kExitHostError;
  } catch (const std::exception& e) {
    std::cerr << "\nrmsnorm-bench: the run stopped on a host error: " << e.what() << "\n";
    return kExitHostError;
  }
}

std::string mark_incomplete(std::string report, int code, std::size_t done, std::size_t planned) {
  std::string why;
  if (code > 128)
    why = fmt::format("interrupted by {}", code == 128 + SIGINT    ? std::string("SIGINT")
                                           : code == 128 + SIGTERM ? std::string("SIGTERM")
                                                                   : fmt::format("signal {}", code - 128));
  else if (code == kExitCudaError)
    why = "a CUDA error aborted the run";
  else if (code == kExitHostError)
    why = "a host error (out of memory, a file not writable) stopped the run";
  else if (code == kExitNoDevice || code == kExitUsage)
    why = fmt::format("a --devices worker exited {} without running its shard", code);
  else
    return report;
  const std::string note =
      fmt::format("> **Incomplete run:** {}; {} of {} planned case(s) finished.\n\n", why, done, planned);
  const auto title_end = report.find("\n\n");
  return title_end == std::string::npos ? note + report : report.insert(title_end + 2, note);
}

int run_and_publish(const RunFn& run, PendingCsv& csv, const SweepOutput& out, RunContext& ctx,
                    std::vector<Record>& records) {
  int code = run_streaming(run, csv, records, out.progress);
  if (records.empty()) {
    std::cerr << fmt::format("rmsnorm-bench: no case finished: {} and {} are left as they were{}\n", csv.path(),
                             out.md_path, fs::exists(csv.path()) ? " (earlier results kept)" : " (none written)");
    return code;
  }
  try {
    csv.commit();
  } catch (const std::exception& e) {
    std::cerr << "rmsnorm-bench: --csv: " << e.what() << "; the finished rows are in " << csv.partial_path() << "\n";
    return worse_exit(code, kExitHostError);
  }
  try {
    if (out.before_report) out.before_report(ctx);
    write_file_atomic(out.md_path, mark_incomplete(markdown_report(ctx, records), code, records.size(), out.planned));
  } catch (const std::exception& e) {
    std::cerr << "rmsnorm-bench: --md: " << e.what() << "\n";
    return worse_exit(code, kExitHostError);
  }
  if (code != kExitPass)
    std::cerr << fmt::format("rmsnorm-bench: {} finished case(s) are in {} and {}\n", records.size(), csv.path(),
                             out.md_path);
  return code;
}

// One "key=value" line each; values hold no line breaks (replaced by spaces).
void write_worker_context(const std::string& path, const WorkerContext& w) {
  const auto line = [](const std::string& k, std::string v) {
    for (char& c : v)
      if (c == '\n' || c == '\r') c = ' ';
    return k + "=" + v + "\n";
  };
  std::string text = line("format", "rmsnorm-bench-worker-context/1");
  text += line("run_id", w.run_id);
  text += line("rows", std::to_string(w.rows));
  text += line("gpu", w.ctx.gpu);
  text += line("cc", w.ctx.cc);
  text += line("sms", std::to_string(w.ctx.sms));
  text += line("l2_mb", fmt::format("{}", w.ctx.l2_mb));
  text += line("driver", w.ctx.driver);
  text += line("cuda_runtime", w.ctx.cuda_runtime);
  text += line("copy_gbps", fmt::format("{}", w.ctx.copy_gbps));
  text += line("timing_note", w.ctx.timing_note);
  write_file_atomic(path, text);
}

std::optional<WorkerContext> read_worker_context(const std::string& path, const std::string& run_id) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  WorkerContext w;
  bool format_ok = false;
  std::string l;
  try {
    while (std::getline(in, l)) {
      const auto eq = l.find('=');
      if (eq == std::string::npos) return std::nullopt;
      const std::string k = l.substr(0, eq), v = l.substr(eq + 1);
      if (k == "format") format_ok = v == "rmsnorm-bench-worker-context/1";
      else if (k == "run_id") w.run_id = v;
      else if (k == "rows") w.rows = std::stoull(v);
      else if (k == "gpu") w.ctx.gpu = v;
      else if (k == "cc") w.ctx.cc = v;
      else if (k == "sms") w.ctx.sms = std::stoll(v);
      else if (k == "l2_mb") w.ctx.l2_mb = std::stod(v);
      else if (k == "driver") w.ctx.driver = v;
      else if (k == "cuda_runtime") w.ctx.cuda_runtime = v;
      else if (k == "copy_gbps") w.ctx.copy_gbps = std::stod(v);
      else if (k == "timing_note") w.ctx.timing_note = v;
    }
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (!format_ok || w.run_id != run_id) return std::nullopt;
  return w;
}

std::string worker_context_path(const std::string& dir) { return (fs::path(dir) / "worker-context.txt").string(); }

WorkerResults collect_worker_results(const std::vector<std::string>& dirs, const std::string& run_id) {
  WorkerResults out;
  std::vector<std::pair<std::string, std::vector<Record>>> parts;
  for (const std::string& dir : dirs) {
    const std::optional<WorkerContext> w = read_worker_context(worker_context_path(dir), run_id);
    if (!w || w->rows == 0) continue;  // no context of this run: the worker finished nothing
    const std::string f = (fs::path(dir) / "results.csv").string();
    try {
      parts.emplace_back(f, read_csv(f));
      out.contexts.push_back(w->ctx);
    } catch (const std::exception& e) {
      out.errors.push_back(fmt::format("reading a worker's CSV: {}", e.what()));
    }
  }
  try {
    out.records = merge_records(parts);
  } catch (const std::exception& e) {
    out.errors.push_back(fmt::format("merging the workers' CSVs: {}", e.what()));
  }
  return out;
}

RunContext merged_context(RunContext base, const std::vector<RunContext>& workers) {
  if (workers.empty()) return base;
  const RunContext& first = workers.front();
  std::vector<std::string> gpus;
  for (const RunContext& c : workers)
    if (std::find(gpus.begin(), gpus.end(), c.gpu) == gpus.end()) gpus.push_back(c.gpu);
  base.gpu.clear();
  for (const std::string& g : gpus) base.gpu += (base.gpu.empty() ? "" : " + ") + g;
  base.cc = first.cc;
  base.sms = first.sms;
  base.l2_mb = first.l2_mb;
  base.driver = first.driver;
  base.cuda_runtime = first.cuda_runtime;
  base.copy_gbps = first.copy_gbps;
  return base;
}

}  // namespace rb

// Where a sweep's results go and how they get there without ever destroying earlier ones:
// output paths checked (and test-created) before any GPU work; the CSV streamed into a
// partial file beside its destination and renamed into place at the end, by interruption or
// CUDA error included, but only when at least one case ran; the report written atomically.
// A run that measured nothing leaves the files it would have replaced as they were.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "reports/csv_writer.h"
#include "reports/markdown.h"
#include "reports/record.h"

namespace rb {

// Creates path's directory and test-creates (then removes) a file in it. Throws
// std::invalid_argument naming `option`, the path and the reason when a file cannot be written
// there, or when path is a directory.
void check_writable(const std::string& path, const std::string& option);

// Whether two paths name the same directory entry (o/x.csv and ../here/o/x.csv, or through a
// symlinked directory): the entry a write to either replaces, since outputs are written to a
// temporary file and renamed over their path. A symlink as the last component is an entry of
// its own (the rename replaces the link, not its target).
bool same_entry(const std::string& a, const std::string& b);

// The CSV of a run in progress: rows stream (one flushed line each) into
// "<path>.partial.<pid>"; commit() renames it over path. Destroyed uncommitted, it removes
// the partial file (a killed process leaves it, holding every completed row).
class PendingCsv {
 public:
  explicit PendingCsv(std::string path);  // throws std::runtime_error naming the file
  ~PendingCsv();
  PendingCsv(const PendingCsv&) = delete;
  PendingCsv& operator=(const PendingCsv&) = delete;

  void write(const Record& r);
  std::size_t rows() const { return rows_; }
  bool committed() const { return committed_; }
  // Flushes to disk and renames the partial file over path. Throws std::runtime_error.
  void commit();
  const std::string& path() const { return path_; }
  const std::string& partial_path() const { return partial_; }

 private:
  std::string path_, partial_;
  std::unique_ptr<CsvWriter> writer_;
  std::size_t rows_ = 0;
  bool committed_ = false;
};

using RunFn = std::function<void(const std::function<void(const Record&)>&)>;

// Runs `run`, which hands each finished case to the sink it is given. Each record goes to
// csv and records, then `progress`; a signal recorded by the handlers (interrupt.h) ends the
// run between cases. Returns 0 when run returned, kExitCudaError on a CudaError,
// kExitHostError on any other exception (std::bad_alloc included), 128 + the signal when
// interrupted; says why on stderr.
int run_streaming(const RunFn& run, PendingCsv& csv, std::vector<Record>& records,
                  const std::function<void(const Record&)>& progress);

struct SweepOutput {
  std::string md_path;
  std::size_t planned = 0;                              // cases the run meant to finish
  std::function<void(const Record&)> progress;          // optional
  std::function<void(RunContext&)> before_report;       // optional: runs once the CSV is in place (plots)
};

// run_streaming, then the results put in place: with at least one record, the CSV committed
// and the report (markdown_report(ctx, records), marked incomplete when the run stopped early)
// written atomically to out.md_path; with none, both left as they were, and stderr says so.
// Returns run_streaming's code, raised to kExitHostError when a file could not be written.
int run_and_publish(const RunFn& run, PendingCsv& csv, const SweepOutput& out, RunContext& ctx,
                    std::vector<Record>& records);

// The report of a run that stopped early (exit code 4, 5 or 128 + signal) says so under its
// title: why, and how many of the planned cases finished.
std::string mark_incomplete(std::string report, int code, std::size_t done, std::size_t planned);

// The report context of a --devices worker, kept beside its CSV so the parent's merged report
// carries the device, driver and runtime without touching a GPU. `run_id` ties the file to
// one parent run: a stale file from an earlier run is never taken for this one's.
struct WorkerContext {
  std::string run_id;
  std::size_t rows = 0;
  RunContext ctx;
};
void write_worker_context(const std::string& path, const WorkerContext& w);  // atomic; throws
// The file's context, or nullopt when it is missing, malformed or of another run.
std::optional<WorkerContext> read_worker_context(const std::string& path, const std::string& run_id);

// What the --devices workers of one run left: the rows of every shard whose context file
// names run_id and at least one row (merged in the order of dirs), their contexts, and what
// could not be read or merged.
struct WorkerResults {
  std::vector<Record> records;
  std::vector<RunContext> contexts;
  std::vector<std::string> errors;
};
WorkerResults collect_worker_results(const std::vector<std::string>& dirs, const std::string& run_id);

// base (tool, command line, timing) with the device fields of the workers' contexts: the
// first one's, every distinct GPU named.
RunContext merged_context(RunContext base, const std::vector<RunContext>& workers);

// The context file in a worker's output directory.
std::string worker_context_path(const std::string& dir);

}  // namespace rb

// What faults do to the files on disk and to the exit code, without a GPU: the run loop and
// its finishing path (app/run_output.h) driven by fake runs that emit records, raise SIGINT or
// SIGTERM, throw a CudaError or std::bad_alloc; signal forwarding to worker processes; the
// --devices workers' context files; output path checks. Suites are named Failure*.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "app/exit_codes.h"
#include "app/interrupt.h"
#include "app/process.h"
#include "app/run_output.h"
#include "harness/cuda_check.h"
#include "reports/csv_reader.h"
#include "reports/csv_writer.h"
#include "reports/markdown.h"

namespace fs = std::filesystem;

namespace rb {
namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

Record record(std::int64_t H) {
  Record r;
  r.gpu = "Test GPU";
  r.cc = "9.0";
  r.kernel = "naive";
  r.picked = "naive";
  r.provider = "builtin";
  r.op = "fwd";
  r.dtype = r.wdtype = "bf16";
  r.M = 1;
  r.H = H;
  r.stride = H;
  r.layout = "contiguous";
  r.eps = 1e-5;
  r.dist = "normal";
  r.seed = 1;
  r.status = Status::pass;
  return r;
}

// Files in dir whose name holds ".partial." or ".tmp." or "probe": leftovers of a run.
std::vector<std::string> leftovers(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.find(".partial.") != std::string::npos || n.find(".tmp.") != std::string::npos ||
        n.find("probe") != std::string::npos)
      out.push_back(n);
  }
  return out;
}

class FailureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("rb_failure_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    csv_ = (dir_ / "results.csv").string();
    md_ = (dir_ / "report.md").string();
    install_interrupt_handlers();
    reset_interrupt();
  }
  void TearDown() override {
    reset_interrupt();
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    fs::remove_all(dir_);
  }

  // A fake sweep of n cases; `fault` runs after case k (1-based) has been handed over.
  int run_fake(int n, int k, const std::function<void()>& fault, std::vector<Record>& records) {
    PendingCsv csv(csv_);
    SweepOutput out;
    out.md_path = md_;
    out.planned = static_cast<std::size_t>(n);
    RunContext ctx;
    ctx.gpu = "Test GPU";
    const RunFn run = [&](const std::function<void(const Record&)>& sink) {
      for (int i = 1; i <= n; ++i) {
        sink(record(100 + i));
        if (i == k) fault();
      }
    };
    return run_and_publish(run, csv, out, ctx, records);
  }

  fs::path dir_;
  std::string csv_, md_;
};

// The signal path: the handler only records the signal; the loop stops after the case in
// flight, the CSV holds exactly the finished cases, the report covers them and says the run
// was interrupted, and the exit code is 128 + the signal.
void expect_interrupted(int expected_code, const std::string& csv, const std::string& md, int code,
                        const std::vector<Record>& records, const char* name) {
  // The signal came after case 2 was handed over, while case 3 ran: case 3 finishes and is
  // kept, case 4 never starts.
  EXPECT_EQ(code, expected_code);
  ASSERT_EQ(records.size(), 3u);
  const std::vector<Record> rows = read_csv(csv);
  ASSERT_EQ(rows.size(), 3u) << slurp(csv);
  EXPECT_EQ(rows[0].H, 101);
  EXPECT_EQ(rows[2].H, 103);
  const std::string report = slurp(md);
  EXPECT_NE(report.find("Incomplete run"), std::string::npos) << report;
  EXPECT_NE(report.find(std::string("interrupted by ") + name), std::string::npos) << report;
  EXPECT_NE(report.find("3 of 5"), std::string::npos) << report;
}

TEST_F(FailureTest, SigintBetweenCasesKeepsFinishedRowsAndExits130) {
  put(csv_, "old results\n");
  std::vector<Record> records;
  const int code = run_fake(5, 2, [] { std::raise(SIGINT); }, records);
  expect_interrupted(130, csv_, md_, code, records, "SIGINT");
  EXPECT_TRUE(leftovers(dir_).empty());
}

TEST_F(FailureTest, SigtermBetweenCasesKeepsFinishedRowsAndExits143) {
  std::vector<Record> records;
  const int code = run_fake(5, 2, [] { std::raise(SIGTERM); }, records);
  expect_interrupted(143, csv_, md_, code, records, "SIGTERM");
  EXPECT_TRUE(leftovers(dir_).empty());
}

TEST_F(FailureTest, SignalBeforeAnyCaseLeavesEarlierResults) {
  put(csv_, "old results\n");
  put(md_, "old report\n");
  std::raise(SIGINT);
  std::vector<Record> records;
  const int code = run_fake(5, 0, [] {}, records);
  EXPECT_EQ(code, 130);
  EXPECT_TRUE(records.empty());
  EXPECT_EQ(slurp(csv_), "old results\n");
  EXPECT_EQ(slurp(md_), "old report\n");
  EXPECT_TRUE(leftovers(dir_).empty());
}

TEST_F(FailureTest, RunThatMeasuredNothingLeavesEarlierResults) {
  put(csv_, "old results\n");
  put(md_, "old report\n");
  std::vector<Record> records;
  PendingCsv csv(csv_);
  SweepOutput out;
  out.md_path = md_;
  RunContext ctx;
  const int code = run_and_publish([](const std::function<void(const Record&)>&) { throw CudaError(cudaErrorUnknown, "boom"); },
                                   csv, out, ctx, records);
  EXPECT_EQ(code, kExitCudaError);
  EXPECT_EQ(slurp(csv_), "old results\n");
  EXPECT_EQ(slurp(md_), "old report\n");
}

TEST_F(FailureTest, CudaErrorMidRunPublishesWhatFinishedAndExits4) {
  put(csv_, "old results\n");
  std::vector<Record> records;
  const int code = run_fake(5, 3, [] { throw CudaError(cudaErrorIllegalAddress, "an illegal memory access"); }, records);
  EXPECT_EQ(code, kExitCudaError);
  EXPECT_EQ(read_csv(csv_).size(), 3u);
  const std::string report = slurp(md_);
  EXPECT_NE(report.find("a CUDA error aborted the run"), std::string::npos) << report;
}

TEST_F(FailureTest, BadAllocIsAHostErrorNotACudaError) {
  std::vector<Record> records;
  const int code = run_fake(5, 1, [] { throw std::bad_alloc(); }, records);
  EXPECT_EQ(code, kExitHostError);
  EXPECT_NE(code, kExitCudaError);
  EXPECT_EQ(read_csv(csv_).size(), 1u);
}

TEST_F(FailureTest, CompleteRunReplacesTheCsvAtTheEndOnly) {
  put(csv_, "old results\n");
  std::vector<Record> records;
  PendingCsv csv(csv_);
  SweepOutput out;
  out.md_path = md_;
  out.planned = 2;
  RunContext ctx;
  const int code = run_and_publish(
      [&](const std::function<void(const Record&)>& sink) {
        sink(record(1));
        // Mid-run: the old file is still whole; the new rows stream beside it.
        EXPECT_EQ(slurp(csv_), "old results\n");
        EXPECT_EQ(read_csv(csv.partial_path()).size(), 1u);
        sink(record(2));
      },
      csv, out, ctx, records);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(read_csv(csv_).size(), 2u);
  EXPECT_EQ(slurp(md_).find("Incomplete"), std::string::npos);
  EXPECT_TRUE(leftovers(dir_).empty());
}

// --devices: the parent forwards a SIGTERM it receives to every worker still running.
TEST_F(FailureTest, WaitForwardsSignalsToWorkers) {
  std::vector<pid_t> pids;
  for (int i = 0; i < 2; ++i) {
    const pid_t pid = spawn_process("/bin/sleep", {"sleep", "30"});
    ASSERT_GT(pid, 0);
    pids.push_back(pid);
  }
  std::raise(SIGTERM);
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<int> codes = wait_forwarding_signals(pids);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(codes.size(), 2u);
  EXPECT_EQ(codes[0], 128 + SIGTERM);
  EXPECT_EQ(codes[1], 128 + SIGTERM);
  EXPECT_LT(s, 10.0);
}

TEST_F(FailureTest, WaitWithoutSignalReturnsExitCodes) {
  const pid_t a = spawn_process("/bin/sh", {"sh", "-c", "exit 3"});
  const pid_t b = spawn_process("/bin/sh", {"sh", "-c", "exit 0"});
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  EXPECT_EQ(wait_forwarding_signals({a, b}), (std::vector<int>{3, 0}));
}

// --devices: the merged report carries the workers' device context; a shard left by an
// earlier run (another run id) is never merged.
TEST_F(FailureTest, WorkerResultsOfThisRunOnlyWithTheirContext) {
  const fs::path fresh = dir_ / "shards" / "0", stale = dir_ / "shards" / "1";
  put(fresh / "results.csv", csv_file_text({record(1), record(2)}));
  put(stale / "results.csv", csv_file_text({record(3)}));
  WorkerContext w;
  w.run_id = "this-run";
  w.rows = 2;
  w.ctx.gpu = "NVIDIA H200";
  w.ctx.cc = "9.0";
  w.ctx.sms = 132;
  w.ctx.l2_mb = 60;
  w.ctx.driver = "13.0";
  w.ctx.cuda_runtime = "13.0";
  write_worker_context(worker_context_path(fresh.string()), w);
  w.run_id = "an-earlier-run";
  write_worker_context(worker_context_path(stale.string()), w);

  const WorkerResults res = collect_worker_results({fresh.string(), stale.string()}, "this-run");
  EXPECT_TRUE(res.errors.empty());
  ASSERT_EQ(res.records.size(), 2u);
  ASSERT_EQ(res.contexts.size(), 1u);
  RunContext base;
  base.command_line = "rmsnorm-bench --devices 0,1";
  const RunContext ctx = merged_context(base, res.contexts);
  const std::string report = markdown_report(ctx, res.records);
  EXPECT_NE(report.find("NVIDIA H200 (cc 9.0, 132 SMs, 60 MB L2)"), std::string::npos) << report;
  EXPECT_NE(report.find("CUDA driver API: 13.0; CUDA runtime: 13.0"), std::string::npos) << report;
  EXPECT_EQ(report.find("— SMs"), std::string::npos) << report;
}

TEST_F(FailureTest, WorkerContextWithNoRowsIsNotMerged) {
  const fs::path d = dir_ / "shards" / "0";
  put(d / "results.csv", csv_file_text({record(1)}));  // an earlier run's file
  write_worker_context(worker_context_path(d.string()), {"run", 0, RunContext{}});
  EXPECT_TRUE(collect_worker_results({d.string()}, "run").records.empty());
}

TEST_F(FailureTest, CheckWritableRefusesNamingTheOption) {
  fs::create_directories(dir_ / "adir");
  try {
    check_writable((dir_ / "adir").string(), "--md");
    ADD_FAILURE() << "a directory accepted as --md";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--md"), std::string::npos) << e.what();
  }
  put(dir_ / "afile", "x");
  EXPECT_THROW(check_writable((dir_ / "afile" / "results.csv").string(), "--csv"), std::invalid_argument);
  if (::geteuid() != 0) {
    fs::create_directories(dir_ / "ro");
    ::chmod((dir_ / "ro").c_str(), 0555);
    EXPECT_THROW(check_writable((dir_ / "ro" / "results.csv").string(), "--out"), std::invalid_argument);
    ::chmod((dir_ / "ro").c_str(), 0755);
  }
  check_writable((dir_ / "new" / "sub" / "results.csv").string(), "--out");  // creates the directories
  EXPECT_TRUE(fs::is_directory(dir_ / "new" / "sub"));
  EXPECT_TRUE(leftovers(dir_ / "new" / "sub").empty());
}

}  // namespace
}  // namespace rb

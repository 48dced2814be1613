// GPU tests: a kernel that faults on the device, or never finishes, mid-sweep ends the run
// with exit 4 (130 when a SIGINT asked to stop), and every row completed before it is on disk
// (the CSV streamed and flushed per case), with the faulting case recorded as an error. They
// run the real binary, since a device fault leaves the process's CUDA context unusable (and a
// hung kernel keeps its device busy until the process exits). Without a device they skip
// themselves, naming the CUDA error.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include "harness/device.h"
#include "reports/csv_reader.h"
#include "tests/run_bench.h"

namespace rb {
namespace {

namespace fs = std::filesystem;

// Each test runs the binary into a fresh output folder, removed afterwards; skipped without
// a device.
class DeviceFault : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!cuda_device_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
    out_ = fs::temp_directory_path() /
           (std::string("rb-fault-") + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
            std::to_string(::getpid()));
    fs::remove_all(out_);
  }
  void TearDown() override {
    if (!out_.empty()) fs::remove_all(out_);
  }

  // A sweep of fwd bf16 M=4 over H=`H` with `kernels` in that order (cases run data group by
  // data group, kernels in the order given), untimed, plus `extra` options.
  std::vector<std::string> sweep(const char* H, const char* kernels, std::vector<std::string> extra = {}) const {
    std::vector<std::string> a = {"--op",  "fwd",     "--H",      H,           "--M",   "4",          "--dtype",
                                  "bf16",  "--eps",   "1e-5",     "--kernel",  kernels, "--no-time", "--out",
                                  out_.string()};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }

  // The CSV left on disk: naive's row first (passed), `last` the last one (`want` status).
  std::vector<Record> expect_rows(const std::string& output, const char* last, Status want) const {
    const std::vector<Record> rows = read_csv((out_ / "results.csv").string());
    EXPECT_GE(rows.size(), 1u) << output;
    if (rows.empty()) return rows;
    EXPECT_EQ(rows[0].kernel, "naive");
    EXPECT_EQ(rows[0].status, Status::pass);
    EXPECT_EQ(rows.back().kernel, last);
    EXPECT_EQ(rows.back().status, want);
    EXPECT_TRUE(fs::exists(out_ / "report.md"));
    return rows;
  }

  fs::path out_;
};

TEST_F(DeviceFault, TrapMidSweepExits4AndKeepsEarlierRows) {
  // H=128 with naive, mutant-trap (faults); chunked and H=256 would follow.
  const auto r = testing_support::run_bench(sweep("128,256", "naive,mutant-trap,chunked"));
  EXPECT_EQ(r.status, 4) << r.output;
  EXPECT_NE(r.output.find("CUDA error aborted the run"), std::string::npos) << r.output;
  EXPECT_GE(expect_rows(r.output, "mutant-trap", Status::error).size(), 2u);
}

// A kernel that never finishes mid-sweep: the wait gives up after --kernel-timeout, the run
// ends with exit 4 naming the timeout, the rows before it are on disk and the hung case is
// recorded as an error; the process exits although its kernel still runs (run_bench's own
// `timeout 60` would make it 124).
TEST_F(DeviceFault, HangMidSweepExits4AfterTheKernelTimeout) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto r =
      testing_support::run_bench(sweep("128,256", "naive,mutant-hang,chunked", {"--kernel-timeout", "2"}));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.status, 4) << r.output;
  EXPECT_NE(r.output.find("did not finish within 2 s"), std::string::npos) << r.output;
  EXPECT_LT(took, 30) << r.output;
  const std::vector<Record> rows = expect_rows(r.output, "mutant-hang", Status::error);
  EXPECT_GE(rows.size(), 2u);
  if (!rows.empty()) {
    EXPECT_NE(rows.back().reason.find("did not finish"), std::string::npos) << rows.back().reason;
  }
}

// SIGINT while a kernel hangs (no timeout): the wait gives up kAbandonGraceS after the signal,
// and the run ends as interrupted (130) with the finished rows on disk.
TEST_F(DeviceFault, SigintDuringAHangExits130) {
  // `timeout -s INT 15` sends SIGINT after 15 s (the process start and the naive case take a
  // few) and, with --preserve-status, exits with the tool's own status (137 if it had to kill
  // it 30 s later: the test then fails instead of hanging).
  std::string cmd = "timeout --preserve-status -k 30 -s INT 15 " +
                    testing_support::shell_quote(testing_support::bench_exe().string());
  for (const std::string& a : sweep("128", "naive,mutant-hang", {"--kernel-timeout", "0"}))
    cmd += " " + testing_support::shell_quote(a);
  const int st = std::system((cmd + " >/dev/null 2>&1").c_str());
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 130);
  expect_rows("", "mutant-hang", Status::error);
}

}  // namespace
}  // namespace rb

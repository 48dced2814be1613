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

#include <unistd.h>

#include "harness/device.h"
#include "reports/csv_reader.h"
#include "tests/run_bench.h"

namespace rb {
namespace {

TEST(DeviceFault, TrapMidSweepExits4AndKeepsEarlierRows) {
  std::string why;
  if (!cuda_device_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  namespace fs = std::filesystem;
  const fs::path out = fs::temp_directory_path() / ("rb-fault-" + std::to_string(::getpid()));
  fs::remove_all(out);
  // Cases run data group by data group, kernels in the order given: H=128 with naive,
  // mutant-trap (faults), then chunked and H=256 would follow.
  const auto r = testing_support::run_bench({"--op", "fwd", "--H", "128,256", "--M", "4", "--dtype", "bf16", "--eps",
                                             "1e-5", "--kernel", "naive,mutant-trap,chunked", "--no-time", "--out",
                                             out.string()});
  EXPECT_EQ(r.status, 4) << r.output;
  EXPECT_NE(r.output.find("CUDA error aborted the run"), std::string::npos) << r.output;
  const std::vector<Record> rows = read_csv((out / "results.csv").string());
  ASSERT_GE(rows.size(), 2u) << r.output;
  EXPECT_EQ(rows[0].kernel, "naive");
  EXPECT_EQ(rows[0].status, Status::pass);
  EXPECT_EQ(rows.back().kernel, "mutant-trap");
  EXPECT_EQ(rows.back().status, Status::error);
  EXPECT_TRUE(fs::exists(out / "report.md"));
  fs::remove_all(out);
}

// A kernel that never finishes mid-sweep: the wait gives up after --kernel-timeout, the run
// ends with exit 4 naming the timeout, the rows before it are on disk and the hung case is
// recorded as an error; the process exits although its kernel still runs (run_bench's own
// `timeout 60` would make it 124).
TEST(DeviceFault, HangMidSweepExits4AfterTheKernelTimeout) {
  std::string why;
  if (!cuda_device_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  namespace fs = std::filesystem;
  const fs::path out = fs::temp_directory_path() / ("rb-hang-" + std::to_string(::getpid()));
  fs::remove_all(out);
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = testing_support::run_bench({"--op", "fwd", "--H", "128,256", "--M", "4", "--dtype", "bf16", "--eps",
                                             "1e-5", "--kernel", "naive,mutant-hang,chunked", "--no-time",
                                             "--kernel-timeout", "2", "--out", out.string()});
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.status, 4) << r.output;
  EXPECT_NE(r.output.find("did not finish within 2 s"), std::string::npos) << r.output;
  EXPECT_LT(took, 30) << r.output;
  const std::vector<Record> rows = read_csv((out / "results.csv").string());
  ASSERT_GE(rows.size(), 2u) << r.output;
  EXPECT_EQ(rows[0].kernel, "naive");
  EXPECT_EQ(rows[0].status, Status::pass);
  EXPECT_EQ(rows.back().kernel, "mutant-hang");
  EXPECT_EQ(rows.back().status, Status::error);
  EXPECT_NE(rows.back().reason.find("did not finish"), std::string::npos) << rows.back().reason;
  EXPECT_TRUE(fs::exists(out / "report.md"));
  fs::remove_all(out);
}

// SIGINT while a kernel hangs (no timeout): the wait gives up kAbandonGraceS after the signal,
// and the run ends as interrupted (130) with the finished rows on disk.
TEST(DeviceFault, SigintDuringAHangExits130) {
  std::string why;
  if (!cuda_device_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  namespace fs = std::filesystem;
  const fs::path out = fs::temp_directory_path() / ("rb-hang-int-" + std::to_string(::getpid()));
  fs::remove_all(out);
  // `timeout -s INT 15` sends SIGINT after 15 s (the process start and the naive case take a
  // few) and, with --preserve-status, exits with the tool's own status (137 if it had to kill
  // it 30 s later: the test then fails instead of hanging).
  const std::string cmd = "timeout --preserve-status -k 30 -s INT 15 " +
                          testing_support::shell_quote(testing_support::bench_exe().string()) +
                          " --op fwd --H 128 --M 4 --dtype bf16 --eps 1e-5 --kernel naive,mutant-hang --no-time "
                          "--kernel-timeout 0 --out " + testing_support::shell_quote(out.string()) + " >/dev/null 2>&1";
  const int st = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 130);
  const std::vector<Record> rows = read_csv((out / "results.csv").string());
  ASSERT_GE(rows.size(), 1u);
  EXPECT_EQ(rows[0].kernel, "naive");
  EXPECT_EQ(rows[0].status, Status::pass);
  fs::remove_all(out);
}

}  // namespace
}  // namespace rb

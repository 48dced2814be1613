// GPU test: a kernel that faults on the device mid-sweep ends the run with exit 4, and every
// row completed before it is on disk (the CSV streamed and flushed per case), with the
// faulting case recorded as an error. Runs the real binary, since a device fault leaves the
// process's CUDA context unusable. Skips itself, naming the CUDA error, without a device.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace rb

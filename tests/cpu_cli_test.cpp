// The rmsnorm-bench binary driven as a user would: bad input exits 2 naming the option (before
// any GPU work), --help / --version / list, and exit 3 naming the CUDA error when no device is
// usable. The binary is found next to the test's build folder (build/tests/../rmsnorm-bench),
// so the tests work wherever the build folder is moved. Suites are named Cli*.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <ostream>
#include <regex>
#include <string>
#include <vector>

#include "harness/device.h"
#include "tests/run_bench.h"

namespace fs = std::filesystem;

namespace rb {
namespace {

using testing_support::bench_exe;
using testing_support::run_bench;
using testing_support::RunResult;

std::string joined(const std::vector<std::string>& args) {
  std::string s;
  for (const std::string& a : args) s += (s.empty() ? "" : " ") + a;
  return s;
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path exe = bench_exe();
    ASSERT_FALSE(exe.empty()) << "cannot read /proc/self/exe";
    ASSERT_TRUE(fs::exists(exe))
        << "rmsnorm-bench not found at " << exe
        << " (expected beside the tests/ folder of the build; build target rmsnorm-bench)";
  }
};

// ---------------------------------------------------------------------------------------
// Bad input: exit 2 with a message naming the option.

struct BadInput {
  std::string name;
  std::vector<std::string> args;
  std::vector<std::string> expect;  // substrings of the output
};

// Failure lines show the command line, not the struct's bytes.
void PrintTo(const BadInput& b, std::ostream* os) { *os << joined(b.args); }

class CliBadInput : public CliTest, public ::testing::WithParamInterface<BadInput> {};

TEST_P(CliBadInput, ExitsTwoNamingTheOption) {
  const BadInput& p = GetParam();
  const RunResult r = run_bench(p.args);
  EXPECT_EQ(r.status, 2) << joined(p.args) << "\n" << r.output;
  for (const std::string& s : p.expect)
    EXPECT_NE(r.output.find(s), std::string::npos)
        << "output of `" << joined(p.args) << "` lacks '" << s << "':\n"
        << r.output;
  // Rejected while parsing: never reaches the device.
  EXPECT_EQ(r.output.find("CUDA"), std::string::npos) << r.output;
}

INSTANTIATE_TEST_SUITE_P(
    CliOptions, CliBadInput,
    ::testing::Values(BadInput{"H_zero", {"--H", "0"}, {"--H", "'0'"}},
                      BadInput{"H_not_a_number", {"--H", "abc"}, {"--H", "abc"}},
                      BadInput{"H_zero_in_list", {"--H", "4096,0"}, {"--H"}},
                      BadInput{"M_factor_one", {"--M", "1:4:x1"}, {"--M"}},
                      BadInput{"dtype_fp8", {"--dtype", "fp8"}, {"--dtype", "fp8", "fp32,fp16,bf16"}},
                      BadInput{"wdtype_int8", {"--wdtype", "int8"}, {"--wdtype", "int8"}},
                      BadInput{"rdtype_int8", {"--rdtype", "int8"}, {"--rdtype", "int8"}},
                      BadInput{"op_unknown", {"--op", "fwd,sideways"}, {"--op", "sideways"}},
                      BadInput{"kernel_lacks_op", {"--kernel", "warp-row", "--op", "bwd"}, {"--kernel/--op"}},
                      BadInput{"eps_zero", {"--eps", "0"}, {"--eps", "'0'"}},
                      BadInput{"eps_nan", {"--eps", "nan"}, {"--eps", "nan"}},
                      BadInput{"eps_negative", {"--eps", "-1e-5"}, {"--eps", "-1e-5"}},
                      BadInput{"kernel_unknown", {"--kernel", "nope"}, {"--kernel", "nope"}},
                      BadInput{"dist_unknown", {"--dist", "uniform"}, {"--dist", "uniform"}},
                      BadInput{"layout_unknown", {"--layout", "weird"}, {"--layout", "weird"}},
                      BadInput{"min_samples_zero", {"--min-samples", "0"}, {"--min-samples"}},
                      BadInput{"unknown_option", {"--frobnicate"}, {"--frobnicate"}},
                      BadInput{"shard_index_too_big", {"--shard", "2/2"}, {"--shard", "2/2"}},
                      BadInput{"shard_not_a_fraction", {"--shard", "x"}, {"--shard", "I/N"}},
                      BadInput{"devices_with_shard", {"--devices", "0", "--shard", "0/2"}, {"--devices", "--shard"}},
                      BadInput{"flush_unknown", {"--flush", "sideways"}, {"--flush", "read,write"}}),
    [](const ::testing::TestParamInfo<BadInput>& info) { return info.param.name; });

// ---------------------------------------------------------------------------------------
// --help, --version, list

TEST_F(CliTest, HelpListsEveryOptionAndTheListSubcommand) {
  const RunResult r = run_bench({"--help"});
  EXPECT_EQ(r.status, 0) << r.output;
  for (const char* opt :
       {"--H",      "--M",    "--dtype",    "--wdtype",  "--eps",         "--kernel",    "--dist",
        "--layout", "--seed", "--no-check", "--no-time", "--min-samples", "--max-noise", "--max-time",
        "--out",    "--csv",  "--md",       "--device",  "--quiet",       "--preset",    "--op",
        "--rdtype"}) {
    const std::regex word(std::string("(^|[\\s,])") + opt + "([\\s=]|$)");
    EXPECT_TRUE(std::regex_search(r.output, word)) << "--help does not list " << opt << ":\n" << r.output;
  }
  EXPECT_TRUE(std::regex_search(r.output, std::regex("\\slist\\s"))) << "--help does not list `list`:\n"
                                                                     << r.output;
}

TEST_F(CliTest, VersionPrintsCommit) {
  const RunResult r = run_bench({"--version"});
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("rmsnorm-bench"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("commit="), std::string::npos) << r.output;
}

const std::vector<std::string> kRealKernels = {"naive", "warp-row", "row-vector", "chunked", "auto"};
const std::vector<std::string> kMutants = {
    "mutant-half-accum",       "mutant-eps-outside",   "mutant-weight-row-offset",     "mutant-tail-store",
    "mutant-tail-load",        "mutant-mean-sub",      "mutant-pad-denominator",       "mutant-residual-storage-dtype",
    "mutant-saved-rms",        "mutant-dw-wrong-axis", "mutant-no-correction",         "mutant-dw-storage-accum",
    "mutant-saved-as-rms"};

bool names_kernel(const std::string& out, const std::string& name) {
  // The name at the start of a line (the table's first column).
  return std::regex_search(out, std::regex("(^|\\n)" + name + "\\s"));
}

TEST_F(CliTest, ListNamesRealKernelsOnly) {
  const RunResult r = run_bench({"list"});
  EXPECT_EQ(r.status, 0) << r.output;
  for (const std::string& k : kRealKernels)
    EXPECT_TRUE(names_kernel(r.output, k)) << k << " missing:\n" << r.output;
  EXPECT_EQ(r.output.find("mutant"), std::string::npos) << "list shows a mutant without --all:\n" << r.output;
  // Which ops each kernel supports: naive has all four, warp-row the forward only.
  EXPECT_TRUE(std::regex_search(r.output, std::regex("(^|\\n)naive\\s+fwd,bwd,add,add-bwd\\s"))) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex("(^|\\n)warp-row\\s+fwd\\s"))) << r.output;
}

TEST_F(CliTest, ListAllNamesEveryMutant) {
  const RunResult r = run_bench({"list", "--all"});
  EXPECT_EQ(r.status, 0) << r.output;
  for (const std::string& k : kRealKernels)
    EXPECT_TRUE(names_kernel(r.output, k)) << k << " missing:\n" << r.output;
  for (const std::string& k : kMutants)
    EXPECT_TRUE(names_kernel(r.output, k)) << k << " missing:\n" << r.output;
}

// ---------------------------------------------------------------------------------------
// No usable device: exit 3 naming the CUDA error.

TEST_F(CliTest, NoDeviceExitsThreeNamingTheCudaError) {
  std::string why;
  if (cuda_device_available(&why))
    GTEST_SKIP() << "a CUDA device is usable here, so the no-device exit path cannot be exercised";
  ASSERT_FALSE(why.empty());
  const fs::path out = fs::path(::testing::TempDir()) / ("rb_cli_nodev_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const RunResult r = run_bench({"--H", "128", "--M", "1", "--dtype", "bf16", "--out", out.string()});
  fs::remove_all(out);
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_NE(r.output.find(why), std::string::npos) << "output does not name the CUDA error '" << why << "':\n"
                                                   << r.output;
  EXPECT_NE(r.output.find("CUDA"), std::string::npos) << r.output;
}

// --devices: each worker is a process of its own; a worker's exit 3 reaches the parent's exit
// code, and the parent still writes a (merged, empty) CSV and report.
TEST_F(CliTest, DevicesPassesWorkersNoDeviceExitThrough) {
  std::string why;
  if (cuda_device_available(&why))
    GTEST_SKIP() << "a CUDA device is usable here, so the no-device exit path cannot be exercised";
  const fs::path out = fs::path(::testing::TempDir()) / ("rb_cli_devices_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const RunResult r = run_bench({"--devices", "0,1", "--H", "128", "--M", "1", "--dtype", "bf16", "--out", out.string()});
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_NE(r.output.find("shard 0/2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("shard 1/2"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(out / "results.csv")) << r.output;
  EXPECT_TRUE(fs::exists(out / "report.md")) << r.output;
  fs::remove_all(out);
}

}  // namespace
}  // namespace rb

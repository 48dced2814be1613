// The rmsnorm-bench binary driven as a user would: bad input exits 2 naming the option (before
// any GPU work), --help / --version / list, and exit 3 naming the CUDA error when no device is
// usable. The binary is found next to the test's build folder (build/tests/../rmsnorm-bench),
// so the tests work wherever the build folder is moved. Suites are named Cli*.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <filesystem>
#include <ostream>
#include <regex>
#include <string>
#include <vector>

#include "harness/device.h"
#include "kernels/registry.h"
#include "tests/run_bench.h"
#include "tests/mutant_names.h"

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
  // No refusal quotes a limit of 1.8e308 or calls a number "not a number" unless it is not one.
  EXPECT_EQ(r.output.find("179769"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("1.79769"), std::string::npos) << r.output;
}

INSTANTIATE_TEST_SUITE_P(
    CliOptions, CliBadInput,
    ::testing::Values(BadInput{"H_zero", {"--H", "0"}, {"--H", "'0'"}},
                      BadInput{"H_not_a_number", {"--H", "abc"}, {"--H", "abc"}},
                      BadInput{"H_zero_in_list", {"--H", "4096,0"}, {"--H"}},
                      // An empty list item: CLI11 alone would drop it (1,,2 read as 1,2) or,
                      // where nothing is left, take the next argument as the value.
                      BadInput{"H_empty_item", {"--H", "1,,2"}, {"--H", "'1,,2'", "empty item"}},
                      BadInput{"H_comma_alone", {"--H", ",", "--no-time"}, {"--H", "','", "empty item"}},
                      BadInput{"H_equals_nothing", {"--H=", "--no-time"}, {"--H", "empty item"}},
                      BadInput{"kernel_trailing_comma", {"--kernel", "auto,"}, {"--kernel", "'auto,'"}},
                      BadInput{"eps_leading_comma", {"--eps=,1e-5"}, {"--eps", "',1e-5'"}},
                      // A value that names a subcommand is a value, not the subcommand.
                      BadInput{"dtype_empty_item_after_out_merge",
                               {"--out", "merge", "--dtype", "bf16,,fp32"},
                               {"--dtype", "'bf16,,fp32'", "empty item"}},
                      BadInput{"M_factor_one", {"--M", "1:4:x1"}, {"--M"}},
                      BadInput{"dtype_fp8", {"--dtype", "fp8"}, {"--dtype", "fp8", "fp32,fp16,bf16"}},
                      BadInput{"wdtype_int8", {"--wdtype", "int8"}, {"--wdtype", "int8"}},
                      BadInput{"rdtype_int8", {"--rdtype", "int8"}, {"--rdtype", "int8"}},
                      BadInput{"op_unknown", {"--op", "fwd,sideways"}, {"--op", "sideways"}},
                      BadInput{"kernel_lacks_op", {"--kernel", "warp-row", "--op", "bwd"}, {"--kernel/--op"}},
                      // A dtype option no case reads: the run would measure other cases than asked.
                      BadInput{"ydtype_without_fwd_or_add",
                               {"--op", "bwd,add-bwd", "--ydtype", "same,e4m3"},
                               {"--ydtype e4m3: an fp8 y is an output of fwd and add only", "not of bwd, add-bwd"}},
                      BadInput{"rdtype_without_residual", {"--op", "fwd,bwd", "--rdtype", "fp32"},
                               {"--rdtype fp32: a residual stream is add's and add-bwd's only", "not of fwd, bwd"}},
                      // Ops no kernel given implements have no cases: warp-row is fwd only, staged
                      // bwd and add-bwd only.
                      BadInput{"rdtype_of_an_op_no_kernel_has",
                               {"--kernel", "warp-row,staged", "--op", "fwd,bwd,add", "--rdtype", "fp32"},
                               {"--rdtype fp32", "not of fwd, bwd"}},
                      BadInput{"ydtype_of_an_op_no_kernel_has",
                               {"--kernel", "staged", "--op", "fwd,bwd", "--ydtype", "e4m3"},
                               {"--ydtype e4m3", "not of bwd"}},
                      BadInput{"y_scale_without_fp8_y", {"--op", "fwd", "--y-scale", "300"},
                               {"--y-scale: it scales an fp8 y, and no case of the run has one"}},
                      BadInput{"y_scale_fp8_y_of_no_op",
                               {"--op", "bwd", "--ydtype", "e5m2", "--y-scale", "300"},
                               {"--ydtype e5m2"}},
                      BadInput{"cudnn_engines_without_cudnn", {"--kernel", "auto,naive", "--cudnn-engines", "all"},
                               {"--cudnn-engines all", "no kernel of the run is cuDNN's"}},
                      BadInput{"bisect_ydtype_of_bwd",
                               {"bisect", "--kernel", "naive", "--op", "bwd", "--ydtype", "e4m3"},
                               {"--ydtype e4m3: an fp8 y is an output of fwd and add only, not of bwd"}},
                      BadInput{"bisect_rdtype_of_fwd",
                               {"bisect", "--kernel", "naive", "--op", "fwd", "--dtype", "bf16", "--rdtype",
                                "fp32"},
                               {"--rdtype fp32", "not of fwd"}},
                      BadInput{"bisect_y_scale_without_fp8_y",
                               {"bisect", "--kernel", "naive", "--y-scale", "2"},
                               {"--y-scale: it scales an fp8 y"}},
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
                      BadInput{"flush_unknown", {"--flush", "sideways"}, {"--flush", "read,write"}},
                      // Numbers range-checked before they are narrowed, each refusal naming the
                      // option, the accepted form and the limit.
                      BadInput{"devices_repeated", {"--devices", "0,0"}, {"--devices", "twice", "0 to 1023"}},
                      BadInput{"devices_repeated_apart", {"--devices", "1,0,1"}, {"--devices", "device 1"}},
                      BadInput{"devices_negative", {"--devices", "-1"}, {"--devices", "0 to 1023"}},
                      BadInput{"device_negative", {"--device", "-1"}, {"--device", "'-1'", "0 to 1023"}},
                      BadInput{"device_beyond_int", {"--device", "4294967296"}, {"--device", "0 to 1023"}},
                      BadInput{"max_noise_nan", {"--max-noise", "nan"}, {"--max-noise", "finite", "0 to 100"}},
                      BadInput{"max_noise_inf", {"--max-noise", "inf"}, {"--max-noise", "0 to 100"}},
                      BadInput{"max_time_nan", {"--max-time", "nan"}, {"--max-time", "finite", "0 to 3600"}},
                      BadInput{"max_time_negative", {"--max-time", "-1"}, {"--max-time", "0 to 3600"}},
                      BadInput{"shard_index_beyond_32_bits", {"--shard", "4294967297/3"}, {"--shard", "I/N", "100000"}},
                      BadInput{"shard_count_beyond_32_bits", {"--shard", "1/4294967297"}, {"--shard", "100000"}},
                      BadInput{"seed_negative", {"--seed", "-1"}, {"--seed", "18446744073709551615"}},
                      BadInput{"seed_beyond_64_bits", {"--seed", "18446744073709551616"}, {"--seed", "out of range"}},
                      BadInput{"min_samples_exponent", {"--min-samples", "1e3"}, {"--min-samples", "integer", "100000"}},
                      BadInput{"eps_underflow", {"--eps", "1e-400"}, {"--eps", "too small", "> 0"}},
                      BadInput{"eps_overflow", {"--eps", "1e400"}, {"--eps", "too large", "> 0"}},
                      // Doubles fp32 (the kernels' eps and scale) rounds to 0, a subnormal or inf.
                      BadInput{"eps_below_fp32", {"--eps", "1e-50"}, {"--eps", "'1e-50'", "fp32"}},
                      BadInput{"eps_subnormal_in_fp32", {"--eps", "1e-39"}, {"--eps", "fp32"}},
                      BadInput{"eps_beyond_fp32", {"--eps", "1e39"}, {"--eps", "fp32"}},
                      BadInput{"y_scale_beyond_fp32", {"--y-scale", "1e39"}, {"--y-scale", "fp32"}},
                      BadInput{"max_device_mem_suffix", {"--max-device-mem", "8X"}, {"--max-device-mem", "K, M, G or T"}},
                      BadInput{"max_device_mem_zero", {"--max-device-mem", "0"}, {"--max-device-mem", "from 1"}},
                      BadInput{"max_device_mem_overflow", {"--max-device-mem", "9000000T"}, {"--max-device-mem", "out of range"}},
                      BadInput{"copy_bytes_small", {"--copy-bytes", "4K"}, {"--copy-bytes", "from 1M to 16G"}},
                      BadInput{"copy_bytes_unaligned", {"--copy-bytes", "1048577"}, {"--copy-bytes", "multiple of 16"}},
                      BadInput{"copy_bytes_suffix", {"--copy-bytes", "8X"}, {"--copy-bytes", "K, M, G or T"}},
                      BadInput{"max_cases_zero", {"--max-cases", "0"}, {"--max-cases", "1 to 10000000"}},
                      BadInput{"max_slowdown_nan", {"compare", "/dev/null", "/dev/null", "--max-slowdown", "nan"},
                               {"--max-slowdown", "0 to 1000"}},
                      // Planning: counted before anything is built.
                      BadInput{"H_range_too_long", {"--H", "1:1000000:+1"}, {"--H", "1000000 values", "100000"}},
                      BadInput{"H_range_astronomic", {"--H", "1:9223372036854775807:+1"}, {"--H", "100000"}},
                      BadInput{"too_many_cases", {"--H", "1:100000:+1", "--M", "1:3:+1"}, {"--max-cases", "100000"}},
                      BadInput{"too_many_cases_sharded",
                               {"--H", "1:100000:+1", "--M", "1:3:+1", "--shard", "0/1000"}, {"--max-cases"}},
                      BadInput{"too_many_cases_devices", {"--H", "1:100000:+1", "--M", "1:3:+1", "--devices", "0,1"},
                               {"--max-cases"}},
                      BadInput{"too_many_cases_low_limit", {"--H", "128,256", "--max-cases", "10"}, {"--max-cases 10"}},
                      // Sizes whose byte counts would wrap in 64 bits (they once passed to the device).
                      BadInput{"H_beyond_byte_counts", {"--H", "9223372036854775807", "--M", "1"}, {"--M/--H", "2^56"}},
                      BadInput{"M_times_H_beyond_byte_counts",
                               {"--H", "4096,1099511627776", "--M", "1,65536"}, {"--M/--H", "M=65536", "H=1099511627776"}},
                      BadInput{"M_beyond_byte_counts_in_a_preset",
                               {"--preset", "validation", "--M", "9223372036854775807"}, {"--M/--H", "2^56"}},
                      // Output paths: created and test-written before any GPU work.
                      BadInput{"out_under_a_file", {"--out", "/dev/null/results"}, {"--out", "/dev/null"}},
                      BadInput{"csv_in_proc", {"--csv", "/proc/rb-nope/results.csv"}, {"--csv", "/proc/rb-nope"}},
                      BadInput{"md_is_a_directory", {"--md", "/tmp"}, {"--md", "directory"}},
                      BadInput{"csv_and_md_same", {"--csv", "/tmp/rb-same.out", "--md", "/tmp/rb-same.out"},
                               {"--csv/--md"}},
                      // An empty path (an unset shell variable) would read as the current directory
                      // or the default: refused in every command.
                      BadInput{"out_empty", {"--out", ""}, {"--out", "empty path"}},
                      BadInput{"csv_empty", {"--csv", ""}, {"--csv", "empty path"}},
                      BadInput{"md_empty", {"--md", ""}, {"--md", "empty path"}},
                      BadInput{"bisect_out_empty", {"bisect", "--kernel", "naive", "--out", ""}, {"--out", "empty path"}},
                      BadInput{"merge_output_empty", {"merge", "/dev/null", "-o", ""}, {"--output", "empty path"}},
                      // An option the command lacks is named before any value is checked: CLI11
                      // alone said "INPUTS: File does not exist: m.csv" for merge's first one.
                      BadInput{"merge_out_is_not_its_option", {"merge", "--out", "m.csv", "/dev/null"},
                               {"--out: not an option of rmsnorm-bench merge"}},
                      BadInput{"merge_unknown_short_option", {"merge", "-x", "m.csv", "/dev/null"},
                               {"-x: not an option of rmsnorm-bench merge"}},
                      BadInput{"compare_unknown_option", {"compare", "--max-slow", "2", "/dev/null", "/dev/null"},
                               {"--max-slow: not an option of rmsnorm-bench compare"}},
                      BadInput{"unknown_option_with_a_value", {"--H", "64", "--bogus=1"}, {"--bogus: not an option of rmsnorm-bench ("}},
                      // "merge" here is --out's value, not the subcommand: --bogus is the sweep's.
                      BadInput{"unknown_option_after_a_value", {"--out", "merge", "--bogus"},
                               {"--bogus: not an option of rmsnorm-bench ("}},
                      BadInput{"bisect_unknown_option", {"bisect", "--kernel", "naive", "--csv", "x.csv"},
                               {"--csv: not an option of rmsnorm-bench bisect"}},
                      BadInput{"compare_md_empty", {"compare", "/dev/null", "/dev/null", "--md", ""},
                               {"--md", "empty path"}}),
    [](const ::testing::TestParamInfo<BadInput>& info) { return info.param.name; });

// --csv and --md naming one file by different texts: through a symlinked directory, or
// relative against absolute. Refused before any device work (exit 2, not 3 here), since the
// report renamed over the CSV would lose every row. A symlink as the file itself is an entry of
// its own (the rename replaces the link), so it is allowed.
TEST_F(CliTest, CsvAndMdNamingOneFileAreRefused) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("rb-same-entry-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "real");
  fs::create_directory_symlink(dir / "real", dir / "link");
  const std::string relative = fs::relative(dir / "real" / "x.csv", fs::current_path()).string();
  for (const auto& [csv, md] : {std::pair{(dir / "real" / "x.csv").string(), (dir / "link" / "x.csv").string()},
                                std::pair{(dir / "real" / "x.csv").string(), relative}}) {
    const RunResult r = run_bench({"--csv", csv, "--md", md});
    EXPECT_EQ(r.status, 2) << csv << " / " << md << "\n" << r.output;
    EXPECT_NE(r.output.find("--csv/--md"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("same file"), std::string::npos) << r.output;
  }
  fs::create_symlink(dir / "real" / "x.csv", dir / "real" / "x.md");
  // One small case: where a GPU is present (the GPU check runs these tests too) it runs.
  const RunResult ok = run_bench({"--csv", (dir / "real" / "x.csv").string(), "--md", (dir / "real" / "x.md").string(),
                                  "--H", "1", "--M", "1", "--op", "fwd", "--dtype", "fp32", "--kernel", "naive",
                                  "--eps", "1e-5", "--no-time", "--quiet"});
  EXPECT_EQ(ok.output.find("same file"), std::string::npos) << ok.output;
  EXPECT_NE(ok.status, 2) << ok.output;
  fs::remove_all(dir);
}

// List items with spaces around them are read as the items: the sweep is planned (and here
// refused by --max-cases 7, naming the count: 2 kernels x 2 H x 2 eps = 8) rather than the
// parse refusing " auto".
TEST_F(CliTest, ListItemsMayHaveSpacesAroundThem) {
  const RunResult r = run_bench({"--kernel", "naive, auto", "--H", " 1024 , 4096", "--eps", "1e-5, 1e-6", "--op", "fwd",
                                 "--dtype", " bf16", "--M", "1", "--max-cases", "7"});
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_EQ(r.output.find("not in"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("8 case(s), more than --max-cases 7"), std::string::npos) << r.output;
}

// --preset wide plans one case per op a kernel implements for each of its three (dtype, H):
// bf16 and fp32 H=4096, bf16 H=4097, tensors past 2^31 elements; refused here by --max-cases
// 11 naming its count: naive's 4 ops, 3 times.
TEST_F(CliTest, WidePresetPlansOneCasePerOpDtypeAndH) {
  const RunResult r = run_bench({"--preset", "wide", "--kernel", "naive", "--max-cases", "11"});
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("12 case(s), more than --max-cases 11"), std::string::npos) << r.output;
}

// --plugin is taken by every command, before or after the subcommand's name.
TEST_F(CliTest, EveryCommandTakesPlugin) {
  const std::string base = std::string(RB_SOURCE_DIR) + "/reports/baselines/h200.csv";
  const std::string out = ::testing::TempDir() + "rb_cli_plugin_merge.csv";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"list", "--plugin", RB_PLUGIN_GOOD},
        std::vector<std::string>{"compare", "--plugin", RB_PLUGIN_GOOD, base, base},
        std::vector<std::string>{"merge", base, "-o", out, "--plugin", RB_PLUGIN_GOOD},
        std::vector<std::string>{"--plugin", RB_PLUGIN_GOOD, "compare", base, base}}) {
    const RunResult r = run_bench(args);
    EXPECT_EQ(r.status, 0) << args[0] << " " << args[1] << "\n" << r.output.substr(0, 2000);
  }
  std::remove(out.c_str());
}

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

// Every option of every subcommand shows its default (or, for a flag, says it is off).
TEST_F(CliTest, HelpShowsEveryDefault) {
  for (const std::vector<std::string>& cmd :
       {std::vector<std::string>{"--help"}, {"list", "--help"}, {"compare", "--help"}, {"merge", "--help"}}) {
    const RunResult r = run_bench(cmd);
    EXPECT_EQ(r.status, 0) << r.output;
    std::istringstream in(r.output);
    std::string line;
    int options = 0;
    while (std::getline(in, line)) {
      if (line.rfind("  -", 0) != 0) continue;
      if (line.find("--help") != std::string::npos || line.find("--version") != std::string::npos) continue;
      ++options;
      std::string text = line;
      // The description may sit on the next line.
      if (line.find("(default: off)") == std::string::npos && line.find('=') == std::string::npos) {
        std::string next;
        if (std::getline(in, next)) text += next;
      }
      EXPECT_TRUE(text.find('=') != std::string::npos || text.find("(default: off)") != std::string::npos ||
                  text.find("REQUIRED") != std::string::npos)
          << joined(cmd) << ": no default shown: " << text;
    }
    EXPECT_GT(options, 0) << r.output;
  }
  const RunResult r = run_bench({"--help"});
  for (const char* shown : {"--max-cases N=100000", "--seed UINT64=24301", "--max-noise PCT=0.5", "--max-time S=0.1",
                            "--min-samples INT=10", "--out TEXT=results", "--max-device-mem BYTES=what the device has free",
                            "--device INDEX=0", "--copy-bytes BYTES=1G", "--preset TEXT:{bench,validation,wide}=bench"})
    EXPECT_NE(r.output.find(shown), std::string::npos) << shown << "\n" << r.output;
}

TEST_F(CliTest, VersionPrintsCommit) {
  const RunResult r = run_bench({"--version"});
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("rmsnorm-bench"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("commit="), std::string::npos) << r.output;
}

const std::vector<std::string> kRealKernels = {"naive", "warp-row", "row-vector", "chunked", "auto"};
const std::vector<std::string>& kMutants = test::kMutantNames;

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

// A run that measured nothing never replaces earlier results: not the single-device run, not
// a --devices run whose workers cannot start, and no stale shard of an earlier run is merged.
class CliNoDevice : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    std::string why;
    if (cuda_device_available(&why))
      GTEST_SKIP() << "a CUDA device is usable here, so the no-device exit path cannot be exercised";
    out_ = fs::path(::testing::TempDir()) /
           ("rb_cli_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(out_);
    fs::create_directories(out_);
    put(out_ / "results.csv", kOld);
    put(out_ / "report.md", "earlier report\n");
  }
  void TearDown() override { fs::remove_all(out_); }

  static void put(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  static std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  void expect_untouched(const std::string& output) const {
    EXPECT_EQ(slurp(out_ / "results.csv"), kOld) << output;
    EXPECT_EQ(slurp(out_ / "report.md"), "earlier report\n") << output;
    EXPECT_NE(output.find("left as they were"), std::string::npos) << output;
    for (const auto& e : fs::recursive_directory_iterator(out_)) {
      const std::string n = e.path().filename().string();
      EXPECT_TRUE(n.find(".partial.") == std::string::npos && n.find(".tmp.") == std::string::npos &&
                  n.find("probe") == std::string::npos)
          << "left behind: " << e.path();
    }
  }

  const std::string kOld = "schema,gpu\nrmsnorm-bench/2,earlier run with 1428 rows\n";
  fs::path out_;
};

TEST_F(CliNoDevice, SingleRunKeepsEarlierResults) {
  const RunResult r = run_bench({"--H", "128", "--M", "1", "--dtype", "bf16", "--out", out_.string()});
  EXPECT_EQ(r.status, 3) << r.output;
  expect_untouched(r.output);
}

// The options some case reads go on to the device (exit 3 here): fp8 y with fwd among the ops,
// a residual dtype with add, a scale with an fp8 y, a scale in the validation preset (its fp8
// sweep reads it), every cuDNN engine with the cudnn kernel (where this build has it).
TEST_F(CliNoDevice, OptionsSomeCaseReadsAreAccepted) {
  std::vector<std::vector<std::string>> runs = {{"--op", "fwd,bwd", "--ydtype", "e4m3"},
                                                {"--op", "fwd,add", "--rdtype", "fp32"},
                                                {"--op", "add", "--ydtype", "same,e5m2", "--y-scale", "2"},
                                                {"--preset", "validation", "--y-scale", "3"}};
  if (const KernelInfo* k = find_kernel("cudnn"); k && k->unavailable.empty())
    runs.push_back({"--kernel", "auto,cudnn", "--cudnn-engines", "all"});
  for (const std::vector<std::string>& args : runs) {
    std::vector<std::string> all = args;
    all.insert(all.end(), {"--H", "128", "--M", "1", "--out", out_.string()});
    const RunResult r = run_bench(all);
    EXPECT_EQ(r.status, 3) << joined(args) << "\n" << r.output;
    expect_untouched(r.output);
  }
}

TEST_F(CliNoDevice, DevicesRunKeepsEarlierResults) {
  for (const char* devices : {"0", "0,1"}) {
    const RunResult r =
        run_bench({"--devices", devices, "--H", "128", "--M", "1", "--dtype", "bf16", "--out", out_.string()});
    EXPECT_EQ(r.status, 3) << r.output;
    EXPECT_NE(r.output.find("shard 0/"), std::string::npos) << r.output;
    expect_untouched(r.output);
  }
}

TEST_F(CliNoDevice, StaleShardOfAnEarlierRunIsNotMerged) {
  // What an earlier --devices run left in shards/0: a CSV with a row, its context file.
  put(out_ / "shards" / "0" / "results.csv", slurp(fs::path(RB_SOURCE_DIR) / "reports" / "baselines" / "h200-2026-11-29.csv"));
  put(out_ / "shards" / "0" / "worker-context.txt",
      "format=rmsnorm-bench-worker-context/1\nrun_id=an-earlier-run\nrows=1428\ngpu=NVIDIA H200\n");
  const RunResult r =
      run_bench({"--devices", "0", "--H", "128", "--M", "1", "--dtype", "bf16", "--out", out_.string()});
  EXPECT_EQ(r.status, 3) << r.output;
  expect_untouched(r.output);
}

// The planning limit holds for a sweep of many cases taken in shards: only the shard's part
// is built, so it reaches the device check at once.
TEST_F(CliNoDevice, LargeSweepShardIsBuiltAlone) {
  const auto t0 = std::chrono::steady_clock::now();
  const RunResult r = run_bench({"--H", "1:100000:+1", "--M", "1:3:+1", "--op", "fwd", "--kernel", "naive",
                                 "--dtype", "bf16", "--max-cases", "1000000", "--shard", "0/1000", "--out",
                                 out_.string()});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_LT(s, 20.0) << r.output;
  expect_untouched(r.output);
}

}  // namespace
}  // namespace rb

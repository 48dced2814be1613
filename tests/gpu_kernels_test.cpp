// GPU tests: every kernel passes the validation sweep; every mutant is caught by it. Each
// test skips itself, naming the CUDA error, when no device is usable.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "harness/case.h"
#include "harness/device.h"
#include "harness/runner.h"
#include "kernels/launchers.h"
#include "kernels/registry.h"

namespace rb {
namespace {

#define RB_REQUIRE_GPU()                                                  \
  do {                                                                    \
    std::string why_;                                                     \
    if (!cuda_device_available(&why_)) GTEST_SKIP() << "no CUDA device: " << why_; \
  } while (0)

std::vector<Record> run_sweep(const Sweep& s, bool time = false) {
  RunConfig cfg;
  cfg.time = time;
  Runner runner(open_device(0), cfg);
  std::vector<Record> out;
  runner.run(expand(s), [&](const Record& r) { out.push_back(r); });
  return out;
}

std::string describe(const Record& r) {
  std::ostringstream os;
  os << r.kernel << " " << r.dtype << "/" << r.wdtype << " M=" << r.M << " H=" << r.H << " " << r.layout << " "
     << r.dist << " eps=" << r.eps << ": " << status_name(r.status) << " " << r.reason;
  return os.str();
}

std::vector<std::string> names(bool mutants) {
  std::vector<std::string> v;
  for (const KernelInfo& k : kernel_registry())
    if (k.mutant == mutants) v.push_back(k.name);
  return v;
}

std::string param_name(const testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

class KernelPasses : public testing::TestWithParam<std::string> {};

// Every dtype x weight dtype x H in {1, 3, 127, 128, 1000, 1024, 4096, 4097, 8192, 16384,
// 65536} x layout x distribution: pass, or skip only where H is beyond what the kernel holds.
TEST_P(KernelPasses, ValidationSweep) {
  RB_REQUIRE_GPU();
  const std::vector<Record> recs = run_sweep(validation_sweep({GetParam()}));
  ASSERT_FALSE(recs.empty());
  const KernelInfo* k = find_kernel(GetParam());
  ASSERT_NE(k, nullptr);
  int passed = 0, bad = 0;
  for (const Record& r : recs) {
    if (r.status == Status::pass) {
      ++passed;
      EXPECT_GT(r.rows_checked, 0) << describe(r);
      continue;
    }
    const bool allowed_skip = r.status == Status::skip && r.H > k->max_H(*parse_dtype(r.dtype));
    if (!allowed_skip && ++bad <= 20) ADD_FAILURE() << describe(r);
  }
  EXPECT_EQ(bad, 0) << bad << " case(s) failed";
  EXPECT_GT(passed, 0);
  std::cout << GetParam() << ": " << passed << " of " << recs.size() << " cases passed\n";
}

INSTANTIATE_TEST_SUITE_P(AllKernels, KernelPasses, testing::ValuesIn(names(false)), param_name);

class MutantCaught : public testing::TestWithParam<std::string> {};

// A mutant is caught when at least one case of the validation sweep fails; no case may
// error (that would be a harness fault, not a catch).
TEST_P(MutantCaught, ByValidationSweep) {
  RB_REQUIRE_GPU();
  const std::vector<Record> recs = run_sweep(validation_sweep({GetParam()}));
  int failed = 0;
  std::string first;
  for (const Record& r : recs) {
    EXPECT_NE(r.status, Status::error) << describe(r);
    if (r.status == Status::fail && failed++ == 0) first = describe(r);
  }
  EXPECT_GT(failed, 0) << GetParam() << " slipped through all " << recs.size() << " cases";
  std::cout << "MUTANT " << GetParam() << ": caught by " << failed << " of " << recs.size()
            << " cases; first: " << first.substr(0, 300) << "\n";
}

INSTANTIATE_TEST_SUITE_P(AllMutants, MutantCaught, testing::ValuesIn(names(true)), param_name);

TEST(Auto, RecordsItsPick) {
  RB_REQUIRE_GPU();
  Sweep s;
  s.kernels = {"auto"};
  s.dtypes = {DType::bf16, DType::f32};
  s.Ms = {4};
  s.Hs = {128, 1024, 4096, 20000, 40000};
  s.eps = {1e-5};
  s.dists = {Dist::normal};
  s.layouts = {Layout::contiguous};
  for (const Record& r : run_sweep(s)) {
    EXPECT_EQ(r.status, Status::pass) << describe(r);
    FwdArgs a;
    a.H = r.H;
    a.xdtype = *parse_dtype(r.dtype);
    EXPECT_EQ(r.picked, kern::auto_pick_fwd(a)) << describe(r);
    EXPECT_NE(r.picked, "auto");
  }
}

TEST(Timing, ProducesBandwidthAgainstCopyCeiling) {
  RB_REQUIRE_GPU();
  Sweep s;
  s.kernels = {"row-vector"};
  s.dtypes = {DType::bf16};
  s.Ms = {1, 4096};
  s.Hs = {4096};
  s.eps = {1e-5};
  s.dists = {Dist::normal};
  s.layouts = {Layout::contiguous};
  const std::vector<Record> recs = run_sweep(s, true);
  ASSERT_EQ(recs.size(), 2u);
  for (const Record& r : recs) {
    EXPECT_EQ(r.status, Status::pass) << describe(r);
    ASSERT_TRUE(r.median_us && r.gbps && r.copy_gbps && r.pct_of_copy) << describe(r);
    EXPECT_GE(*r.samples, 10);
    EXPECT_GT(*r.copy_gbps, 100.0);
    EXPECT_LE(*r.min_us, *r.median_us);
    EXPECT_LE(*r.median_us, *r.max_us);
    EXPECT_NEAR(*r.gbps, r.bytes / (*r.median_us * 1e3), 1e-6 * *r.gbps);
  }
  EXPECT_TRUE(recs[0].graph_us.has_value()) << "M=1 must also be timed as graph replay";
  EXPECT_FALSE(recs[1].graph_us.has_value());
}

}  // namespace
}  // namespace rb

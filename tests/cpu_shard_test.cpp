// Shards: N processes (or Slurm array tasks) running --shard i/N cover a sweep exactly once.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include "app/lists.h"
#include "harness/case.h"

namespace rb {
namespace {

std::string key(const Case& c) {
  return std::string(op_name(c.op)) + "|" + c.kernel + "|" + std::string(dtype_name(c.dtype)) + "|" +
         std::string(dtype_name(c.wdtype)) + "|" + std::string(dtype_name(c.rdtype)) + "|" +
         std::to_string(c.M) + "|" + std::to_string(c.H) + "|" + std::string(layout_name(c.layout)) + "|" +
         std::string(ref::dist_name(c.dist)) + "|" + std::to_string(c.eps);
}

TEST(Shard, EveryCaseExactlyOnceForOneToSevenShards) {
  const std::vector<Case> all = expand(validation_sweep({"naive", "auto"}));
  ASSERT_GT(all.size(), 100u);
  for (int n = 1; n <= 7; ++n) {
    std::map<std::string, int> seen;
    std::size_t total = 0;
    for (int i = 0; i < n; ++i) {
      const std::vector<Case> part = take_shard(all, i, n);
      total += part.size();
      for (const Case& c : part) ++seen[key(c)];
    }
    EXPECT_EQ(total, all.size()) << "N=" << n;
    EXPECT_EQ(seen.size(), all.size()) << "N=" << n;
    for (const auto& [k, count] : seen) EXPECT_EQ(count, 1) << "N=" << n << " " << k;
  }
}

TEST(Shard, KeepsCasesSharingInputsTogetherAndInOrder) {
  const std::vector<Case> all = expand(default_bench_sweep());
  const std::vector<Case> part = take_shard(all, 1, 3);
  ASSERT_FALSE(part.empty());
  // Every data group in the shard is whole: as many cases as in the full list.
  for (const Case& c : part) {
    std::size_t in_all = 0, in_part = 0;
    for (const Case& a : all) in_all += a.same_data(c);
    for (const Case& p : part) in_part += p.same_data(c);
    EXPECT_EQ(in_all, in_part);
  }
  // Order preserved: the shard is a subsequence of the full list.
  std::size_t j = 0;
  for (const Case& a : all)
    if (j < part.size() && key(a) == key(part[j])) ++j;
  EXPECT_EQ(j, part.size());
}

// Sweeps with repeats in their lists and weight / residual choices that collapse (same and
// fp32 for fp32 x): expand's dedupe must not change the groups a shard takes.
std::vector<Sweep> shard_sweeps() {
  Sweep dup = validation_sweep({"naive", "auto", "warp-row", "naive"});
  dup.Hs = {128, 4097, 128, 1};
  dup.Ms = {19, 1, 19};
  dup.eps = {1e-5, 1e-6, 1e-5};
  dup.dists = {Dist::normal, Dist::large, Dist::normal};
  dup.wdtypes = {WDtypeChoice{}, WDtypeChoice{DType::f32}, WDtypeChoice{}};
  Sweep bwd_only = default_bench_sweep();
  bwd_only.ops = {Op::bwd, Op::fwd, Op::bwd};
  bwd_only.kernels = {"warp-row", "naive"};  // warp-row has no bwd: bwd groups hold naive alone
  return {validation_sweep({"naive", "auto"}), default_bench_sweep(), dup, bwd_only};
}

// The shard-aware expansion builds only its part, and that part is exactly take_shard's.
TEST(Shard, ExpandOfAShardEqualsTakeShardOfTheWholeList) {
  for (const Sweep& s : shard_sweeps()) {
    const std::vector<Case> all = expand(s);
    for (int n = 1; n <= 7; ++n)
      for (int i = 0; i < n; ++i) {
        const std::vector<Case> want = take_shard(all, i, n);
        const std::vector<Case> got = expand(s, i, n);
        ASSERT_EQ(got.size(), want.size()) << "shard " << i << "/" << n;
        for (std::size_t j = 0; j < got.size(); ++j) EXPECT_EQ(key(got[j]), key(want[j])) << i << "/" << n << " #" << j;
      }
  }
}

TEST(Shard, CountCasesEqualsExpandSizeWithoutBuilding) {
  for (const Sweep& s : shard_sweeps()) EXPECT_EQ(count_cases(s), expand(s).size());
  // A sweep far too large to build is counted at once.
  Sweep huge = default_bench_sweep();
  huge.Hs.clear();
  for (std::int64_t h = 1; h <= 100000; ++h) huge.Hs.push_back(h);
  huge.Ms = {1, 2, 3};
  const std::uint64_t per_hm = count_cases(default_bench_sweep()) / 14;  // 7 H x 2 M
  EXPECT_EQ(count_cases(huge), per_hm * 100000 * 3);
}

// ops_with_cases names the ops expand pairs with a kernel: warp-row alone has no backward, and
// an unknown kernel pairs with every op (its cases are error rows).
TEST(Shard, OpsWithCasesAreTheOpsExpandPairs) {
  Sweep warp_only = default_bench_sweep();
  warp_only.ops = {Op::bwd, Op::fwd, Op::add_bwd};
  warp_only.kernels = {"warp-row"};
  Sweep unknown = warp_only;
  unknown.kernels = {"warp-row", "no-such-kernel"};
  EXPECT_EQ(ops_with_cases(warp_only), std::vector<Op>{Op::fwd});
  EXPECT_EQ(ops_with_cases(unknown), (std::vector<Op>{Op::bwd, Op::fwd, Op::add_bwd}));
  std::vector<Sweep> sweeps = shard_sweeps();
  sweeps.push_back(warp_only);
  sweeps.push_back(unknown);
  for (const Sweep& s : sweeps) {
    std::set<Op> expanded;
    for (const Case& c : expand(s)) expanded.insert(c.op);
    const std::vector<Op> ops = ops_with_cases(s);
    EXPECT_EQ(std::set<Op>(ops.begin(), ops.end()), expanded);
    EXPECT_EQ(std::set<Op>(ops.begin(), ops.end()).size(), ops.size());  // once each
  }
}

TEST(Shard, RangesAreCountedBeforeTheyAreExpanded) {
  EXPECT_EQ(count_int_item("4096", 1), 1);
  EXPECT_EQ(count_int_item("1:100000:+1", 1), 100000);
  EXPECT_EQ(count_int_item("128:1024:+128", 1), 8);
  EXPECT_EQ(count_int_item("1024:16384:x2", 1), 5);
  EXPECT_EQ(count_int_item("1:9223372036854775807:x2", 1), 63);
  EXPECT_EQ(parse_int_item("1:100000:+1", 1).size(), 100000u);
  // Refused by counting, at once: expanding would take 2^63 steps.
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(count_int_item("1:9223372036854775807:+1", 1), std::invalid_argument);
  EXPECT_THROW(parse_int_item("1:9223372036854775807:+1", 1), std::invalid_argument);
  EXPECT_THROW(parse_int_item("1:100001:+1", 1), std::invalid_argument);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0);
  try {
    count_int_item("1:200000:+1", 1);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("200000 values"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::to_string(kMaxRangeItems)), std::string::npos) << e.what();
  }
}

TEST(Shard, ParseAcceptsValidAndRejectsInvalid) {
  const ShardSpec s = parse_shard("2/5");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 5);
  EXPECT_EQ(parse_shard("0/1").count, 1);
  for (const char* bad : {"5/5", "1", "a/2", "-1/2", "1/0", "1/", "/3", "1/2/3", "4294967297/3", "1/4294967297",
                          "4294967296/4294967297", "99999999999999999999/2"})
    EXPECT_THROW(parse_shard(bad), std::invalid_argument) << bad;
}

}  // namespace
}  // namespace rb

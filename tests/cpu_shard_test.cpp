// Shards: N processes (or Slurm array tasks) running --shard i/N cover a sweep exactly once.
#include <gtest/gtest.h>

#include <map>
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

TEST(Shard, ParseAcceptsValidAndRejectsInvalid) {
  const ShardSpec s = parse_shard("2/5");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 5);
  EXPECT_EQ(parse_shard("0/1").count, 1);
  for (const char* bad : {"5/5", "1", "a/2", "-1/2", "1/0", "1/", "/3", "1/2/3"})
    EXPECT_THROW(parse_shard(bad), std::invalid_argument) << bad;
}

}  // namespace
}  // namespace rb

// Conventions and the fp8 y through the harness: sweep expansion and counting, the data key,
// byte counts with one-byte elements, the tolerances, the weight offset, and the options.
// Suites are named Convention*.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "harness/case.h"
#include "harness/ops.h"
#include "harness/validate.h"
#include "reference/host_dtype.h"
#include "tests/run_bench.h"

namespace rb {
namespace {

Sweep small() {
  Sweep s;
  s.ops = {Op::fwd, Op::bwd, Op::add};
  s.kernels = {"naive"};
  s.dtypes = {DType::bf16};
  s.Ms = {4};
  s.Hs = {8, 9};
  s.eps = {1e-5};
  s.dists = {Dist::normal};
  s.layouts = {Layout::contiguous};
  s.conventions = {Convention::fp32, Convention::gemma};
  s.ydtypes = {YDtypeChoice{}, DType::e4m3};
  s.y_scales = {1.0, 300.0};
  return s;
}

TEST(ConventionSweep, ExpandsConventionsAndFp8OnlyWhereTheyApply) {
  const std::vector<Case> cases = expand(small());
  EXPECT_EQ(cases.size(), count_cases(small()));
  std::set<decltype(Case{}.key())> keys;
  int fwd = 0, bwd = 0, fp8 = 0;
  for (const Case& c : cases) {
    EXPECT_TRUE(keys.insert(c.key()).second) << "duplicate case";
    if (c.y8) {
      ++fp8;
      EXPECT_TRUE(c.op == Op::fwd || c.op == Op::add);
    } else {
      EXPECT_EQ(c.y_scale, 1.0);  // a scale only with an fp8 y
    }
    fwd += c.op == Op::fwd;
    bwd += c.op == Op::bwd;
  }
  // fwd: 2 conventions x (y same, e4m3 at 2 scales) x 2 H; bwd: 2 conventions x 2 H.
  EXPECT_EQ(fwd, 2 * 3 * 2);
  EXPECT_EQ(bwd, 2 * 2);
  EXPECT_EQ(fp8, 2 * 2 * 2 * 2);  // fwd and add
}

TEST(ConventionSweep, ShardsOfSeveralSweepsPartitionTheirUnion) {
  const std::vector<Sweep> sweeps = validation_sweeps({"naive"});
  ASSERT_EQ(sweeps.size(), 5u);
  const std::vector<Case> all = expand(sweeps);
  EXPECT_EQ(all.size(), count_cases(sweeps));  // the five sweeps share no case
  std::size_t total = 0;
  for (int k = 0; k < 5; ++k) total += expand(sweeps, k, 5).size();
  EXPECT_EQ(total, all.size());
  bool llama = false, e5m2 = false;
  for (const Case& c : all) {
    llama = llama || c.conv == Convention::llama;
    e5m2 = e5m2 || (c.y8 && *c.y8 == DType::e5m2);
  }
  EXPECT_TRUE(llama);
  EXPECT_TRUE(e5m2);
}

TEST(ConventionData, ConventionAndYAreDataFields) {
  Case a;
  a.op = Op::fwd;
  a.M = 2;
  a.H = 4;
  Case b = a;
  EXPECT_TRUE(a.same_data(b));
  b.conv = Convention::gemma;
  EXPECT_FALSE(a.same_data(b));
  b = a;
  b.y8 = DType::e5m2;
  EXPECT_FALSE(a.same_data(b));
}

TEST(ConventionBytes, Fp8YCountsOneBytePlusScaleAndAmax) {
  // fwd bf16, M=2, H=4: x 16 + w 8 + y 16 + rrms 8 = 48; with an e4m3 y: y 8, scale 4, amax 4.
  EXPECT_EQ(op_bytes(Op::fwd, 2, 4, DType::bf16, DType::bf16, DType::bf16), 48);
  EXPECT_EQ(op_bytes(Op::fwd, 2, 4, DType::bf16, DType::bf16, DType::bf16, DType::e4m3), 48 - 8 + 4 + 4);
  // add: y and s (bf16 each) -> y in e5m2.
  EXPECT_EQ(op_bytes(Op::add, 2, 4, DType::bf16, DType::bf16, DType::bf16, DType::e5m2) -
                op_bytes(Op::add, 2, 4, DType::bf16, DType::bf16, DType::bf16),
            -8 + 8);
}

TEST(ConventionTolerance, Fp8IsOneUlpAndLlamaOneMoreUlpOfX) {
  Case c;
  c.op = Op::fwd;
  c.dtype = c.wdtype = DType::bf16;
  c.y8 = DType::e4m3;
  c.y_scale = 300;
  const OutputDesc& y = op_desc(Op::fwd).outputs[0];
  EXPECT_EQ(y.tolerance(c, 300.0, 0).atol, 32.0);  // e4m3 spacing in [256, 448)
  EXPECT_EQ(y.tolerance(c, 300.0, 0).rtol, 0.0);
  EXPECT_EQ(y.tolerance(c, 1.0, 0).atol, 0.125);
  c.y8.reset();
  c.conv = Convention::llama;
  EXPECT_DOUBLE_EQ(y.tolerance(c, 1.0, 0).rtol, 1e-2 + 0x1p-7);
  c.conv = Convention::gemma;
  EXPECT_DOUBLE_EQ(y.tolerance(c, 1.0, 0).rtol, 1e-2);
}

TEST(ConventionData, OffsetConventionsDrawAZeroCentredWeight) {
  Case c;
  c.op = Op::fwd;
  c.dtype = c.wdtype = DType::f32;
  c.M = 1;
  c.H = 4096;
  c.seed = 3;
  const auto mean_of = [&](Convention conv) {
    c.conv = conv;
    const std::vector<unsigned char> w = generate_input(c, op_desc(Op::fwd).inputs[1]);
    const float* p = reinterpret_cast<const float*>(w.data());
    double s = 0;
    for (std::int64_t i = 0; i < c.H; ++i) s += p[i];
    return s / static_cast<double>(c.H);
  };
  EXPECT_NEAR(mean_of(Convention::fp32), 1.0, 0.05);
  EXPECT_NEAR(mean_of(Convention::llama), 1.0, 0.05);
  EXPECT_NEAR(mean_of(Convention::gemma), 0.0, 0.05);
  EXPECT_NEAR(mean_of(Convention::zero_centered), 0.0, 0.05);
}

TEST(ConventionCli, BadValuesExitTwo) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--dtype", "e4m3"}, std::vector<std::string>{"--convention", "gemma2"},
        std::vector<std::string>{"--ydtype", "bf16"}, std::vector<std::string>{"--y-scale", "0"},
        std::vector<std::string>{"--wdtype", "e5m2"}}) {
    const auto r = testing_support::run_bench(args);
    EXPECT_EQ(r.status, 2) << args[0] << " " << args[1] << ": " << r.output;
    EXPECT_NE(r.output.find(args[0]), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace rb

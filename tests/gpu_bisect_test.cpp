// bisect on the GPU: each forward mutant bisected against `auto` is attributed to the stage
// its bug lives in; a llama kernel against a gemma reference parts at the weight product; a
// reproducer replays bit-exactly; `auto` against `cudnn` at bf16 H=4096 and 4097 (what it
// finds is printed for the README). Each test skips itself when no device is usable.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>

#include "app/cmd_bisect.h"
#include "harness/bisect_run.h"
#include "harness/device.h"
#include "kernels/registry.h"
#include "tests/run_bench.h"
#include "tests/bisect_cases.h"
#include "tests/gpu_support.h"

namespace fs = std::filesystem;

namespace rb {
namespace {


using testing_support::bf16_fwd_case;

struct MutantStage {
  const char* mutant;
  Dist dist;
  std::int64_t H;
  Stage stage;
};

class BisectMutants : public ::testing::TestWithParam<MutantStage> {};

TEST_P(BisectMutants, NamesTheStage) {
  RB_REQUIRE_GPU();
  const MutantStage& m = GetParam();
  const BisectRun run = run_bisect(open_device(0), bf16_fwd_case(64, m.H, m.dist), {m.mutant, Convention::fp32},
                                   {"auto", Convention::fp32}, true);
  EXPECT_TRUE(run.full.diverge) << m.mutant;
  EXPECT_EQ(run.full.stage, m.stage) << m.mutant << ": " << stage_name(run.full.stage) << ": "
                                     << run.full.stage_detail;
  // The minimal reproducer parts at the same stage, and is no larger.
  EXPECT_EQ(run.minimal.stage, m.stage) << run.shrink_note;
  EXPECT_LE(run.minimal.a.H, m.H);
  EXPECT_LE(run.minimal.a.M, 64);
  std::cout << m.mutant << ": " << stage_name(run.full.stage) << " (" << run.full.stage_detail << "); minimal: "
            << run.shrink_note << "\n";
}

// eps outside the sqrt matters where the mean square is near eps (tiny rows).
INSTANTIATE_TEST_SUITE_P(Fwd, BisectMutants,
                         ::testing::Values(MutantStage{"mutant-eps-outside", Dist::tiny, 4096, Stage::rrms},
                                           MutantStage{"mutant-half-accum", Dist::normal, 4096, Stage::rrms},
                                           MutantStage{"mutant-weight-row-offset", Dist::normal, 4096, Stage::weight},
                                           MutantStage{"mutant-tail-store", Dist::normal, 4097, Stage::tail},
                                           MutantStage{"mutant-tail-load", Dist::normal, 4097, Stage::tail}),
                         [](const auto& info) {
                           std::string s = info.param.mutant;
                           for (char& ch : s)
                             if (ch == '-') ch = '_';
                           return s;
                         });

TEST(BisectGpu, LlamaKernelAgainstGemmaReferenceIsTheWeightStage) {
  RB_REQUIRE_GPU();
  const BisectRun run = run_bisect(open_device(0), bf16_fwd_case(64, 4096), {"auto", Convention::llama},
                                   {BisectSide::kReferenceSide, Convention::gemma}, false);
  EXPECT_TRUE(run.full.diverge);
  EXPECT_EQ(run.full.stage, Stage::weight) << run.full.stage_detail;
  ASSERT_FALSE(run.full.fit_a.empty());
  EXPECT_EQ(run.full.fit_a.front().conv, Convention::llama);
}

TEST(BisectGpu, ReproducerReplaysBitExactly) {
  RB_REQUIRE_GPU();
  const fs::path dir = fs::temp_directory_path() / ("rb-bisect-gpu-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const auto r = testing_support::run_bench({"bisect", "--kernel", "mutant-weight-row-offset", "--against", "auto",
                                             "--H", "1000", "--M", "16", "--out", dir.string()});
  ASSERT_EQ(r.status, 1) << r.output;  // they diverge
  const auto p = testing_support::run_bench({"bisect", "--replay", dir.string()});
  EXPECT_EQ(p.status, 1) << p.output;
  EXPECT_NE(p.output.find("A y: bit-exact"), std::string::npos) << p.output;
  EXPECT_NE(p.output.find("B y: bit-exact"), std::string::npos) << p.output;
  EXPECT_NE(p.output.find("fp64 reference y: bit-exact"), std::string::npos) << p.output;
  EXPECT_EQ(p.output.find("NOT REPRODUCED"), std::string::npos) << p.output;
  fs::remove_all(dir);
}

class BisectCudnn : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(BisectCudnn, AutoAgainstCudnnBf16) {
  RB_REQUIRE_GPU();
  const KernelInfo* k = find_kernel("cudnn");
  if (!k || !k->unavailable.empty()) GTEST_SKIP() << "cudnn unavailable: " << (k ? k->unavailable : "");
  const BisectRun run = run_bisect(open_device(0), bf16_fwd_case(256, GetParam()), {"auto", Convention::fp32},
                                   {"cudnn", Convention::fp32}, true);
  // Both are correct kernels: within the tolerance of each other, and auto follows fp32.
  EXPECT_FALSE(run.full.diverge) << stage_name(run.full.stage) << ": " << run.full.stage_detail;
  ASSERT_FALSE(run.full.fit_a.empty());
  EXPECT_EQ(run.full.fit_a.front().conv, Convention::fp32);
  const OutputBisect& y = run.full.outputs.front();
  std::cout << "auto vs cudnn bf16 M=256 H=" << GetParam() << ": y A-vs-B exact " << y.a_vs_b.exact() << "/"
            << y.a_vs_b.total << " max " << y.a_vs_b.max << " ulp; A-vs-fp64 exact " << y.a_vs_ref.exact()
            << " max " << y.a_vs_ref.max << "; B-vs-fp64 exact " << y.b_vs_ref.exact() << " max " << y.b_vs_ref.max
            << "; cudnn fits " << (run.full.fit_b.empty() ? "?" : convention_name(run.full.fit_b.front().conv))
            << " " << (run.full.fit_b.empty() ? 0.0 : 100 * run.full.fit_b.front().exact_fraction) << "%\n";
}

INSTANTIATE_TEST_SUITE_P(H, BisectCudnn, ::testing::Values(4096, 4097));

}  // namespace
}  // namespace rb

// CPU tests of the cublas kernel's registration (kernels/vendor/cublas.cu): what it declares,
// the reasons it refuses a case, its workspace formula and the refusals prepare() makes
// before it touches a device. No CUDA device needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <regex>

#include "kernels/registry.h"
#include "kernels/vendor/cublas_plan.cuh"
#include "kernels/vendor/vendor.h"

namespace rb {
namespace {

namespace cb = vendor::cublas;

KernelInfo cublas_kernel() {
  const std::vector<KernelInfo> ks = vendor::cublas_kernels();
  if (ks.size() != 1) throw std::runtime_error("cublas_kernels() returned " + std::to_string(ks.size()) + " kernels");
  return ks.front();
}

Problem problem(Op op, std::int64_t M, std::int64_t H, DType x = DType::bf16, DType w = DType::bf16) {
  return Problem::of(op, M, H, x, w, x);
}

std::size_t align256(std::size_t n) { return (n + 255) / 256 * 256; }

TEST(CublasKernel, DeclaresProviderVersionOpsAndDtypes) {
  const KernelInfo k = cublas_kernel();
  EXPECT_EQ(k.name, "cublas");
  EXPECT_EQ(k.provider, "cublas");
  EXPECT_TRUE(std::regex_match(k.version, std::regex(R"(\d+\.\d+\.\d+)"))) << k.version;
  EXPECT_FALSE(k.mutant);
  EXPECT_TRUE(k.unavailable.empty()) << k.unavailable;
  EXPECT_FALSE(k.description.empty());
  EXPECT_FALSE(k.alignment.empty());
  ASSERT_TRUE(k.prepare);
  ASSERT_TRUE(k.supports);
  ASSERT_TRUE(k.max_H);

  const std::vector<Op> want_ops = {Op::fwd, Op::bwd, Op::add_bwd};
  EXPECT_EQ(k.ops, want_ops);
  EXPECT_EQ(std::count(k.ops.begin(), k.ops.end(), Op::add), 0) << "add is not implemented";

  const std::vector<std::pair<DType, DType>> want = {{DType::f32, DType::f32},
                                                     {DType::f16, DType::f16},
                                                     {DType::f16, DType::f32},
                                                     {DType::bf16, DType::bf16},
                                                     {DType::bf16, DType::f32}};
  ASSERT_EQ(k.dtypes.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(k.dtypes[i].x, want[i].first) << i;
    EXPECT_EQ(k.dtypes[i].w, want[i].second) << i;
  }
  EXPECT_EQ(k.min_H, 1);
  EXPECT_EQ(k.max_H(problem(Op::fwd, 1, 1)), INT_MAX);
  EXPECT_EQ(k.max_H(problem(Op::bwd, 1, 1)), INT_MAX - 31);
  EXPECT_EQ(k.max_H(problem(Op::add_bwd, 1, 1)), INT_MAX - 31);
}

TEST(CublasKernel, SupportsOrdinaryCases) {
  const KernelInfo k = cublas_kernel();
  for (std::int64_t H : {1, 3, 127, 4096, 4097, 65536}) {
    EXPECT_EQ(k.supports(problem(Op::fwd, 16384, H)), std::nullopt) << H;
    EXPECT_EQ(k.supports(problem(Op::bwd, 4096, H)), std::nullopt) << H;
    EXPECT_EQ(k.supports(problem(Op::add_bwd, 1, H, DType::f32, DType::f32)), std::nullopt) << H;
  }
  EXPECT_EQ(k.supports(problem(Op::fwd, INT_MAX, 1)), std::nullopt);
  EXPECT_EQ(k.supports(problem(Op::fwd, 1, INT_MAX)), std::nullopt);
}

TEST(CublasKernel, RefusesDimensionsCublasCannotTake) {
  const KernelInfo k = cublas_kernel();
  const auto big_H = k.supports(problem(Op::fwd, 1, std::int64_t{INT_MAX} + 1));
  ASSERT_TRUE(big_H);
  EXPECT_NE(big_H->find("int dimensions"), std::string::npos) << *big_H;
  EXPECT_NE(big_H->find("H=2147483648"), std::string::npos) << *big_H;

  const auto big_M = k.supports(problem(Op::fwd, std::int64_t{INT_MAX} + 1, 8));
  ASSERT_TRUE(big_M);
  EXPECT_NE(big_M->find("M=2147483648"), std::string::npos) << *big_M;

  // The backward pads P's rows to 32 floats, so its H stops 31 earlier.
  const auto bwd_H = k.supports(problem(Op::bwd, 1, INT_MAX - 30));
  ASSERT_TRUE(bwd_H);
  EXPECT_NE(bwd_H->find("int dimensions"), std::string::npos) << *bwd_H;
}

TEST(CublasKernel, RefusesBackwardAboveTheWorkspaceCap) {
  const KernelInfo k = cublas_kernel();
  // 16384 x 32768 fp32 = 2 GiB for P alone, plus cuBLAS's scratch: above the cap.
  const auto why = k.supports(problem(Op::bwd, 16384, 32768));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("cap"), std::string::npos) << *why;
  EXPECT_NE(why->find("M=16384 H=32768"), std::string::npos) << *why;
  EXPECT_TRUE(k.supports(problem(Op::add_bwd, 16384, 32768)));
  EXPECT_TRUE(k.supports(problem(Op::bwd, INT_MAX, INT_MAX - 31)));
  // A size that overflows size_t saturates instead of wrapping around to a small one.
  const std::int64_t huge = std::int64_t{1} << 40;
  EXPECT_EQ(cb::workspace_bytes(problem(Op::bwd, huge, huge)), SIZE_MAX);
  EXPECT_TRUE(k.supports(problem(Op::bwd, huge, 8)));
  // The forward's workspace is M floats: never near the cap.
  EXPECT_EQ(k.supports(problem(Op::fwd, 16384, 32768)), std::nullopt);
}

TEST(CublasKernel, WorkspaceFormula) {
  constexpr std::size_t lib = std::size_t{32} << 20;
  EXPECT_EQ(cb::kLibraryWorkspaceBytes, lib);
  // fwd: cuBLAS's scratch + M floats.
  EXPECT_EQ(cb::workspace_bytes(problem(Op::fwd, 37, 4097)), lib + 256);
  EXPECT_EQ(cb::workspace_bytes(problem(Op::fwd, 64, 4097)), lib + 256);
  EXPECT_EQ(cb::workspace_bytes(problem(Op::fwd, 65, 1)), lib + 512);
  EXPECT_EQ(cb::workspace_bytes(problem(Op::fwd, 0, 8)), lib);
  // bwd: + P (M x ldP, ldP = H rounded up to 32) + w32 (H) + c (M) + dw32 (H), each to 256 B.
  const std::int64_t M = 37, H = 4097, ldP = 4128;
  const std::size_t want = lib + align256(M * ldP * 4) + align256(H * 4) + align256(M * 4) + align256(H * 4);
  EXPECT_EQ(want, lib + 611072 + 16640 + 256 + 16640);
  EXPECT_EQ(cb::workspace_bytes(problem(Op::bwd, M, H)), want);
  EXPECT_EQ(cb::workspace_bytes(problem(Op::add_bwd, M, H, DType::f32, DType::f32)), want);
  EXPECT_EQ(cb::workspace_bytes(problem(Op::bwd, 1, 1)), lib + 256 + 256 + 256 + 256);
}

TEST(CublasKernel, PrepareRefusesBeforeTouchingADevice) {
  const KernelInfo k = cublas_kernel();
  EXPECT_THROW(k.prepare(problem(Op::fwd, 4, 8), "eng0"), Unsupported);
  EXPECT_THROW(k.prepare(problem(Op::add, 4, 8), ""), Unsupported);
  EXPECT_THROW(k.prepare(problem(Op::fwd, 1, std::int64_t{INT_MAX} + 1), ""), Unsupported);
  EXPECT_THROW(k.prepare(problem(Op::bwd, 16384, 32768), ""), Unsupported);
  try {
    k.prepare(problem(Op::bwd, 16384, 32768), "");
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("cap"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rb

// CPU tests of the `cudnn` kernel (kernels/vendor/cudnn.cpp): how it registers (provider cudnn,
// fwd and bwd only, the dtype combos cuDNN takes) and how it says no without a GPU, a library
// or the headers: a reason naming the fix, never a crash; and the pin of the cuDNN frontend
// wheel, which the compiled headers must match.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>

#include "kernels/registry.h"
#include "kernels/vendor/vendor.h"

namespace rb {
namespace {

const KernelInfo& cudnn_kernel() {
  const KernelInfo* k = find_kernel("cudnn");
  if (!k) throw std::runtime_error("cudnn is not registered");
  return *k;
}

Problem fwd_bf16() { return Problem::of(Op::fwd, 64, 4096, DType::bf16, DType::bf16, DType::f32); }

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The pinned frontend version in scripts/fetch-cudnn-frontend.sh ("" if there is none).
std::string pinned_frontend_version() {
  const std::string script = read_file(std::string(RB_SOURCE_DIR) + "/scripts/fetch-cudnn-frontend.sh");
  std::smatch m;
  const std::regex pin(R"((^|\n)FRONTEND_VERSION=([0-9]+\.[0-9]+\.[0-9]+)\n)");
  return std::regex_search(script, m, pin) ? m[2].str() : "";
}

// Restores the vendor options a test changed.
struct OptionsGuard {
  vendor::VendorOptions saved = vendor::options();
  ~OptionsGuard() { vendor::set_options(saved); }
};

TEST(CudnnKernel, RegisteredWithProviderOpsAndDtypes) {
  const KernelInfo& k = cudnn_kernel();
  EXPECT_EQ(k.provider, "cudnn");
  EXPECT_FALSE(k.mutant);
  EXPECT_FALSE(k.description.empty());
  EXPECT_TRUE(k.has_op(Op::fwd));
  EXPECT_TRUE(k.has_op(Op::bwd));
  EXPECT_FALSE(k.has_op(Op::add)) << "cuDNN has no fused add + norm with the sum written back";
  EXPECT_FALSE(k.has_op(Op::add_bwd));
  EXPECT_EQ(k.dtypes.size(), 5u);
  auto listed = [&](DType x, DType w) {
    return std::any_of(k.dtypes.begin(), k.dtypes.end(),
                       [&](const DtypeCombo& c) { return c.x == x && c.w == w; });
  };
  EXPECT_TRUE(listed(DType::f32, DType::f32));
  EXPECT_TRUE(listed(DType::f16, DType::f16));
  EXPECT_TRUE(listed(DType::f16, DType::f32));
  EXPECT_TRUE(listed(DType::bf16, DType::bf16));
  EXPECT_TRUE(listed(DType::bf16, DType::f32));
  EXPECT_FALSE(listed(DType::f32, DType::bf16)) << "scale is in x's dtype or fp32";
  ASSERT_TRUE(static_cast<bool>(k.prepare));
  if (k.unavailable.empty()) {
    EXPECT_FALSE(k.version.empty()) << "cuDNN's version once loaded, else the frontend's";
  } else {
    EXPECT_NE(k.unavailable.find("cuDNN"), std::string::npos) << k.unavailable;
  }
}

TEST(CudnnKernel, FrontendWheelIsPinnedAndMatchesTheBuild) {
  const std::string pin = pinned_frontend_version();
  ASSERT_FALSE(pin.empty()) << "scripts/fetch-cudnn-frontend.sh must pin FRONTEND_VERSION=X.Y.Z";
  const std::string script = read_file(std::string(RB_SOURCE_DIR) + "/scripts/fetch-cudnn-frontend.sh");
  EXPECT_NE(script.find("\"nvidia-cudnn-frontend==$FRONTEND_VERSION\""), std::string::npos);
  EXPECT_NE(script.find("--no-deps"), std::string::npos);
  EXPECT_NE(read_file(std::string(RB_SOURCE_DIR) + "/cmake/cudnn.cmake").find("fetch-cudnn-frontend.sh"),
            std::string::npos);
  const KernelInfo& k = cudnn_kernel();
  if (k.unavailable.empty()) {
    EXPECT_NE(k.description.find("frontend " + pin + " "), std::string::npos)
        << "built against other frontend headers than the pinned " << pin << ": " << k.description;
  }
}

TEST(CudnnKernel, MisalignedBaseIsRefusedWithAReason) {
  const KernelInfo& k = cudnn_kernel();
  Problem p = fwd_bf16();
  p.base_align = 2;
  const auto why = check_common(k, p);
  ASSERT_TRUE(why.has_value()) << "cuDNN faults on bases below 16 bytes at execute; supports() must say no";
  if (k.unavailable.empty()) {
    EXPECT_NE(why->find("16-byte"), std::string::npos) << *why;
  }
}

TEST(CudnnKernel, MissingLibraryNamesTheOptionToFixIt) {
  const KernelInfo& k = cudnn_kernel();
  if (!k.unavailable.empty()) {
    // A build without the headers: every case says so, and how to fix it.
    const auto why = check_common(k, fwd_bf16());
    ASSERT_TRUE(why.has_value());
    EXPECT_EQ(*why, k.unavailable);
    EXPECT_THROW(k.prepare(fwd_bf16(), ""), Unsupported);
    return;
  }
  OptionsGuard guard;
  vendor::VendorOptions o = guard.saved;
  o.cudnn_lib = "/nonexistent/libcudnn.so.9";
  vendor::set_options(o);
  const auto why = check_common(k, fwd_bf16());
  ASSERT_TRUE(why.has_value()) << "a missing --cudnn-lib file must not pass supports()";
  EXPECT_NE(why->find("--cudnn-lib"), std::string::npos) << *why;
  EXPECT_NE(why->find("/nonexistent/libcudnn.so.9"), std::string::npos) << *why;
  EXPECT_THROW(k.prepare(fwd_bf16(), ""), Unsupported);
}

// Without a GPU (CI) the case is refused with a reason (no library, no device); with one, the
// plan names the engine. Either way nothing crashes and nothing passes silently.
TEST(CudnnKernel, PrepareWithoutDeviceOrLibraryGivesAReason) {
  const KernelInfo& k = cudnn_kernel();
  const Problem p = fwd_bf16();
  if (const auto why = check_common(k, p)) {
    EXPECT_FALSE(why->empty());
    return;
  }
  try {
    std::unique_ptr<Plan> plan = k.prepare(p, "");
    ASSERT_NE(plan, nullptr);
    EXPECT_EQ(plan->picked().rfind("cudnn:", 0), 0u) << plan->picked();
  } catch (const Unsupported& e) {
    EXPECT_GT(std::string(e.what()).size(), 10u) << "the reason must say what is missing";
  }
}

TEST(CudnnKernel, OneRowUnlessAllEnginesAreAsked) {
  const KernelInfo& k = cudnn_kernel();
  OptionsGuard guard;
  vendor::VendorOptions o = guard.saved;
  o.cudnn_all_engines = false;
  vendor::set_options(o);
  if (k.variants) {
    EXPECT_TRUE(k.variants(fwd_bf16()).empty());
  }
  o.cudnn_all_engines = true;
  vendor::set_options(o);
  EXPECT_TRUE(vendor::options().cudnn_all_engines);
  // Without a device or library cuDNN offers nothing to list: still one row, which says why.
  if (k.variants && check_common(k, fwd_bf16()).has_value()) {
    EXPECT_TRUE(k.variants(fwd_bf16()).empty());
  }
}

}  // namespace
}  // namespace rb

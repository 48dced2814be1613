// GPU tests of the cublas kernel (kernels/vendor/cublas.cu), driven through its own plan
// lifecycle (prepare -> workspace -> launch) on plain cudaMalloc'd buffers and checked against
// an fp64 host computation: fwd (y, rrms) over awkward shapes, strided rows and a base offset
// by one element; bwd and add-bwd (dx, dw); dw's bitwise repeatability; a CUDA-graph replay.
// Each test skips itself, naming the CUDA error, when no device is usable.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <type_traits>

#include "kernels/registry.h"
#include "kernels/vendor/cublas_plan.cuh"
#include "kernels/vendor/vendor.h"
#include "reference/host_dtype.h"
#include "tests/gpu_support.h"

namespace rb {
namespace {

using ref::bfloat16;
using ref::half;


void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}
#define CK(call) check((call), #call)

struct Free {
  void operator()(void* p) const { cudaFree(p); }
};
using DevPtr = std::unique_ptr<void, Free>;

DevPtr dev_alloc(std::size_t bytes) {
  void* p = nullptr;
  CK(cudaMalloc(&p, bytes < 1 ? 1 : bytes));
  return DevPtr(p);
}

template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return DType::f32;
  if constexpr (std::is_same_v<T, half>) return DType::f16;
  return DType::bf16;
}

template <class T>
double up(T v) {
  return ref::to_double(v);
}

// A device copy of a host vector placed `offset` elements past a 256-byte aligned base.
template <class T>
struct DevTensor {
  DevPtr buf;
  std::size_t offset;
  std::size_t n;
  DevTensor(const std::vector<T>& host, std::size_t off) : buf(dev_alloc((host.size() + off) * sizeof(T))), offset(off), n(host.size()) {
    CK(cudaMemcpy(data(), host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  }
  // Uninitialised output: every byte 0xFF (a NaN in every dtype), the offset region too.
  DevTensor(std::size_t count, std::size_t off) : buf(dev_alloc((count + off) * sizeof(T))), offset(off), n(count) {
    CK(cudaMemset(buf.get(), 0xFF, (count + off) * sizeof(T)));
  }
  T* data() const { return static_cast<T*>(buf.get()) + offset; }
  std::vector<T> host() const {
    std::vector<T> h(n);
    CK(cudaMemcpy(h.data(), data(), n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
  bool offset_untouched() const {
    std::vector<unsigned char> b(offset * sizeof(T));
    CK(cudaMemcpy(b.data(), buf.get(), b.size(), cudaMemcpyDeviceToHost));
    for (unsigned char c : b)
      if (c != 0xFF) return false;
    return true;
  }
};

template <class T>
bool is_poison(T v) {
  unsigned char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  for (unsigned char c : b)
    if (c != 0xFF) return false;
  return true;
}

template <class T>
std::vector<T> random_vec(std::size_t n, double mean, double sd, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> d(mean, sd);
  std::vector<T> v(n);
  for (auto& e : v) e = ref::from_float<T>(static_cast<float>(d(gen)));
  return v;
}

// Counts elements outside |got - want| <= atol + rtol |want| (or not finite), reporting the first few.
struct Mismatches {
  int count = 0;
  std::ostringstream first;
  void check(double got, double want, double atol, double rtol, const char* what, std::int64_t r, std::int64_t c) {
    const bool ok = std::isfinite(got) && std::abs(got - want) <= atol + rtol * std::abs(want);
    if (!ok && ++count <= 5) first << " " << what << "(" << r << "," << c << "): got " << got << " want " << want << ";";
  }
};

const KernelInfo& cublas_kernel() {
  static const KernelInfo k = vendor::cublas_kernels().front();
  return k;
}

Problem make_problem(Op op, std::int64_t M, std::int64_t H, std::int64_t stride, DType x, DType w, DType r,
                     std::size_t offset_bytes) {
  return Problem::of(op, M, H, x, w, r, stride, offset_bytes == 0 ? 16 : static_cast<std::int64_t>(offset_bytes));
}

std::unique_ptr<Plan> prepare_or_fail(const Problem& p) {
  if (const auto why = cublas_kernel().supports(p)) throw std::runtime_error("supports refused: " + *why);
  return cublas_kernel().prepare(p, "");
}

template <class T>
double fwd_atol() {
  return std::is_same_v<T, float> ? 1e-5 : std::is_same_v<T, half> ? 1e-3 : 1e-2;
}

// ---- forward -------------------------------------------------------------------------------
struct FwdCase {
  DType x, w;
  std::int64_t M, H, stride;
  std::size_t offset;  // elements: a base not 16-byte aligned when non-zero
};

template <class T, class W>
void run_fwd(const FwdCase& fc) {
  const std::int64_t M = fc.M, H = fc.H, S = fc.stride;
  const float eps = 1e-5f;
  const auto x = random_vec<T>(static_cast<std::size_t>(M * S), 0.0, 1.0, 1234);
  const auto w = random_vec<W>(static_cast<std::size_t>(H), 1.0, 0.25, 99);
  DevTensor<T> dx(x, fc.offset);
  DevTensor<W> dw(w, fc.offset);
  DevTensor<T> dy(static_cast<std::size_t>(M * S), fc.offset);
  DevTensor<float> drrms(static_cast<std::size_t>(M), 0);

  const Problem p = make_problem(Op::fwd, M, H, S, fc.x, fc.w, fc.x, fc.offset * sizeof(T));
  const auto plan = prepare_or_fail(p);
  ASSERT_EQ(plan->workspace_bytes(), vendor::cublas::workspace_bytes(p));
  DevPtr ws = dev_alloc(plan->workspace_bytes());
  FwdArgs a;
  a.x = dx.data();
  a.w = dw.data();
  a.y = dy.data();
  a.rrms = drrms.data();
  a.M = M;
  a.H = H;
  a.x_stride = S;
  a.y_stride = S;
  a.eps = eps;
  a.xdtype = fc.x;
  a.wdtype = fc.w;
  a.workspace = ws.get();
  a.workspace_bytes = plan->workspace_bytes();
  const cudaError_t e = plan->launch(a, nullptr);
  ASSERT_EQ(e, cudaSuccess) << cudaGetErrorString(e) << " " << vendor::cublas::last_error();
  CK(cudaDeviceSynchronize());

  const auto y = dy.host();
  const auto rr = drrms.host();
  Mismatches bad;
  int pad_written = 0;
  for (std::int64_t r = 0; r < M; ++r) {
    double ss = 0;
    for (std::int64_t c = 0; c < H; ++c) ss += up(x[r * S + c]) * up(x[r * S + c]);
    const double rrms = 1.0 / std::sqrt(ss / static_cast<double>(H) + static_cast<double>(eps));
    bad.check(rr[r], rrms, 1e-5, 1e-5, "rrms", r, 0);
    for (std::int64_t c = 0; c < H; ++c)
      bad.check(up(y[r * S + c]), up(x[r * S + c]) * rrms * up(w[c]), fwd_atol<T>(), fwd_atol<T>(), "y", r, c);
    for (std::int64_t c = H; c < S; ++c) pad_written += !is_poison(y[r * S + c]);
  }
  EXPECT_EQ(bad.count, 0) << bad.first.str();
  EXPECT_EQ(pad_written, 0) << "y written between rows (columns H..stride)";
  EXPECT_TRUE(dy.offset_untouched()) << "y written before its base";
  EXPECT_EQ(plan->picked(), "cublas:gemm-batched-dot");
}

class CublasFwd : public testing::TestWithParam<FwdCase> {};

TEST_P(CublasFwd, MatchesFp64) {
  RB_REQUIRE_GPU();
  const FwdCase& c = GetParam();
  switch (c.x) {
    case DType::f32:
      run_fwd<float, float>(c);
      break;
    case DType::f16:
      if (c.w == DType::f16)
        run_fwd<half, half>(c);
      else
        run_fwd<half, float>(c);
      break;
    case DType::bf16:
      if (c.w == DType::bf16)
        run_fwd<bfloat16, bfloat16>(c);
      else
        run_fwd<bfloat16, float>(c);
      break;
    case DType::e4m3:  // output-only dtypes: no case has them as x
    case DType::e5m2:
      FAIL() << "no fp8 x";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CublasFwd,
    testing::Values(FwdCase{DType::bf16, DType::bf16, 37, 4097, 4097 + 6, 0},  // odd H, strided
                    FwdCase{DType::bf16, DType::f32, 37, 4097, 4097, 1},      // misaligned base
                    FwdCase{DType::f16, DType::f16, 19, 1, 3, 0},             // H = 1
                    FwdCase{DType::f16, DType::f32, 99, 127, 127, 1},
                    FwdCase{DType::f32, DType::f32, 19, 500, 503, 0},
                    FwdCase{DType::f32, DType::f32, 1, 4096, 4096, 1},
                    FwdCase{DType::bf16, DType::bf16, 989, 111, 111, 0}),
    [](const testing::TestParamInfo<FwdCase>& i) {
      const FwdCase& c = i.param;
      return std::string(dtype_name(c.x)) + "_" + std::string(dtype_name(c.w)) + "_M" + std::to_string(c.M) + "_H" +
             std::to_string(c.H) + "_S" + std::to_string(c.stride) + (c.offset ? "_misaligned" : "");
    });

// ---- backward ------------------------------------------------------------------------------
// X: x's (and dx's, ds_out's) type; G: dy's; W: w's and dw's. ds: add-bwd.
template <class X, class G, class W>
void run_bwd(Op op, std::int64_t M, std::int64_t H, std::int64_t S, std::size_t offset, double x_tol, double w_tol) {
  const bool with_ds = op == Op::add_bwd;
  const auto x = random_vec<X>(static_cast<std::size_t>(M * S), 0.0, 1.0, 7);
  const auto dy = random_vec<G>(static_cast<std::size_t>(M * S), 0.0, 1.0, 8);
  const auto ds = random_vec<X>(static_cast<std::size_t>(M * S), 0.0, 1.0, 9);
  const auto w = random_vec<W>(static_cast<std::size_t>(H), 1.0, 0.25, 10);
  std::vector<float> rr(static_cast<std::size_t>(M));
  for (std::int64_t r = 0; r < M; ++r) {
    double ss = 0;
    for (std::int64_t c = 0; c < H; ++c) ss += up(x[r * S + c]) * up(x[r * S + c]);
    rr[r] = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(H) + 1e-5));
  }
  DevTensor<X> d_x(x, offset);
  DevTensor<G> d_dy(dy, offset);
  DevTensor<X> d_ds(ds, offset);
  DevTensor<W> d_w(w, offset);
  DevTensor<float> d_rr(rr, 0);
  DevTensor<X> d_dx(static_cast<std::size_t>(M * S), offset);
  DevTensor<W> d_dw(static_cast<std::size_t>(H), offset);

  const DType xd = dtype_of<X>(), gd = dtype_of<G>(), wd = dtype_of<W>();
  // add-bwd's problem: x = the forward's x dtype (dy's), r = the residual stream's.
  const Problem p = make_problem(op, M, H, S, gd, wd, xd, offset * sizeof(X));
  const auto plan = prepare_or_fail(p);
  ASSERT_EQ(plan->workspace_bytes(), vendor::cublas::workspace_bytes(p));
  DevPtr ws = dev_alloc(plan->workspace_bytes());
  BwdArgs a;
  a.x = d_x.data();
  a.w = d_w.data();
  a.dy = d_dy.data();
  a.rrms = d_rr.data();
  a.ds_out = with_ds ? d_ds.data() : nullptr;
  a.dx = d_dx.data();
  a.dw = d_dw.data();
  a.workspace = ws.get();
  a.workspace_bytes = plan->workspace_bytes();
  a.M = M;
  a.H = H;
  a.x_stride = a.dy_stride = a.ds_stride = a.dx_stride = S;
  a.xdtype = xd;
  a.dydtype = gd;
  a.wdtype = wd;
  cudaError_t e = plan->launch(a, nullptr);
  ASSERT_EQ(e, cudaSuccess) << cudaGetErrorString(e) << " " << vendor::cublas::last_error();
  CK(cudaDeviceSynchronize());
  const auto dx1 = d_dx.host();
  const auto dw1 = d_dw.host();

  Mismatches bad;
  std::vector<double> dw_ref(static_cast<std::size_t>(H), 0.0);
  for (std::int64_t r = 0; r < M; ++r) {
    const double rrms = rr[r];
    double c_row = 0;
    for (std::int64_t j = 0; j < H; ++j) c_row += up(dy[r * S + j]) * up(w[j]) * up(x[r * S + j]);
    for (std::int64_t j = 0; j < H; ++j) {
      const double g = up(dy[r * S + j]) * up(w[j]);
      double want = rrms * g - up(x[r * S + j]) * rrms * rrms * rrms / static_cast<double>(H) * c_row;
      if (with_ds) want += up(ds[r * S + j]);
      bad.check(up(dx1[r * S + j]), want, x_tol, x_tol, "dx", r, j);
      dw_ref[j] += up(dy[r * S + j]) * up(x[r * S + j]) * rrms;
    }
  }
  for (std::int64_t j = 0; j < H; ++j) bad.check(up(dw1[j]), dw_ref[j], w_tol, w_tol, "dw", 0, j);
  EXPECT_EQ(bad.count, 0) << bad.first.str();
  EXPECT_TRUE(d_dx.offset_untouched() && d_dw.offset_untouched()) << "written before a base";

  // Bitwise repeatable: a second launch (outputs poisoned again) gives the same bits.
  CK(cudaMemset(d_dx.data(), 0xFF, M * S * sizeof(X)));
  CK(cudaMemset(d_dw.data(), 0xFF, H * sizeof(W)));
  e = plan->launch(a, nullptr);
  ASSERT_EQ(e, cudaSuccess) << cudaGetErrorString(e) << " " << vendor::cublas::last_error();
  CK(cudaDeviceSynchronize());
  const auto dx2 = d_dx.host();
  const auto dw2 = d_dw.host();
  EXPECT_EQ(std::memcmp(dw1.data(), dw2.data(), dw1.size() * sizeof(W)), 0) << "dw not bitwise repeatable";
  EXPECT_EQ(std::memcmp(dx1.data(), dx2.data(), dx1.size() * sizeof(X)), 0) << "dx not bitwise repeatable";
  EXPECT_EQ(plan->picked(), "cublas:sgemv");
}

TEST(CublasBwd, Bf16OddHStrided) {
  RB_REQUIRE_GPU();
  run_bwd<bfloat16, bfloat16, bfloat16>(Op::bwd, 37, 4097, 4097 + 6, 0, 1e-2, 1e-2);
}

TEST(CublasBwd, Fp16Fp32WeightMisaligned) {
  RB_REQUIRE_GPU();
  run_bwd<half, half, float>(Op::bwd, 19, 127, 127, 1, 1e-3, 1e-4);
}

TEST(CublasBwd, Fp32) {
  RB_REQUIRE_GPU();
  run_bwd<float, float, float>(Op::bwd, 99, 500, 503, 0, 1e-4, 1e-4);
}

TEST(CublasAddBwd, Fp32ResidualBf16Dy) {
  RB_REQUIRE_GPU();
  run_bwd<float, bfloat16, bfloat16>(Op::add_bwd, 37, 4097, 4097, 1, 1e-4, 1e-2);
}

TEST(CublasAddBwd, Bf16Residual) {
  RB_REQUIRE_GPU();
  run_bwd<bfloat16, bfloat16, float>(Op::add_bwd, 5, 3, 3, 0, 1e-2, 1e-4);
}

TEST(CublasBwd, NoRowsWritesZeroDw) {
  RB_REQUIRE_GPU();
  const Problem p = make_problem(Op::bwd, 0, 33, 33, DType::bf16, DType::bf16, DType::bf16, 0);
  const auto plan = prepare_or_fail(p);
  DevTensor<bfloat16> dw(33, 0);
  BwdArgs a;
  a.dw = dw.data();
  a.M = 0;
  a.H = 33;
  a.x_stride = a.dy_stride = a.ds_stride = a.dx_stride = 33;
  a.xdtype = a.dydtype = a.wdtype = DType::bf16;
  ASSERT_EQ(plan->launch(a, nullptr), cudaSuccess) << vendor::cublas::last_error();
  CK(cudaDeviceSynchronize());
  for (bfloat16 v : dw.host()) EXPECT_EQ(up(v), 0.0);
}

// ---- launch contract -----------------------------------------------------------------------
TEST(CublasPlan, RefusesATooSmallWorkspaceAndSaysWhy) {
  RB_REQUIRE_GPU();
  const Problem p = make_problem(Op::fwd, 4, 8, 8, DType::f32, DType::f32, DType::f32, 0);
  const auto plan = prepare_or_fail(p);
  FwdArgs a;
  a.M = 4;
  a.H = 8;
  a.x_stride = a.y_stride = 8;
  a.workspace_bytes = 16;
  DevPtr ws = dev_alloc(16);
  a.workspace = ws.get();
  EXPECT_EQ(plan->launch(a, nullptr), cudaErrorInvalidValue);
  EXPECT_NE(vendor::cublas::last_error().find("workspace"), std::string::npos) << vendor::cublas::last_error();
}

// The harness times small launches as CUDA-graph replays: the plan must capture cleanly (no
// allocation inside the launch) and the replay must give the direct launch's bits.
TEST(CublasPlan, ForwardCapturesIntoAGraph) {
  RB_REQUIRE_GPU();
  const std::int64_t M = 8, H = 4097;
  const auto x = random_vec<bfloat16>(M * H, 0.0, 1.0, 3);
  const auto w = random_vec<bfloat16>(H, 1.0, 0.25, 4);
  DevTensor<bfloat16> dx(x, 0), dw(w, 0), dy(M * H, 0);
  DevTensor<float> drr(M, 0);
  const Problem p = make_problem(Op::fwd, M, H, H, DType::bf16, DType::bf16, DType::bf16, 0);
  const auto plan = prepare_or_fail(p);
  DevPtr ws = dev_alloc(plan->workspace_bytes());
  FwdArgs a;
  a.x = dx.data();
  a.w = dw.data();
  a.y = dy.data();
  a.rrms = drr.data();
  a.M = M;
  a.H = H;
  a.x_stride = a.y_stride = H;
  a.xdtype = a.wdtype = DType::bf16;
  a.workspace = ws.get();
  a.workspace_bytes = plan->workspace_bytes();

  cudaStream_t s = nullptr;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::unique_ptr<CUstream_st, void (*)(cudaStream_t)> own_s(s, [](cudaStream_t st) { cudaStreamDestroy(st); });
  CK(legacy_stream_done());  // the uploads and poison, before a launch on non-blocking s
  ASSERT_EQ(plan->launch(a, s), cudaSuccess) << vendor::cublas::last_error();
  CK(cudaStreamSynchronize(s));
  const auto direct = dy.host();
  CK(cudaMemset(dy.data(), 0xFF, M * H * sizeof(bfloat16)));
  CK(legacy_stream_done());

  cudaGraph_t g = nullptr;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  const cudaError_t in_capture = plan->launch(a, s);
  CK(cudaStreamEndCapture(s, &g));
  std::unique_ptr<CUgraph_st, void (*)(cudaGraph_t)> own_g(g, [](cudaGraph_t gr) { cudaGraphDestroy(gr); });
  ASSERT_EQ(in_capture, cudaSuccess) << vendor::cublas::last_error();
  cudaGraphExec_t ge = nullptr;
  CK(cudaGraphInstantiate(&ge, g, 0));
  std::unique_ptr<CUgraphExec_st, void (*)(cudaGraphExec_t)> own_ge(ge, [](cudaGraphExec_t x) { cudaGraphExecDestroy(x); });
  CK(cudaGraphLaunch(ge, s));
  CK(cudaGraphLaunch(ge, s));
  CK(cudaStreamSynchronize(s));
  const auto replayed = dy.host();
  EXPECT_EQ(std::memcmp(direct.data(), replayed.data(), direct.size() * sizeof(bfloat16)), 0);
}

}  // namespace
}  // namespace rb

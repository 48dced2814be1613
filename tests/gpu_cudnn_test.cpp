// GPU tests of the `cudnn` kernel through the registry interface (prepare -> workspace ->
// launch) on device buffers, checked against a plain fp64 host computation: forward (y and
// rrms, with eps bound at launch), backward (dx, dw), a layout cuDNN must either run correctly
// or refuse by name, a launch captured into a CUDA graph, and the per-engine variants. Each test skips
// itself, saying why, when no CUDA device, no cuDNN build or no libcudnn is usable.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "kernels/vendor/vendor.h"
#include "tests/gpu_support.h"

namespace rb {
namespace {


#define RB_CUDA_OK(call)                                                                                  \
  do {                                                                                                    \
    const cudaError_t e_ = (call);                                                                        \
    ASSERT_EQ(e_, cudaSuccess) << #call << ": " << cudaGetErrorName(e_) << " " << cudaGetErrorString(e_); \
  } while (0)

// The cudnn kernel, or a skip when this build or machine cannot run it.
#define RB_REQUIRE_CUDNN(kernel, problem)                                \
  RB_REQUIRE_GPU();                                                      \
  const KernelInfo* kernel = find_kernel("cudnn");                       \
  ASSERT_NE(kernel, nullptr) << "cudnn is not registered";               \
  if (!kernel->unavailable.empty()) GTEST_SKIP() << kernel->unavailable; \
  if (auto why_ = check_common(*kernel, problem)) GTEST_SKIP() << "cudnn cannot run: " << *why_

// Host bf16: round to nearest even, the storage the device reads.
std::uint16_t to_bf16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}
float from_bf16(std::uint16_t h) {
  const std::uint32_t u = std::uint32_t{h} << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// A deterministic value in [-2, 2), exactly representable in bf16.
float sample(std::uint64_t& state) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  const double u = static_cast<double>(state >> 11) / 9007199254740992.0;
  return from_bf16(to_bf16(static_cast<float>(4.0 * u - 2.0)));
}

struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(std::size_t bytes) {
    if (bytes && cudaMalloc(&p, bytes) != cudaSuccess) p = nullptr;
  }
  ~DeviceBuffer() {
    if (p) cudaFree(p);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); }
  ~Stream() {
    if (s) cudaStreamDestroy(s);
  }
};

// rrms of each row of x (M x H, row stride S), in fp64.
std::vector<double> ref_rrms(const std::vector<float>& x, std::int64_t M, std::int64_t H, std::int64_t S,
                             double eps) {
  std::vector<double> r(M);
  for (std::int64_t i = 0; i < M; ++i) {
    double ss = 0;
    for (std::int64_t j = 0; j < H; ++j) ss += double(x[i * S + j]) * x[i * S + j];
    r[i] = 1.0 / std::sqrt(ss / H + eps);
  }
  return r;
}

// One bf16 forward on device at two eps through one plan, checked against fp64, rows `S`
// elements apart. Unless must_run, cuDNN may refuse the case instead, by name.
void check_fwd_bf16(std::int64_t M, std::int64_t H, std::int64_t S, bool must_run) {
  const Problem p = Problem::of(Op::fwd, M, H, DType::bf16, DType::bf16, DType::f32, S);
  RB_REQUIRE_CUDNN(k, p);

  std::unique_ptr<Plan> plan;
  try {
    plan = k->prepare(p, "");
  } catch (const Unsupported& e) {
    ASSERT_FALSE(must_run) << "cuDNN refused the case: " << e.what();
    ASSERT_GT(std::strlen(e.what()), 0u) << "a refusal must say why";
    return;  // refused by name: a skip, not a wrong result
  }
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(plan->picked().rfind("cudnn:", 0), 0u) << plan->picked();

  std::uint64_t seed = 42;
  const std::int64_t elems = (M - 1) * S + H;
  std::vector<float> xf(elems, 0.0f), wf(H);
  std::vector<std::uint16_t> xh(elems, 0), wh(H, 0);
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < H; ++j) {
      xf[i * S + j] = sample(seed);
      xh[i * S + j] = to_bf16(xf[i * S + j]);
    }
  for (std::int64_t j = 0; j < H; ++j) {
    wf[j] = 0.5f + 0.25f * sample(seed);
    wf[j] = from_bf16(to_bf16(wf[j]));
    wh[j] = to_bf16(wf[j]);
  }

  DeviceBuffer dx(xh.size() * 2), dw(wh.size() * 2), dy(xh.size() * 2), drrms(M * 4),
      dws(plan->workspace_bytes());
  ASSERT_TRUE(dx.p && dw.p && dy.p && drrms.p && (plan->workspace_bytes() == 0 || dws.p));
  RB_CUDA_OK(cudaMemcpy(dx.p, xh.data(), xh.size() * 2, cudaMemcpyHostToDevice));
  RB_CUDA_OK(cudaMemcpy(dw.p, wh.data(), wh.size() * 2, cudaMemcpyHostToDevice));
  RB_CUDA_OK(cudaMemset(dy.p, 0xff, xh.size() * 2));  // NaN poison
  RB_CUDA_OK(legacy_stream_done());

  Stream stream;
  ASSERT_NE(stream.s, nullptr);
  for (float eps : {1e-5f, 0.5f}) {
    FwdArgs a;
    a.x = dx.p;
    a.w = dw.p;
    a.y = dy.p;
    a.rrms = static_cast<float*>(drrms.p);
    a.M = M;
    a.H = H;
    a.x_stride = a.y_stride = S;
    a.eps = eps;
    a.xdtype = a.wdtype = DType::bf16;
    a.workspace = dws.p;
    a.workspace_bytes = plan->workspace_bytes();
    RB_CUDA_OK(plan->launch(a, stream.s));
    RB_CUDA_OK(cudaStreamSynchronize(stream.s));

    std::vector<std::uint16_t> yh(xh.size());
    std::vector<float> rr(M);
    RB_CUDA_OK(cudaMemcpy(yh.data(), dy.p, yh.size() * 2, cudaMemcpyDeviceToHost));
    RB_CUDA_OK(cudaMemcpy(rr.data(), drrms.p, M * 4, cudaMemcpyDeviceToHost));
    const std::vector<double> ref = ref_rrms(xf, M, H, S, eps);
    int bad = 0;
    for (std::int64_t i = 0; i < M; ++i) {
      EXPECT_NEAR(rr[i], ref[i], 1e-5 * ref[i]) << "rrms row " << i << " eps " << eps;
      for (std::int64_t j = 0; j < H && bad < 5; ++j) {
        const double want = xf[i * S + j] * ref[i] * wf[j];
        const double got = from_bf16(yh[i * S + j]);
        if (!(std::fabs(got - want) <= 1e-2 + 1e-2 * std::fabs(want))) {
          ++bad;
          ADD_FAILURE() << "y[" << i << ", " << j << "] = " << got << ", want " << want << " (eps " << eps
                        << ", " << plan->picked() << ")";
        }
      }
    }
  }
}

TEST(CudnnGpu, FwdBf16MatchesFp64) { check_fwd_bf16(64, 4096, 4096, true); }

// Strided rows (cuDNN 9.14/9.19 want them fully packed): computed correctly or refused by name.
TEST(CudnnGpu, FwdStridedRowsRunOrAreRefused) { check_fwd_bf16(19, 4097, 4097 + 63, false); }

// The harness times small cases as CUDA-graph replays: a launch captured on a stream replays
// to the same bits as the eager launch.
TEST(CudnnGpu, FwdReplaysFromACapturedGraph) {
  const std::int64_t M = 8, H = 4096;
  const Problem p = Problem::of(Op::fwd, M, H, DType::bf16, DType::bf16, DType::f32, H);
  RB_REQUIRE_CUDNN(k, p);
  std::unique_ptr<Plan> plan = k->prepare(p, "");
  std::uint64_t seed = 3;
  std::vector<std::uint16_t> xh(M * H), wh(H);
  for (auto& v : xh) v = to_bf16(sample(seed));
  for (auto& v : wh) v = to_bf16(sample(seed));
  DeviceBuffer dx(M * H * 2), dw(H * 2), dy(M * H * 2), dr(M * 4), dws(plan->workspace_bytes());
  ASSERT_TRUE(dx.p && dw.p && dy.p && dr.p && (plan->workspace_bytes() == 0 || dws.p));
  RB_CUDA_OK(cudaMemcpy(dx.p, xh.data(), M * H * 2, cudaMemcpyHostToDevice));
  RB_CUDA_OK(cudaMemcpy(dw.p, wh.data(), H * 2, cudaMemcpyHostToDevice));
  RB_CUDA_OK(legacy_stream_done());
  FwdArgs a;
  a.x = dx.p;
  a.w = dw.p;
  a.y = dy.p;
  a.rrms = static_cast<float*>(dr.p);
  a.M = M;
  a.H = H;
  a.x_stride = a.y_stride = H;
  a.eps = 1e-6f;
  a.xdtype = a.wdtype = DType::bf16;
  a.workspace = dws.p;
  a.workspace_bytes = plan->workspace_bytes();
  Stream stream;
  RB_CUDA_OK(plan->launch(a, stream.s));
  RB_CUDA_OK(cudaStreamSynchronize(stream.s));
  std::vector<std::uint16_t> eager(M * H), replayed(M * H);
  RB_CUDA_OK(cudaMemcpy(eager.data(), dy.p, M * H * 2, cudaMemcpyDeviceToHost));
  RB_CUDA_OK(cudaMemset(dy.p, 0xff, M * H * 2));
  RB_CUDA_OK(legacy_stream_done());

  cudaGraph_t graph = nullptr;
  RB_CUDA_OK(cudaStreamBeginCapture(stream.s, cudaStreamCaptureModeThreadLocal));
  const cudaError_t launched = plan->launch(a, stream.s);
  RB_CUDA_OK(cudaStreamEndCapture(stream.s, &graph));
  RB_CUDA_OK(launched);
  cudaGraphExec_t exec = nullptr;
  RB_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  RB_CUDA_OK(cudaGraphLaunch(exec, stream.s));
  RB_CUDA_OK(cudaStreamSynchronize(stream.s));
  RB_CUDA_OK(cudaMemcpy(replayed.data(), dy.p, M * H * 2, cudaMemcpyDeviceToHost));
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  EXPECT_TRUE(eager == replayed) << "the graph replay of " << plan->picked()
                                 << " differs from its eager launch";
}

TEST(CudnnGpu, BwdBf16MatchesFp64) {
  const std::int64_t M = 64, H = 4096, S = H;
  const Problem p = Problem::of(Op::bwd, M, H, DType::bf16, DType::bf16, DType::f32, S);
  RB_REQUIRE_CUDNN(k, p);
  std::unique_ptr<Plan> plan;
  try {
    plan = k->prepare(p, "");
  } catch (const Unsupported& e) {
    FAIL() << "cuDNN refused bwd bf16: " << e.what();
  }

  std::uint64_t seed = 7;
  std::vector<float> xf(M * H), gf(M * H), wf(H);
  std::vector<std::uint16_t> xh(M * H), gh(M * H), wh(H);
  for (std::int64_t i = 0; i < M * H; ++i) {
    xf[i] = sample(seed);
    xh[i] = to_bf16(xf[i]);
    gf[i] = sample(seed);
    gh[i] = to_bf16(gf[i]);
  }
  for (std::int64_t j = 0; j < H; ++j) {
    wf[j] = from_bf16(to_bf16(0.5f + 0.25f * sample(seed)));
    wh[j] = to_bf16(wf[j]);
  }
  const double eps = 1e-5;
  const std::vector<double> rrms = ref_rrms(xf, M, H, S, eps);
  std::vector<float> rrms_f(rrms.begin(), rrms.end());

  DeviceBuffer dx(M * H * 2), dg(M * H * 2), dw(H * 2), dr(M * 4), ddx(M * H * 2), ddw(H * 2),
      dws(plan->workspace_bytes());
  ASSERT_TRUE(dx.p && dg.p && dw.p && dr.p && ddx.p && ddw.p && (plan->workspace_bytes() == 0 || dws.p));
  RB_CUDA_OK(cudaMemcpy(dx.p, xh.data(), M * H * 2, cudaMemcpyHostToDevice));
  RB_CUDA_OK(cudaMemcpy(dg.p, gh.data(), M * H * 2, cudaMemcpyHostToDevice));
  RB_CUDA_OK(cudaMemcpy(dw.p, wh.data(), H * 2, cudaMemcpyHostToDevice));
  RB_CUDA_OK(cudaMemcpy(dr.p, rrms_f.data(), M * 4, cudaMemcpyHostToDevice));
  RB_CUDA_OK(cudaMemset(ddx.p, 0xff, M * H * 2));
  RB_CUDA_OK(cudaMemset(ddw.p, 0xff, H * 2));
  RB_CUDA_OK(legacy_stream_done());

  BwdArgs a;
  a.x = dx.p;
  a.w = dw.p;
  a.dy = dg.p;
  a.rrms = static_cast<const float*>(dr.p);
  a.dx = ddx.p;
  a.dw = ddw.p;
  a.workspace = dws.p;
  a.workspace_bytes = plan->workspace_bytes();
  a.M = M;
  a.H = H;
  a.x_stride = a.dy_stride = a.dx_stride = S;
  a.xdtype = a.dydtype = a.wdtype = DType::bf16;
  Stream stream;
  RB_CUDA_OK(plan->launch(a, stream.s));
  RB_CUDA_OK(cudaStreamSynchronize(stream.s));

  std::vector<std::uint16_t> dxh(M * H), dwh(H);
  RB_CUDA_OK(cudaMemcpy(dxh.data(), ddx.p, M * H * 2, cudaMemcpyDeviceToHost));
  RB_CUDA_OK(cudaMemcpy(dwh.data(), ddw.p, H * 2, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (std::int64_t i = 0; i < M && bad < 5; ++i) {
    double dot = 0;  // sum_j g_j x_j with g = dy * w
    for (std::int64_t j = 0; j < H; ++j) dot += double(gf[i * H + j]) * wf[j] * xf[i * H + j];
    const double r = rrms[i];
    for (std::int64_t j = 0; j < H && bad < 5; ++j) {
      const double want = r * gf[i * H + j] * wf[j] - xf[i * H + j] * (r * r * r / H) * dot;
      const double got = from_bf16(dxh[i * H + j]);
      if (!(std::fabs(got - want) <= 1e-2 + 1e-2 * std::fabs(want))) {
        ++bad;
        ADD_FAILURE() << "dx[" << i << ", " << j << "] = " << got << ", want " << want;
      }
    }
  }
  for (std::int64_t j = 0; j < H && bad < 10; ++j) {
    double want = 0;
    for (std::int64_t i = 0; i < M; ++i) want += double(gf[i * H + j]) * xf[i * H + j] * rrms[i];
    const double got = from_bf16(dwh[j]);
    if (!(std::fabs(got - want) <= 2e-2 + 1e-2 * std::fabs(want))) {
      ++bad;
      ADD_FAILURE() << "dw[" << j << "] = " << got << ", want " << want;
    }
  }
}

// --cudnn-engines all: one variant per engine configuration, each one preparable by name.
TEST(CudnnGpu, AllEnginesListsVariants) {
  const Problem p = Problem::of(Op::fwd, 64, 4096, DType::bf16, DType::bf16, DType::f32, 4096);
  RB_REQUIRE_CUDNN(k, p);
  ASSERT_TRUE(static_cast<bool>(k->variants));

  const vendor::VendorOptions saved = vendor::options();
  vendor::VendorOptions all = saved;
  all.cudnn_all_engines = true;
  vendor::set_options(all);
  const std::vector<std::string> names = k->variants(p);
  vendor::set_options(saved);

  ASSERT_GE(names.size(), 1u) << "cuDNN offered no engine configuration for fwd bf16 64x4096";
  for (std::size_t i = 0; i < names.size(); ++i)
    for (std::size_t j = i + 1; j < names.size(); ++j) EXPECT_NE(names[i], names[j]);
  // The first one builds and says it is the one that runs (others may be refused by name).
  try {
    std::unique_ptr<Plan> plan = k->prepare(p, names.front());
    EXPECT_EQ(plan->picked(), "cudnn:" + names.front());
  } catch (const Unsupported& e) {
    ADD_FAILURE() << names.front() << " listed but refused: " << e.what();
  }
  EXPECT_THROW(k->prepare(p, "eng-none"), Unsupported);
  EXPECT_TRUE(k->variants(p).empty()) << "without --cudnn-engines all, one row: the heuristics' choice";
}

}  // namespace
}  // namespace rb

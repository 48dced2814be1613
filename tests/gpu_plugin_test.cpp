// Plugin kernels on the GPU, through the registry's plans, against an fp64 host computation:
// the example plugin's fwd, add and bwd are right (awkward H, strided rows, a base offset by
// one element); its dw is bitwise repeatable; the wrong plugin's kernels are caught. Along
// the way: device pointers and streams of the tool's (static) CUDA runtime work in the
// plugin's own runtime, launches into a stream being captured land in the graph, and a
// plugin's launch error comes back as the plan's cudaError_t. Skips without a CUDA device.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "harness/case.h"
#include "harness/device.h"
#include "harness/runner.h"
#include "kernels/plugin.h"
#include "kernels/registry.h"

#if !defined(RB_PLUGIN_GOOD) || !defined(RB_PLUGIN_BAD)
// The paths come from examples/plugin/CMakeLists.txt (RB_PLUGIN_TEST_DEFINITIONS).
#error "define RB_PLUGIN_GOOD and RB_PLUGIN_BAD as the example plugins' paths"
#endif

#include "tests/gpu_support.h"
#include "tests/plugin_paths.h"

namespace {
const std::string kPluginGood = RB_RESOLVE_PLUGIN(RB_PLUGIN_GOOD);
const std::string kPluginBad = RB_RESOLVE_PLUGIN(RB_PLUGIN_BAD);
}  // namespace
#undef RB_PLUGIN_GOOD
#define RB_PLUGIN_GOOD kPluginGood.c_str()
#undef RB_PLUGIN_BAD
#define RB_PLUGIN_BAD kPluginBad.c_str()

namespace rb {
namespace {

#define RB_REQUIRE_CUDA_DEVICE()                                                                    \
  do {                                                                                              \
    int n_ = 0;                                                                                     \
    const cudaError_t e_ = cudaGetDeviceCount(&n_);                                                 \
    if (e_ != cudaSuccess)                                                                          \
      GTEST_SKIP() << "no CUDA device: " << cudaGetErrorName(e_) << ": " << cudaGetErrorString(e_); \
    if (n_ == 0) GTEST_SKIP() << "no CUDA device: none found";                                      \
  } while (0)

#define RB_CUDA_OK(call) ASSERT_EQ(cudaSuccess, (call)) << #call

void load_once(const std::string& path) {
  static std::set<std::string> loaded;
  if (loaded.insert(path).second) load_plugin(path);
}

const KernelInfo& kernel(const char* name) {
  load_once(RB_PLUGIN_GOOD);
  load_once(RB_PLUGIN_BAD);
  const KernelInfo* k = find_kernel(name);
  if (!k) throw std::runtime_error(std::string("not registered: ") + name);
  return *k;
}

template <class T>
DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return DType::f32;
  if constexpr (std::is_same_v<T, __half>) return DType::f16;
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return DType::bf16;
}
double to_double(float v) { return v; }
double to_double(__half v) { return __half2float(v); }
double to_double(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class T>
T from_float(float v) {
  if constexpr (std::is_same_v<T, float>) return v;
  if constexpr (std::is_same_v<T, __half>) return __float2half_rn(v);
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(v);
}

// The DESIGN's forward tolerances by output dtype (atol = rtol).
template <class T>
double tolerance() {
  if constexpr (std::is_same_v<T, float>) return 1e-5;
  if constexpr (std::is_same_v<T, __half>) return 1e-3;
  return 1e-2;
}

// Device memory of the test's runtime; the plugin's runtime sees the same pointers. Filled
// with a NaN pattern at once, so the gaps between strided rows, which the test copies back
// whole, hold defined bytes (compute-sanitizer's initcheck) and unwritten outputs show.
class DeviceMem {
 public:
  explicit DeviceMem(std::size_t bytes) {
    if (cudaMalloc(&p_, bytes ? bytes : 1) != cudaSuccess || cudaMemset(p_, 0xff, bytes ? bytes : 1) != cudaSuccess)
      p_ = nullptr;
  }
  ~DeviceMem() { cudaFree(p_); }
  DeviceMem(const DeviceMem&) = delete;
  DeviceMem& operator=(const DeviceMem&) = delete;
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
};

// A host M x H tensor with row stride `stride`, mirrored on the device at an element
// offset `offset` from an aligned allocation (offset 1: the misaligned layout).
template <class T>
struct Tensor {
  std::int64_t M, H, stride, offset;
  std::vector<T> host;
  DeviceMem mem;
  Tensor(std::int64_t m, std::int64_t h, std::int64_t s, std::int64_t off)
      : M(m),
        H(h),
        stride(s),
        offset(off),
        host(static_cast<std::size_t>((m - 1) * s + h)),
        mem((host.size() + static_cast<std::size_t>(off)) * sizeof(T)) {}
  T* dev() const { return static_cast<T*>(mem.get()) + offset; }
  T& at(std::int64_t r, std::int64_t c) { return host[static_cast<std::size_t>(r * stride + c)]; }
  double value(std::int64_t r, std::int64_t c) const {
    return to_double(host[static_cast<std::size_t>(r * stride + c)]);
  }
  cudaError_t upload() {
    return cudaMemcpy(dev(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
  }
  cudaError_t download() {
    return cudaMemcpy(host.data(), dev(), host.size() * sizeof(T), cudaMemcpyDeviceToHost);
  }
};

template <class T>
void fill(Tensor<T>& t, double scale, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (std::int64_t r = 0; r < t.M; ++r)
    for (std::int64_t c = 0; c < t.H; ++c)
      t.at(r, c) = from_float<T>(static_cast<float>(scale) * normal(gen));
}

// Elements of `got` outside atol + rtol * |ref| (atol = rtol = tol) of `ref`; NaN counts.
struct Mismatch {
  std::int64_t count = 0;
  double worst = 0;  // largest |got - ref| / (tol * (1 + |ref|))
};
void compare(double got, double ref, double tol, Mismatch& m) {
  const double err = std::fabs(got - ref);
  const double ratio = err / (tol * (1 + std::fabs(ref)));
  if (!(err <= tol + tol * std::fabs(ref))) ++m.count;
  if (!(ratio <= m.worst)) m.worst = ratio;  // NaN sticks
}

Problem problem_for(Op op, DType x, DType w, std::int64_t M, std::int64_t H, std::int64_t stride,
                    bool misaligned) {
  return Problem::of(op, M, H, x, w, x, stride, misaligned ? static_cast<std::int64_t>(dtype_size(x)) : 16);
}

// Runs kernel `name`'s forward on (M, H, stride, layout) inputs of the given scale (the
// first row all zeros when zero_row) and compares y and rrms to fp64.
template <class T, class W>
Mismatch run_fwd(const char* name, std::int64_t M, std::int64_t H, std::int64_t stride, bool misaligned,
                 double scale, bool zero_row, cudaStream_t stream = nullptr) {
  const std::int64_t off = misaligned ? 1 : 0;
  Tensor<T> x(M, H, stride, off), y(M, H, stride, off);
  Tensor<W> w(1, H, H, off);
  fill(x, scale, 1234);
  fill(w, 1.0, 99);
  if (zero_row)
    for (std::int64_t c = 0; c < H; ++c) x.at(0, c) = from_float<T>(0.f);
  DeviceMem rrms(static_cast<std::size_t>(M) * sizeof(float));
  EXPECT_EQ(x.upload(), cudaSuccess);
  EXPECT_EQ(w.upload(), cudaSuccess);

  const KernelInfo& k = kernel(name);
  const Problem p = problem_for(Op::fwd, dtype_of<T>(), dtype_of<W>(), M, H, stride, misaligned);
  EXPECT_EQ(k.supports(p), std::nullopt);
  const auto plan = k.prepare(p, "");
  EXPECT_EQ(plan->workspace_bytes(), 0u);
  FwdArgs a;
  a.x = x.dev();
  a.w = w.dev();
  a.y = y.dev();
  a.rrms = static_cast<float*>(rrms.get());
  a.M = M;
  a.H = H;
  a.x_stride = a.y_stride = stride;
  a.eps = 1e-5f;
  a.xdtype = dtype_of<T>();
  a.wdtype = dtype_of<W>();
  EXPECT_EQ(legacy_stream_done(), cudaSuccess);  // stream may be non-blocking
  EXPECT_EQ(plan->launch(a, stream), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(y.download(), cudaSuccess);
  std::vector<float> rrms_got(static_cast<std::size_t>(M));
  EXPECT_EQ(cudaMemcpy(rrms_got.data(), rrms.get(), rrms_got.size() * sizeof(float), cudaMemcpyDeviceToHost),
            cudaSuccess);

  Mismatch m;
  for (std::int64_t r = 0; r < M; ++r) {
    double sq = 0;
    for (std::int64_t c = 0; c < H; ++c) sq += x.value(r, c) * x.value(r, c);
    const double rr = 1 / std::sqrt(sq / static_cast<double>(H) + static_cast<double>(a.eps));
    compare(rrms_got[static_cast<std::size_t>(r)], rr, 1e-5, m);
    for (std::int64_t c = 0; c < H; ++c)
      compare(y.value(r, c), x.value(r, c) * rr * w.value(0, c), tolerance<T>(), m);
  }
  return m;
}

struct FwdCase {
  DType x, w;
  std::int64_t M, H, pad;  // row stride = H + pad
  bool misaligned;
};

std::string fwd_case_name(const testing::TestParamInfo<FwdCase>& info) {
  const FwdCase& c = info.param;
  return std::string(dtype_name(c.x)) + "_" + std::string(dtype_name(c.w)) + "_M" + std::to_string(c.M) +
         "_H" + std::to_string(c.H) + (c.pad ? "_strided" : "") + (c.misaligned ? "_misaligned" : "");
}

class GoodPluginFwd : public testing::TestWithParam<FwdCase> {};

TEST_P(GoodPluginFwd, MatchesFp64) {
  RB_REQUIRE_CUDA_DEVICE();
  const FwdCase& c = GetParam();
  const std::int64_t stride = c.H + c.pad;
  Mismatch m;
  if (c.x == DType::f32)
    m = run_fwd<float, float>("plugin:example-naive", c.M, c.H, stride, c.misaligned, 1, true);
  if (c.x == DType::f16 && c.w == DType::f16)
    m = run_fwd<__half, __half>("plugin:example-naive", c.M, c.H, stride, c.misaligned, 1, true);
  if (c.x == DType::bf16 && c.w == DType::bf16)
    m = run_fwd<__nv_bfloat16, __nv_bfloat16>("plugin:example-naive", c.M, c.H, stride, c.misaligned, 1,
                                              true);
  if (c.x == DType::bf16 && c.w == DType::f32)
    m = run_fwd<__nv_bfloat16, float>("plugin:example-naive", c.M, c.H, stride, c.misaligned, 1, true);
  EXPECT_EQ(m.count, 0) << "worst error / tolerance: " << m.worst;
}

INSTANTIATE_TEST_SUITE_P(Plugin, GoodPluginFwd,
                         testing::Values(FwdCase{DType::f32, DType::f32, 19, 1, 0, false},
                                         FwdCase{DType::f32, DType::f32, 19, 3, 2, true},
                                         FwdCase{DType::f32, DType::f32, 99, 127, 0, true},
                                         FwdCase{DType::f32, DType::f32, 19, 4097, 7, false},
                                         FwdCase{DType::f16, DType::f16, 19, 500, 3, true},
                                         FwdCase{DType::bf16, DType::bf16, 19, 4097, 0, true},
                                         FwdCase{DType::bf16, DType::f32, 7, 111, 1, false}),
                         fwd_case_name);

TEST(Plugin, AddMatchesFp64) {
  RB_REQUIRE_CUDA_DEVICE();
  // bf16 x with an fp32 residual stream, strided and misaligned.
  const std::int64_t M = 19, H = 127, stride = 131;
  Tensor<__nv_bfloat16> x(M, H, stride, 1), y(M, H, stride, 1);
  Tensor<float> r(M, H, stride, 1), s(M, H, stride, 1);
  Tensor<__nv_bfloat16> w(1, H, H, 1);
  fill(x, 1, 1);
  fill(r, 1, 2);
  fill(w, 1, 3);
  RB_CUDA_OK(x.upload());
  RB_CUDA_OK(r.upload());
  RB_CUDA_OK(w.upload());
  DeviceMem rrms(M * sizeof(float));

  Problem p = problem_for(Op::add, DType::bf16, DType::bf16, M, H, stride, true);
  p.r = DType::f32;
  const auto plan = kernel("plugin:example-naive").prepare(p, "");
  AddArgs a;
  a.x = x.dev();
  a.r = r.dev();
  a.w = w.dev();
  a.y = y.dev();
  a.s = s.dev();
  a.rrms = static_cast<float*>(rrms.get());
  a.M = M;
  a.H = H;
  a.x_stride = a.r_stride = a.y_stride = a.s_stride = stride;
  a.eps = 1e-6f;
  a.xdtype = a.wdtype = DType::bf16;
  a.rdtype = DType::f32;
  RB_CUDA_OK(plan->launch(a, nullptr));
  RB_CUDA_OK(cudaDeviceSynchronize());
  RB_CUDA_OK(y.download());
  RB_CUDA_OK(s.download());

  Mismatch my, ms;
  for (std::int64_t i = 0; i < M; ++i) {
    double sq = 0;
    for (std::int64_t c = 0; c < H; ++c) sq += std::pow(x.value(i, c) + r.value(i, c), 2);
    const double rr = 1 / std::sqrt(sq / H + 1e-6);
    for (std::int64_t c = 0; c < H; ++c) {
      const double sum = x.value(i, c) + r.value(i, c);
      compare(s.value(i, c), sum, 1e-7, ms);
      compare(y.value(i, c), sum * rr * w.value(0, c), 1e-2, my);
    }
  }
  EXPECT_EQ(ms.count, 0) << "s: worst error / tolerance " << ms.worst;
  EXPECT_EQ(my.count, 0) << "y: worst error / tolerance " << my.worst;
}

// Runs the example's bwd or add-bwd (fp32, strided, misaligned) and checks dx, dw against
// fp64. Returns dw's bits, for the repeatability check.
std::vector<float> run_bwd_checked(Op op, std::int64_t M, std::int64_t H, std::int64_t stride) {
  Tensor<float> x(M, H, stride, 1), dy(M, H, stride, 1), dx(M, H, stride, 1), ds(M, H, stride, 1);
  Tensor<float> w(1, H, H, 1), dw(1, H, H, 1);
  fill(x, 1, 11);
  fill(dy, 1, 12);
  fill(w, 1, 13);
  fill(ds, 1, 14);
  std::vector<float> rrms(static_cast<std::size_t>(M));
  for (std::int64_t r = 0; r < M; ++r) {
    double sq = 0;
    for (std::int64_t c = 0; c < H; ++c) sq += x.value(r, c) * x.value(r, c);
    rrms[static_cast<std::size_t>(r)] = static_cast<float>(1 / std::sqrt(sq / H + 1e-5));
  }
  DeviceMem rrms_dev(rrms.size() * sizeof(float));
  EXPECT_EQ(x.upload(), cudaSuccess);
  EXPECT_EQ(dy.upload(), cudaSuccess);
  EXPECT_EQ(w.upload(), cudaSuccess);
  EXPECT_EQ(ds.upload(), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(rrms_dev.get(), rrms.data(), rrms.size() * sizeof(float), cudaMemcpyHostToDevice),
            cudaSuccess);

  const auto plan =
      kernel("plugin:example-naive").prepare(problem_for(op, DType::f32, DType::f32, M, H, stride, true), "");
  DeviceMem ws(plan->workspace_bytes());
  BwdArgs a;
  a.x = x.dev();
  a.w = w.dev();
  a.dy = dy.dev();
  a.rrms = static_cast<const float*>(rrms_dev.get());
  a.dx = dx.dev();
  a.dw = dw.dev();
  a.M = M;
  a.H = H;
  a.x_stride = a.dy_stride = a.dx_stride = a.ds_stride = stride;
  if (op == Op::add_bwd) a.ds_out = ds.dev();

  // Without its workspace the plugin refuses; its error comes back through the plan.
  EXPECT_EQ(plan->launch(a, nullptr), cudaErrorInvalidValue);

  a.workspace = ws.get();
  a.workspace_bytes = plan->workspace_bytes();
  EXPECT_EQ(plan->launch(a, nullptr), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(dx.download(), cudaSuccess);
  EXPECT_EQ(dw.download(), cudaSuccess);

  Mismatch mdx, mdw;
  std::vector<double> dw_ref(static_cast<std::size_t>(H), 0.0);
  for (std::int64_t r = 0; r < M; ++r) {
    const double rr = rrms[static_cast<std::size_t>(r)];
    double gx = 0;
    for (std::int64_t c = 0; c < H; ++c) gx += dy.value(r, c) * w.value(0, c) * x.value(r, c);
    for (std::int64_t c = 0; c < H; ++c) {
      const double ref = rr * dy.value(r, c) * w.value(0, c) - x.value(r, c) * rr * rr * rr / H * gx +
                         (op == Op::add_bwd ? ds.value(r, c) : 0.0);
      compare(dx.value(r, c), ref, 1e-4, mdx);
      dw_ref[static_cast<std::size_t>(c)] += dy.value(r, c) * x.value(r, c) * rr;
    }
  }
  for (std::int64_t c = 0; c < H; ++c)
    compare(dw.value(0, c), dw_ref[static_cast<std::size_t>(c)], 1e-4, mdw);
  EXPECT_EQ(mdx.count, 0) << "dx: worst error / tolerance " << mdx.worst;
  EXPECT_EQ(mdw.count, 0) << "dw: worst error / tolerance " << mdw.worst;
  return dw.host;
}

TEST(Plugin, BwdMatchesFp64AndDwIsRepeatable) {
  RB_REQUIRE_CUDA_DEVICE();
  const std::vector<float> first = run_bwd_checked(Op::bwd, 989, 500, 503);
  const std::vector<float> second = run_bwd_checked(Op::bwd, 989, 500, 503);
  ASSERT_EQ(first.size(), second.size());
  EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)), 0)
      << "dw differs bitwise";
}

TEST(Plugin, AddBwdMatchesFp64) {
  RB_REQUIRE_CUDA_DEVICE();
  run_bwd_checked(Op::add_bwd, 19, 4097, 4100);
  run_bwd_checked(Op::add_bwd, 3, 1, 1);
}

TEST(Plugin, RunsOnTheToolsStreamAndInItsGraphs) {
  RB_REQUIRE_CUDA_DEVICE();
  // A non-blocking stream of the test's runtime: the plugin's runtime launches on it as-is.
  cudaStream_t s = nullptr;
  RB_CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const Mismatch on_stream = run_fwd<float, float>("plugin:example-naive", 33, 257, 260, false, 1, false, s);
  EXPECT_EQ(on_stream.count, 0) << "worst error / tolerance: " << on_stream.worst;

  // Captured into a graph on that stream, replayed.
  const std::int64_t M = 4, H = 64;
  Tensor<float> x(M, H, H, 0), y(M, H, H, 0), w(1, H, H, 0);
  fill(x, 1, 5);
  fill(w, 1, 6);
  RB_CUDA_OK(x.upload());
  RB_CUDA_OK(w.upload());
  RB_CUDA_OK(cudaMemset(y.dev(), 0, y.host.size() * sizeof(float)));
  RB_CUDA_OK(legacy_stream_done());  // the stream below is non-blocking
  const auto plan = kernel("plugin:example-naive")
                        .prepare(problem_for(Op::fwd, DType::f32, DType::f32, M, H, H, false), "");
  FwdArgs a;
  a.x = x.dev();
  a.w = w.dev();
  a.y = y.dev();
  a.M = M;
  a.H = a.x_stride = a.y_stride = H;
  RB_CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  const cudaError_t launched = plan->launch(a, s);
  cudaGraph_t graph = nullptr;
  RB_CUDA_OK(cudaStreamEndCapture(s, &graph));
  RB_CUDA_OK(launched);
  std::size_t nodes = 0;
  RB_CUDA_OK(cudaGraphGetNodes(graph, nullptr, &nodes));
  EXPECT_EQ(nodes, 1u);
  cudaGraphExec_t exec = nullptr;
  RB_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  RB_CUDA_OK(cudaGraphLaunch(exec, s));
  RB_CUDA_OK(cudaStreamSynchronize(s));
  RB_CUDA_OK(y.download());
  Mismatch m;
  for (std::int64_t r = 0; r < M; ++r) {
    double sq = 0;
    for (std::int64_t c = 0; c < H; ++c) sq += x.value(r, c) * x.value(r, c);
    const double rr = 1 / std::sqrt(sq / H + static_cast<double>(a.eps));
    for (std::int64_t c = 0; c < H; ++c) compare(y.value(r, c), x.value(r, c) * rr * w.value(0, c), 1e-5, m);
  }
  EXPECT_EQ(m.count, 0) << "graph replay: worst error / tolerance " << m.worst;
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
}

TEST(Plugin, WrongPluginIsCaught) {
  RB_REQUIRE_CUDA_DEVICE();
  // eps outside the sqrt: invisible at unit scale, caught when mean(x^2) is near eps and on
  // an all-zero row (the sweep's `tiny` and `zero-row` inputs).
  const Mismatch unit = run_fwd<float, float>("plugin:example-eps-outside", 19, 127, 127, false, 1, false);
  EXPECT_LT(unit.worst, 10.0) << "eps-outside at unit scale: not where it shows";
  const Mismatch tiny = run_fwd<float, float>("plugin:example-eps-outside", 19, 127, 127, false, 1e-3, false);
  EXPECT_GT(tiny.count, 0);
  const Mismatch tiny_bf16 =
      run_fwd<__nv_bfloat16, __nv_bfloat16>("plugin:example-eps-outside", 19, 127, 127, false, 1e-3, false);
  EXPECT_GT(tiny_bf16.count, 0);
  const Mismatch zero_row = run_fwd<float, float>("plugin:example-eps-outside", 3, 64, 64, false, 1, true);
  EXPECT_GT(zero_row.count, 0);  // y is 0 either way; the saved rrms is not
  // Weight with a row offset: wrong on every row but the first.
  const Mismatch by_row = run_fwd<float, float>("plugin:example-weight-by-row", 19, 127, 130, true, 1, false);
  EXPECT_GT(by_row.count, 0);
  const Mismatch by_row_f16 =
      run_fwd<__half, __half>("plugin:example-weight-by-row", 2, 4097, 4097, false, 1, false);
  EXPECT_GT(by_row_f16.count, 0);
}

// Through the harness, as `rmsnorm-bench --plugin` runs them: the correct plugin passes the
// validation sweep of every op it implements (every dtype combo, awkward H, every
// distribution and layout); each wrong kernel fails some case of it and errors none.
std::vector<Record> validation_records(const std::string& kernel_name, std::vector<Op> ops) {
  Sweep s = validation_sweep({kernel_name});
  s.ops = std::move(ops);
  RunConfig cfg;
  cfg.time = false;
  Runner runner(open_device(0), cfg);
  std::vector<Record> out;
  runner.run(expand(s), [&](const Record& r) { out.push_back(r); });
  return out;
}

TEST(PluginSweep, CorrectPluginPassesTheValidationSweep) {
  RB_REQUIRE_CUDA_DEVICE();
  const KernelInfo& k = kernel("plugin:example-naive");
  for (Op op : k.ops) {
    const std::vector<Record> recs = validation_records(k.name, {op});
    int passed = 0, bad = 0;
    for (const Record& r : recs) {
      if (r.status == Status::pass) {
        ++passed;
        EXPECT_EQ(r.provider, "plugin");
        continue;
      }
      if (++bad <= 10) ADD_FAILURE() << r.op << " " << case_label(r) << ": " << status_name(r.status) << " " << r.reason;
    }
    EXPECT_EQ(bad, 0);
    EXPECT_EQ(passed, static_cast<int>(recs.size()));
    std::cout << "plugin:example-naive " << op_name(op) << ": " << passed << " of " << recs.size() << " passed\n";
  }
}

TEST(PluginSweep, WrongPluginIsCaughtByTheValidationSweep) {
  RB_REQUIRE_CUDA_DEVICE();
  for (const char* name : {"plugin:example-eps-outside", "plugin:example-weight-by-row"}) {
    const KernelInfo& k = kernel(name);
    const std::vector<Record> recs = validation_records(k.name, k.ops);
    int failed = 0;
    for (const Record& r : recs) {
      EXPECT_NE(r.status, Status::error) << case_label(r) << ": " << r.reason;
      failed += r.status == Status::fail ? 1 : 0;
    }
    EXPECT_GT(failed, 0) << name << " slipped through " << recs.size() << " cases";
    std::cout << "PLUGIN MUTANT " << name << ": caught by " << failed << " of " << recs.size() << " cases\n";
  }
}

}  // namespace
}  // namespace rb

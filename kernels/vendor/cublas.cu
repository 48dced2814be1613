// cublas: RMSNorm composed from cuBLAS, whose row reductions are cuBLAS's, with fp32
// compute. What it is for: a second opinion on the reduction. cuBLAS sums in its own
// blocking and order, owing nothing to our kernels, so where it and a built-in strategy
// disagree beyond rounding, one of the two reductions is wrong. It is not meant to be fast.
//   fwd      ss = x_r . x_r for every row by one cublasGemmStridedBatchedEx (per row a 1 x H
//            by H x 1 product, batch stride = the row stride; A, B in x's dtype, C fp32,
//            CUBLAS_COMPUTE_32F, no TF32), then one scaling kernel of ours: rrms =
//            rsqrt(ss / H + eps), y = x * rrms * w rounded once, rrms saved. Reads x twice:
//            about 1.5x a copy's bytes. The batched GEMM beats the batched GEMVs that say the
//            same thing (cublasTSS/SgemvStridedBatched) on the H200: bf16 M=16384 H=4096 152
//            vs 269 us, H=8192 291 vs 2489 us (cuBLAS 13.1). Measured end to end: bf16
//            M=16384 H=4096 241 us, ~26% of copy; launch-bound ~20 us at M=1.
//   bwd, add-bwd  P = dy * x (fp32, M x H, in the workspace) by an elementwise kernel; then
//            c = P w (c_r = sum_j g_j x_j with g = dy * w) and dw = P^T rrms by two
//            cublasSgemv; then dx = rrms * g - x * (rrms^3 / H) * c (+ ds_out) by a kernel.
//            About 3.7x the op's fewest bytes in bf16 (P written once, read twice): bf16
//            M=16384 H=4096 715 us, ~13% of copy counted on the op's fewest bytes.
//   add      not implemented: cuBLAS would square the stored s, rounded to r's dtype, where
//            the op squares the fp32 sum (or it would need s in fp32 as another M x H).
// Any H >= 1 up to INT_MAX (cuBLAS takes int dimensions), M <= INT_MAX, any row strides,
// any base alignment (cuBLAS picks its kernels by alignment; the scaling kernel peels each
// row to a 16-byte boundary, bwd kernels are scalar). Workspace: cublas_plan.cuh.
// Numerics: fp32 accumulation in cuBLAS's order, eps inside the sqrt, w(H) by column, no
// bias, rrms = 1/rms saved (fwd) and read, never recomputed (bwd). dw is deterministic by
// cuBLAS's reproducibility rule (same toolkit, architecture and SM count, atomics not
// allowed, which is the default, and a fixed workspace: ours).
#include <cublas_v2.h>
#include <library_types.h>

#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "kernels/common.cuh"
#include "kernels/vendor/cublas_plan.cuh"
#include "kernels/vendor/vendor.h"

namespace rb::vendor {
namespace cublas {
namespace {

constexpr int kThreads = 256;
constexpr unsigned kMaxGridY = 65535;
constexpr std::size_t kAlign = 256;  // cublasSetWorkspace needs 256-byte alignment

thread_local std::string g_last_error;

// ---- errors --------------------------------------------------------------------------------

std::string status_text(cublasStatus_t st) {
  return std::string(cublasGetStatusName(st)) + " (" + cublasGetStatusString(st) + ")";
}

cudaError_t to_cuda_error(cublasStatus_t st) {
  switch (st) {
    case CUBLAS_STATUS_SUCCESS:
      return cudaSuccess;
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return cudaErrorInitializationError;
    case CUBLAS_STATUS_ALLOC_FAILED:
      return cudaErrorMemoryAllocation;
    case CUBLAS_STATUS_INVALID_VALUE:
      return cudaErrorInvalidValue;
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return cudaErrorNoKernelImageForDevice;
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return cudaErrorLaunchFailure;
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return cudaErrorNotSupported;
    default:  // MAPPING_ERROR, INTERNAL_ERROR, LICENSE_ERROR
      return cudaErrorUnknown;
  }
}

// A launch's failure: remembered for last_error(), returned as a cudaError_t.
cudaError_t failed(cudaError_t e, const std::string& what) {
  g_last_error = what;
  return e;
}
cudaError_t failed(cublasStatus_t st, const char* call) {
  return failed(to_cuda_error(st), std::string("cuBLAS: ") + call + ": " + status_text(st));
}

// In a launch: returns the mapped error of a failing cuBLAS call.
#define RB_CUBLAS_TRY(call)                                                   \
  do {                                                                        \
    const cublasStatus_t rb_st_ = (call);                                     \
    if (rb_st_ != CUBLAS_STATUS_SUCCESS) return failed(rb_st_, #call);        \
  } while (0)

// In a launch: returns a failing CUDA call's error (after our own kernels: cudaGetLastError).
#define RB_CUDA_TRY(call)                                                                     \
  do {                                                                                        \
    const cudaError_t rb_err_ = (call);                                                       \
    if (rb_err_ != cudaSuccess)                                                               \
      return failed(rb_err_, std::string("CUDA: ") + #call + ": " + cudaGetErrorString(rb_err_)); \
  } while (0)

// In prepare: a cuBLAS refusal is a skip with cuBLAS's own message.
void skip_unless_ok(cublasStatus_t st, const char* call) {
  if (st != CUBLAS_STATUS_SUCCESS) throw Unsupported(std::string("cuBLAS: ") + call + ": " + status_text(st));
}

// In prepare: a CUDA failure is an error, not a skip.
void throw_unless_ok(cudaError_t e, const char* call) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("cublas prepare: ") + call + ": " + cudaGetErrorName(e) + " (" +
                             cudaGetErrorString(e) + ")");
}

// ---- sizes ---------------------------------------------------------------------------------

constexpr std::size_t kNoFit = SIZE_MAX;

std::size_t align_up(std::size_t n) { return n > kNoFit - kAlign ? kNoFit : (n + kAlign - 1) / kAlign * kAlign; }

// n floats, 256-byte aligned; kNoFit on overflow.
std::size_t floats(std::int64_t n) {
  if (n < 0 || static_cast<std::uint64_t>(n) > kNoFit / sizeof(float)) return kNoFit;
  return align_up(static_cast<std::size_t>(n) * sizeof(float));
}

std::size_t add_sizes(std::initializer_list<std::size_t> parts) {
  std::size_t total = 0;
  for (std::size_t p : parts) {
    if (p == kNoFit || total > kNoFit - p) return kNoFit;
    total += p;
  }
  return total;
}

std::int64_t padded_row(std::int64_t H) { return (H + kRowPad - 1) / kRowPad * kRowPad; }

// The backward's workspace, part by part, in order.
struct BwdLayout {
  std::int64_t ldP = 0;
  std::size_t P = 0, w32 = 0, c = 0, dw32 = 0;  // bytes of each part
  explicit BwdLayout(const Problem& p) : ldP(padded_row(p.H)) {
    const bool fits = p.M == 0 || ldP <= static_cast<std::int64_t>(kNoFit / sizeof(float)) / p.M;
    P = fits ? floats(p.M * ldP) : kNoFit;
    w32 = floats(p.H);
    c = floats(p.M);
    dw32 = floats(p.H);
  }
  std::size_t total() const { return add_sizes({kLibraryWorkspaceBytes, P, w32, c, dw32}); }
};

std::string mib(std::size_t bytes) {
  return bytes == kNoFit ? std::string("more than SIZE_MAX bytes") : std::to_string(bytes >> 20) + " MiB";
}

// ---- per-device cuBLAS state ---------------------------------------------------------------

// One handle per device, created by the first prepare on it and kept for the process's
// life: destroying it at exit may run after the CUDA context is gone. Every use of the
// handle (stream, workspace, calls) happens under `mutex`, so plans on several threads may
// share it. `probed` caches, per x dtype, the forward's trial call (nullopt: accepted).
struct DeviceState {
  int device = 0;
  cublasHandle_t handle = nullptr;
  std::mutex mutex;
  std::map<DType, std::optional<std::string>> probed;
};

DeviceState& device_state() {
  static std::mutex registry_mutex;
  static auto* states = new std::map<int, std::unique_ptr<DeviceState>>();  // never freed: see above
  int dev = 0;
  throw_unless_ok(cudaGetDevice(&dev), "cudaGetDevice");
  const std::lock_guard<std::mutex> lock(registry_mutex);
  std::unique_ptr<DeviceState>& s = (*states)[dev];
  if (!s) {
    auto fresh = std::make_unique<DeviceState>();
    fresh->device = dev;
    skip_unless_ok(cublasCreate(&fresh->handle), "cublasCreate");
    // Plain fp32 arithmetic: no TF32, no reduced-precision reductions.
    const cublasStatus_t st = cublasSetMathMode(
        fresh->handle,
        static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION));
    if (st != CUBLAS_STATUS_SUCCESS) {
      cublasDestroy(fresh->handle);
      skip_unless_ok(st, "cublasSetMathMode");
    }
    s = std::move(fresh);
  }
  return *s;
}

cudaDataType cuda_type(DType t) {
  switch (t) {
    case DType::f16:
      return CUDA_R_16F;
    case DType::bf16:
      return CUDA_R_16BF;
    case DType::e4m3:
      return CUDA_R_8F_E4M3;
    case DType::e5m2:
      return CUDA_R_8F_E5M2;
    case DType::f32:
      break;
  }
  return CUDA_R_32F;
}

// The forward's batched dot: sums[r] = x_r . x_r (fp32) for M rows of H at the given stride.
cublasStatus_t batched_sumsq(cublasHandle_t h, const void* x, DType t, std::int64_t M, std::int64_t H,
                             std::int64_t stride, float* sums) {
  const float one = 1.f, zero = 0.f;
  const int k = static_cast<int>(H);
  // Column-major: op(A) = A^T with A the H x 1 row (lda = H), B the same H x 1 row; C is 1 x 1
  // and the batches of C are consecutive floats.
  return cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 1, 1, k, &one, x, cuda_type(t), k,
                                    static_cast<long long>(stride), x, cuda_type(t), k,
                                    static_cast<long long>(stride), &zero, sums, CUDA_R_32F, 1, 1LL,
                                    static_cast<int>(M), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

// Whether cuBLAS runs the forward's call for x dtype t on this device: a tiny batched dot
// on zeroed scratch, once per (device, dtype). A refusal is a skip with cuBLAS's message.
void probe_forward(DeviceState& d, DType t) {
  const std::lock_guard<std::mutex> lock(d.mutex);
  auto it = d.probed.find(t);
  if (it == d.probed.end()) {
    constexpr std::int64_t kRows = 2, kCols = 8;
    cudaStream_t s = nullptr;
    void* buf = nullptr;
    throw_unless_ok(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    cudaError_t e = cudaMalloc(&buf, kRows * kCols * sizeof(float) + kAlign);
    cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
    const char* what = "";
    if (e == cudaSuccess) e = cudaMemsetAsync(buf, 0, kRows * kCols * sizeof(float) + kAlign, s);
    if (e == cudaSuccess) {
      float* sums = reinterpret_cast<float*>(static_cast<char*>(buf) + kRows * kCols * sizeof(float));
      what = "cublasSetStream";
      st = cublasSetStream(d.handle, s);
      if (st == CUBLAS_STATUS_SUCCESS) {
        what = "cublasGemmStridedBatchedEx";
        st = batched_sumsq(d.handle, buf, t, kRows, kCols, kCols, sums);
      }
      e = cudaStreamSynchronize(s);
    }
    const cudaError_t free_err = buf ? cudaFree(buf) : cudaSuccess;
    const cudaError_t destroy_err = cudaStreamDestroy(s);
    throw_unless_ok(e, "forward probe");
    throw_unless_ok(free_err, "cudaFree");
    throw_unless_ok(destroy_err, "cudaStreamDestroy");
    std::optional<std::string> refusal;
    if (st != CUBLAS_STATUS_SUCCESS)
      refusal = std::string("cuBLAS: ") + what + " (" + std::string(dtype_name(t)) + "): " + status_text(st);
    it = d.probed.emplace(t, refusal).first;
  }
  if (it->second) throw Unsupported(*it->second);
}

// Binds the handle to stream s and to the library workspace at the front of `workspace`.
cudaError_t bind(cublasHandle_t h, cudaStream_t s, void* workspace) {
  RB_CUBLAS_TRY(cublasSetStream(h, s));
  RB_CUBLAS_TRY(cublasSetWorkspace(h, workspace, kLibraryWorkspaceBytes));
  return cudaSuccess;
}

dim3 row_grid(std::int64_t blocks_per_row, std::int64_t M) {
  return dim3(static_cast<unsigned>(blocks_per_row),
              static_cast<unsigned>(M < static_cast<std::int64_t>(kMaxGridY) ? M : kMaxGridY));
}

// ---- kernels -------------------------------------------------------------------------------
using kern::edge_normalize;
using kern::from_f32;
using kern::head_elems;
using kern::kVec;
using kern::to_f32;

// The forward's scaling: rrms = rsqrt(ss / H + eps); y = x * rrms * w. Rows in grid y (a
// stride loop past 65535); in each row a thread per 16-byte vector of the body from the
// row's first 16-byte boundary, and the scalar head and tail by the row's first block.
template <class T, class W>
__global__ void __launch_bounds__(kThreads) scale_kernel(FwdArgs a, const float* __restrict__ sums) {
  constexpr int V = kVec<T>;
  const std::int64_t H = a.H;
  const W* w = static_cast<const W*>(a.w);
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (std::int64_t row = blockIdx.y; row < a.M; row += gridDim.y) {
    const T* x = static_cast<const T*>(a.x) + row * a.x_stride;
    T* y = static_cast<T*>(a.y) + row * a.y_stride;
    const float r = rsqrtf(sums[row] / static_cast<float>(H) + a.eps);
    if (a.rrms != nullptr && blockIdx.x == 0 && threadIdx.x == 0) a.rrms[row] = r;
    const std::int64_t head = head_elems(x, H);
    const std::int64_t nvec = (H - head) / V;
    if (i < nvec) {
      float f[V], wf[V];
      kern::unpack<T>(kern::load_stream(x + head + i * V), f);
      kern::load_weights_any<W, V>(w + head + i * V, w, w + H, wf);
#pragma unroll
      for (int k = 0; k < V; ++k) f[k] = f[k] * r * wf[k];
      kern::store_vec<T>(y + head + i * V, kern::pack<T>(f));
    }
    if (blockIdx.x == 0) edge_normalize(x, w, y, head, head + nvec * V, H, r, threadIdx.x, blockDim.x);
  }
}

// The backward's product: P[r, j] = dy[r, j] * x[r, j] in fp32 (exact for 16-bit inputs),
// and w32 = w from the blocks of grid row 0. A thread per column, rows in grid y.
template <class X, class G, class W>
__global__ void __launch_bounds__(kThreads)
    product_kernel(BwdArgs a, float* __restrict__ P, std::int64_t ldP, float* __restrict__ w32) {
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= a.H) return;
  if (blockIdx.y == 0) w32[j] = to_f32(static_cast<const W*>(a.w)[j]);
  const X* x = static_cast<const X*>(a.x);
  const G* dy = static_cast<const G*>(a.dy);
  for (std::int64_t row = blockIdx.y; row < a.M; row += gridDim.y)
    P[row * ldP + j] = to_f32(dy[row * a.dy_stride + j]) * to_f32(x[row * a.x_stride + j]);
}

// dx = rrms * g - x * (rrms^3 / H) * c (+ ds_out), g = dy * w, c = cuBLAS's row dot.
template <class X, class G, class W>
__global__ void __launch_bounds__(kThreads) dx_kernel(BwdArgs a, const float* __restrict__ c) {
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= a.H) return;
  const float wj = to_f32(static_cast<const W*>(a.w)[j]);
  for (std::int64_t row = blockIdx.y; row < a.M; row += gridDim.y) {
    const float r = a.rrms[row];
    const float corr = r * r * r / static_cast<float>(a.H) * c[row];
    const float g = to_f32(static_cast<const G*>(a.dy)[row * a.dy_stride + j]) * wj;
    float d = r * g - to_f32(static_cast<const X*>(a.x)[row * a.x_stride + j]) * corr;
    if (a.ds_out != nullptr) d += to_f32(static_cast<const X*>(a.ds_out)[row * a.ds_stride + j]);
    static_cast<X*>(a.dx)[row * a.dx_stride + j] = from_f32<X>(d);
  }
}

template <class W>
__global__ void __launch_bounds__(kThreads) round_dw_kernel(const float* __restrict__ dw32, std::int64_t H, W* dw) {
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j < H) dw[j] = from_f32<W>(dw32[j]);
}

// ---- plans ---------------------------------------------------------------------------------

class CublasPlan : public Plan {
 public:
  CublasPlan(const Problem& p, DeviceState& d, std::size_t ws) : p_(p), d_(d), ws_(ws) {}
  std::size_t workspace_bytes() const override { return ws_; }

 protected:
  // The launch-time checks every plan shares: this plan's device, a large enough workspace.
  cudaError_t check_launch(const void* workspace, std::size_t bytes) const {
    int dev = -1;
    RB_CUDA_TRY(cudaGetDevice(&dev));
    if (dev != d_.device)
      return failed(cudaErrorInvalidDevice, "cublas: plan prepared on device " + std::to_string(d_.device) +
                                                " launched on device " + std::to_string(dev));
    if (workspace == nullptr || bytes < ws_ ||
        reinterpret_cast<std::uintptr_t>(workspace) % kAlign != 0)
      return failed(cudaErrorInvalidValue, "cublas: needs a 256-byte aligned workspace of " +
                                               std::to_string(ws_) + " bytes, got " + std::to_string(bytes));
    return cudaSuccess;
  }
  bool same_shape(std::int64_t M, std::int64_t H) const { return M == p_.M && H == p_.H; }

  Problem p_;
  DeviceState& d_;
  std::size_t ws_;
};

class FwdPlan final : public CublasPlan {
 public:
  using CublasPlan::CublasPlan;
  std::string picked() const override { return "cublas:gemm-batched-dot"; }

  cudaError_t launch(const LaunchArgs& args, cudaStream_t s) override {
    const FwdArgs* a = std::get_if<FwdArgs>(&args);
    if (a == nullptr || !same_shape(a->M, a->H) || a->xdtype != p_.x || a->wdtype != p_.w)
      return failed(cudaErrorInvalidValue, "cublas fwd: launch arguments do not match the prepared problem");
    if (a->M == 0) return cudaSuccess;
    if (const cudaError_t e = check_launch(a->workspace, a->workspace_bytes)) return e;
    float* sums = reinterpret_cast<float*>(static_cast<char*>(a->workspace) + kLibraryWorkspaceBytes);
    {
      const std::lock_guard<std::mutex> lock(d_.mutex);
      if (const cudaError_t e = bind(d_.handle, s, a->workspace)) return e;
      RB_CUBLAS_TRY(batched_sumsq(d_.handle, a->x, a->xdtype, a->M, a->H, a->x_stride, sums));
    }
    const cudaError_t e = kern::dispatch_fwd_dtypes(a->xdtype, a->wdtype, [&](auto t, auto wt) -> cudaError_t {
      using T = decltype(t);
      // nvec <= H / V for every head, so H / V + 1 vectors cover every row's body.
      const std::int64_t vecs = a->H / kVec<T> + 1;
      scale_kernel<T, decltype(wt)><<<row_grid((vecs + kThreads - 1) / kThreads, a->M), kThreads, 0, s>>>(*a, sums);
      return cudaGetLastError();
    });
    if (e != cudaSuccess) return failed(e, std::string("cublas fwd scaling kernel: ") + cudaGetErrorString(e));
    return cudaSuccess;
  }
};

class BwdPlan final : public CublasPlan {
 public:
  BwdPlan(const Problem& p, DeviceState& d) : CublasPlan(p, d, BwdLayout(p).total()), layout_(p) {}
  std::string picked() const override { return "cublas:sgemv"; }

  cudaError_t launch(const LaunchArgs& args, cudaStream_t s) override {
    const BwdArgs* a = std::get_if<BwdArgs>(&args);
    if (a == nullptr || !same_shape(a->M, a->H) || a->wdtype != p_.w)
      return failed(cudaErrorInvalidValue, "cublas bwd: launch arguments do not match the prepared problem");
    if (a->M == 0) {  // dw = 0: zero bits are +0 in every dtype
      RB_CUDA_TRY(cudaMemsetAsync(a->dw, 0, static_cast<std::size_t>(a->H) * dtype_size(a->wdtype), s));
      return cudaSuccess;
    }
    if (const cudaError_t e = check_launch(a->workspace, a->workspace_bytes)) return e;
    char* base = static_cast<char*>(a->workspace) + kLibraryWorkspaceBytes;
    float* P = reinterpret_cast<float*>(base);
    float* w32 = reinterpret_cast<float*>(base + layout_.P);
    float* c = reinterpret_cast<float*>(base + layout_.P + layout_.w32);
    float* dw32 = reinterpret_cast<float*>(base + layout_.P + layout_.w32 + layout_.c);
    const std::int64_t ldP = layout_.ldP;
    const dim3 grid = row_grid((a->H + kThreads - 1) / kThreads, a->M);
    const int H = static_cast<int>(a->H), M = static_cast<int>(a->M), ld = static_cast<int>(ldP);
    const float one = 1.f, zero = 0.f;

    return kern::dispatch_bwd_dtypes(a->xdtype, a->dydtype, a->wdtype, [&](auto xt, auto gt, auto wt) -> cudaError_t {
      using X = decltype(xt);
      using G = decltype(gt);
      using W = decltype(wt);
      constexpr bool kDwInPlace = std::is_same_v<W, float>;
      float* dw_out = kDwInPlace ? static_cast<float*>(a->dw) : dw32;
      product_kernel<X, G, W><<<grid, kThreads, 0, s>>>(*a, P, ldP, w32);
      RB_CUDA_TRY(cudaGetLastError());
      {
        // P, row-major M x ldP, is column-major H x M with lda = ldP: c = P^T w32 over each
        // column, dw = P rrms over the rows.
        const std::lock_guard<std::mutex> lock(d_.mutex);
        if (const cudaError_t e = bind(d_.handle, s, a->workspace)) return e;
        RB_CUBLAS_TRY(cublasSgemv(d_.handle, CUBLAS_OP_T, H, M, &one, P, ld, w32, 1, &zero, c, 1));
        RB_CUBLAS_TRY(cublasSgemv(d_.handle, CUBLAS_OP_N, H, M, &one, P, ld, a->rrms, 1, &zero, dw_out, 1));
      }
      dx_kernel<X, G, W><<<grid, kThreads, 0, s>>>(*a, c);
      RB_CUDA_TRY(cudaGetLastError());
      if constexpr (!kDwInPlace) {
        round_dw_kernel<W><<<static_cast<unsigned>((a->H + kThreads - 1) / kThreads), kThreads, 0, s>>>(
            dw32, a->H, static_cast<W*>(a->dw));
        RB_CUDA_TRY(cudaGetLastError());
      }
      return cudaSuccess;
    });
  }

 private:
  BwdLayout layout_;
};

std::string library_version() {
  int v[3] = {CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR, CUBLAS_VER_PATCH};  // the headers', if the query fails
  const libraryPropertyType what[3] = {MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL};
  for (int i = 0; i < 3; ++i) {
    int got = 0;
    if (cublasGetProperty(what[i], &got) == CUBLAS_STATUS_SUCCESS) v[i] = got;
  }
  return std::to_string(v[0]) + "." + std::to_string(v[1]) + "." + std::to_string(v[2]);
}

std::unique_ptr<Plan> prepare(const Problem& p, const std::string& variant) {
  if (!variant.empty()) throw Unsupported("cublas has no variants (asked for '" + variant + "')");
  if (p.op == Op::add) throw Unsupported("cublas does not implement add");
  if (const auto why = supports(p)) throw Unsupported(*why);
  DeviceState& d = device_state();
  if (p.op == Op::fwd) {
    probe_forward(d, p.x);
    return std::make_unique<FwdPlan>(p, d, workspace_bytes(p));
  }
  return std::make_unique<BwdPlan>(p, d);
}

}  // namespace

std::size_t workspace_bytes(const Problem& p) {
  if (is_backward(p.op)) return BwdLayout(p).total();
  return add_sizes({kLibraryWorkspaceBytes, floats(p.M)});
}

std::optional<std::string> supports(const Problem& p) {
  const std::int64_t max_H = is_backward(p.op) ? kMaxDim - (kRowPad - 1) : kMaxDim;
  if (p.H > max_H)
    return "cublas: cuBLAS takes int dimensions; H=" + std::to_string(p.H) + " is above " + std::to_string(max_H);
  if (p.M > kMaxDim)
    return "cublas: cuBLAS takes int dimensions; M=" + std::to_string(p.M) + " is above " + std::to_string(kMaxDim);
  if (is_backward(p.op)) {
    const std::size_t need = workspace_bytes(p);
    if (need > kMaxWorkspaceBytes)
      return "cublas " + std::string(op_name(p.op)) + " materialises dy*x as an M x H fp32 matrix in its workspace: M=" +
             std::to_string(p.M) + " H=" + std::to_string(p.H) + " needs " + mib(need) + ", above the " +
             mib(kMaxWorkspaceBytes) + " cap";
  }
  return std::nullopt;
}

std::string last_error() { return g_last_error; }

}  // namespace cublas

std::vector<KernelInfo> cublas_kernels() {
  KernelInfo k;
  k.name = "cublas";
  k.provider = "cublas";
  k.version = cublas::library_version();
  k.description =
      "row sums by cuBLAS (fp32 compute: batched x.x, bwd: Sgemv over dy*x), then one scaling "
      "kernel: a second, independent accumulation order";
  k.ops = {Op::fwd, Op::bwd, Op::add_bwd};
  k.dtypes = {{DType::f32, DType::f32},
              {DType::f16, DType::f16},
              {DType::f16, DType::f32},
              {DType::bf16, DType::bf16},
              {DType::bf16, DType::f32}};
  k.min_H = 1;
  k.max_H = [](const Problem& p) {
    return is_backward(p.op) ? cublas::kMaxDim - (cublas::kRowPad - 1) : cublas::kMaxDim;
  };
  k.alignment = "any (cuBLAS picks its kernels by alignment; scaling kernel peels to 16 B)";
  k.supports = cublas::supports;
  k.prepare = cublas::prepare;
  return {std::move(k)};
}

}  // namespace rb::vendor

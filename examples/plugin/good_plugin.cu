// Example plugin "example": one correct, deliberately plain RMSNorm kernel for every op,
// written to be read, not to be fast (expect a fraction of the built-in kernels' bandwidth).
//
//   fwd / add   a block per row, scalar loads (so any base alignment and any row stride),
//               two passes over the row: sum of squares in fp32, then the scaled output.
//   bwd         dx: a block per row, the same two passes (sum of g*x, then dx).
//   add-bwd     dw: fp32 partials in the workspace, one row of partials per chunk of rows,
//               each chunk's rows summed in order, then a column sum over the chunks in order:
//               bitwise repeatable, no atomics.
//
// Numerics: fp32 accumulation; eps inside the sqrt; w of shape (H,) indexed by column only;
// any H >= 1 (every loop is masked by H); rrms = 1/sqrt(mean(x^2) + eps) saved in fp32.
// dtypes (x, w): fp32/fp32, fp16/fp16, fp16/fp32, bf16/bf16, bf16/fp32; residual stream in
// x's dtype or fp32.
//
// Build: examples/plugin/CMakeLists.txt (rb_plugin_good). Run:
//   rmsnorm-bench --plugin build/examples/plugin/librb_plugin_good.so --kernel plugin:example-naive
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "rmsnorm_bench_plugin.h"

namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

template <class T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// Sum over the block; every thread gets the result. `scratch` holds 32 floats.
__device__ float block_sum(float v, float* scratch) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();  // scratch may still be read from a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < static_cast<int>(blockDim.x / 32) ? scratch[lane] : 0.f;
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// fwd and add in one shape: add has a residual r and writes s, fwd has r = s = null.
struct NormArgs {
  const void* x;
  const void* r;
  const void* w;
  void* y;
  void* s;
  float* rrms;
  std::int64_t H, x_stride, r_stride, y_stride, s_stride;
  float eps;
};

// One block per row. R: the residual stream's type (unused by fwd).
template <class T, class W, class R>
__global__ void __launch_bounds__(kThreads) norm_kernel(NormArgs a) {
  __shared__ float scratch[32];
  const std::int64_t row = blockIdx.x;
  const T* x = static_cast<const T*>(a.x) + row * a.x_stride;
  const R* r = a.r ? static_cast<const R*>(a.r) + row * a.r_stride : nullptr;
  const W* w = static_cast<const W*>(a.w);
  T* y = static_cast<T*>(a.y) + row * a.y_stride;
  R* s = a.s ? static_cast<R*>(a.s) + row * a.s_stride : nullptr;

  // Pass 1: the row's sum of squares. add: of s = x + r in fp32, unrounded; the stored s is
  // rounded to R.
  float sq = 0.f;
  for (std::int64_t c = threadIdx.x; c < a.H; c += blockDim.x) {
    float v = to_float(x[c]);
    if (r) {
      v += to_float(r[c]);
      s[c] = from_float<R>(v);
    }
    sq += v * v;
  }
  const float rrms = 1.f / sqrtf(block_sum(sq, scratch) / static_cast<float>(a.H) + a.eps);
  if (a.rrms && threadIdx.x == 0) a.rrms[row] = rrms;

  // Pass 2: y = v * rrms * w[c], v formed again from the inputs.
  for (std::int64_t c = threadIdx.x; c < a.H; c += blockDim.x) {
    const float v = r ? to_float(x[c]) + to_float(r[c]) : to_float(x[c]);
    y[c] = from_float<T>(v * rrms * to_float(w[c]));
  }
}

// dx for bwd and add-bwd: one block per row. T: x, dx, ds_out; D: dy; W: w.
template <class T, class D, class W>
__global__ void __launch_bounds__(kThreads) dx_kernel(rb_bwd_args a) {
  __shared__ float scratch[32];
  const std::int64_t row = blockIdx.x;
  const std::int64_t H = a.H;
  const T* x = static_cast<const T*>(a.x) + row * a.x_stride;
  const D* dy = static_cast<const D*>(a.dy) + row * a.dy_stride;
  const W* w = static_cast<const W*>(a.w);
  const T* ds = a.ds_out ? static_cast<const T*>(a.ds_out) + row * a.ds_stride : nullptr;
  T* dx = static_cast<T*>(a.dx) + row * a.dx_stride;
  const float rrms = a.rrms[row];

  float gx = 0.f;
  for (std::int64_t c = threadIdx.x; c < H; c += blockDim.x)
    gx += to_float(dy[c]) * to_float(w[c]) * to_float(x[c]);
  const float k = rrms * rrms * rrms / static_cast<float>(H) * block_sum(gx, scratch);
  for (std::int64_t c = threadIdx.x; c < H; c += blockDim.x) {
    float v = rrms * to_float(dy[c]) * to_float(w[c]) - to_float(x[c]) * k;
    if (ds) v += to_float(ds[c]);
    dx[c] = from_float<T>(v);
  }
}

// Chunks of rows for dw: a fixed function of M, so the workspace size is known up front.
__host__ __device__ std::int64_t dw_chunks(std::int64_t M) { return M < 64 ? M : 64; }

// dw partials: thread = column, blockIdx.y = chunk; the chunk's rows in order.
template <class T, class D>
__global__ void __launch_bounds__(kThreads) dw_partial_kernel(rb_bwd_args a) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= a.H) return;
  const std::int64_t chunks = dw_chunks(a.M), k = blockIdx.y;
  const std::int64_t begin = a.M * k / chunks, end = a.M * (k + 1) / chunks;
  float acc = 0.f;
  for (std::int64_t r = begin; r < end; ++r)
    acc += to_float(static_cast<const D*>(a.dy)[r * a.dy_stride + c]) *
           to_float(static_cast<const T*>(a.x)[r * a.x_stride + c]) * a.rrms[r];
  static_cast<float*>(a.workspace)[k * a.H + c] = acc;
}

// dw[c] = the chunks' partials summed in chunk order.
template <class W>
__global__ void __launch_bounds__(kThreads) dw_sum_kernel(rb_bwd_args a) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= a.H) return;
  const float* partials = static_cast<const float*>(a.workspace);
  float acc = 0.f;
  for (std::int64_t k = 0; k < dw_chunks(a.M); ++k) acc += partials[k * a.H + c];
  static_cast<W*>(a.dw)[c] = from_float<W>(acc);
}

// Calls f(T{}) with T the C++ type of dtype d (a null pointer of it, as a tag).
template <class F>
int with_type(rb_dtype d, F&& f) {
  switch (d) {
    case RB_FP32:
      return f(static_cast<float*>(nullptr));
    case RB_FP16:
      return f(static_cast<__half*>(nullptr));
    case RB_BF16:
      return f(static_cast<__nv_bfloat16*>(nullptr));
  }
  return static_cast<int>(cudaErrorInvalidValue);
}

template <class P>
using Pointee = std::remove_pointer_t<P>;

unsigned column_blocks(std::int64_t H) { return static_cast<unsigned>((H + kThreads - 1) / kThreads); }

int fwd(const rb_fwd_args* a, void* stream) {
  if (a->M <= 0) return 0;
  const NormArgs n{a->x, nullptr, a->w, a->y, nullptr, a->rrms, a->H, a->x_stride, 0, a->y_stride, 0, a->eps};
  return with_type(a->xdtype, [&](auto t) {
    return with_type(a->wdtype, [&](auto w) {
      norm_kernel<Pointee<decltype(t)>, Pointee<decltype(w)>, float>
          <<<static_cast<unsigned>(a->M), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(n);
      return static_cast<int>(cudaGetLastError());
    });
  });
}

int add(const rb_add_args* a, void* stream) {
  if (a->M <= 0) return 0;
  if (a->rdtype != a->xdtype && a->rdtype != RB_FP32) return static_cast<int>(cudaErrorInvalidValue);
  const NormArgs n{a->x, a->r,        a->w,        a->y,        a->s,        a->rrms,
                   a->H, a->x_stride, a->r_stride, a->y_stride, a->s_stride, a->eps};
  return with_type(a->xdtype, [&](auto t) {
    return with_type(a->wdtype, [&](auto w) {
      return with_type(a->rdtype, [&](auto r) {
        norm_kernel<Pointee<decltype(t)>, Pointee<decltype(w)>, Pointee<decltype(r)>>
            <<<static_cast<unsigned>(a->M), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(n);
        return static_cast<int>(cudaGetLastError());
      });
    });
  });
}

size_t bwd_workspace(const rb_problem* p) {
  return (p->op == RB_OP_BWD || p->op == RB_OP_ADD_BWD)
             ? static_cast<size_t>(dw_chunks(p->M)) * static_cast<size_t>(p->H) * sizeof(float)
             : 0;
}

int bwd(const rb_bwd_args* a, void* stream) {
  if (a->M <= 0) return 0;
  const rb_problem p{RB_OP_BWD, a->M, a->H, a->x_stride, a->xdtype, a->wdtype, a->xdtype, 1};
  if (!a->workspace || a->workspace_bytes < bwd_workspace(&p)) return static_cast<int>(cudaErrorInvalidValue);
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  return with_type(a->xdtype, [&](auto t) {
    return with_type(a->dydtype, [&](auto d) {
      return with_type(a->wdtype, [&](auto w) {
        using T = Pointee<decltype(t)>;
        using D = Pointee<decltype(d)>;
        using W = Pointee<decltype(w)>;
        dx_kernel<T, D, W><<<static_cast<unsigned>(a->M), kThreads, 0, s>>>(*a);
        dw_partial_kernel<T, D>
            <<<dim3(column_blocks(a->H), static_cast<unsigned>(dw_chunks(a->M))), kThreads, 0, s>>>(*a);
        dw_sum_kernel<W><<<column_blocks(a->H), kThreads, 0, s>>>(*a);
        return static_cast<int>(cudaGetLastError());
      });
    });
  });
}

const rb_dtype_combo kCombos[] = {
    {RB_FP32, RB_FP32}, {RB_FP16, RB_FP16}, {RB_FP16, RB_FP32}, {RB_BF16, RB_BF16}, {RB_BF16, RB_FP32},
};

const rb_kernel kKernels[] = {{
    "example-naive",
    "block per row, scalar loads, two passes; dw by fp32 chunk partials in the workspace",
    RB_OP_ALL,
    kCombos,
    sizeof kCombos / sizeof kCombos[0],
    1,
    INT64_MAX,
    0,  // any base alignment: scalar accesses
    nullptr,
    bwd_workspace,
    fwd,
    add,
    bwd,
}};

const rb_plugin kPlugin = {
    RB_PLUGIN_ABI_VERSION, "example", "1.0.0", sizeof kKernels / sizeof kKernels[0], kKernels,
};

}  // namespace

extern "C" const rb_plugin* rb_plugin_entry(void) { return &kPlugin; }

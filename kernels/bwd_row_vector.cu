// row-vector backward (bwd and add-bwd): a persistent grid of P blocks (as many as are
// resident at once, at most M); block b takes rows b, b + P, b + 2P, ... in order. Each
// thread owns a FIXED set of columns for the whole launch: NCH chunks of N = kVec<dy>
// columns (8 for 16-bit dy, 4 for fp32), chunk i of thread t at column (t + i * T) * N, so
//   - its weights are loaded once per block and kept in registers (raw, in w's dtype),
//   - its dw partials (fp32, one per owned column) live in registers across all its rows,
//   - a row's x, dy (and ds_out) chunks are held in registers (raw) between the block_sum
//     of S = sum_j (dy[j] * w[j]) * x[j] and the write of dx: each input is read once,
//     with streaming 16-byte loads (2 to 3 vectors a chunk in flight a thread, all issued
//     before the first is used) and streaming 16-byte stores for dx.
// At the end each block writes its partials as row b of the workspace (P x H fp32) and the
// column sum (bwd_common.cuh) reduces them in a fixed order: dw is bitwise repeatable.
// NCH is 2 or 4, whichever keeps more blocks (rows in flight) resident per SM; the block has
// ceil(chunks / NCH) threads rounded up to whole warps, at most 512. bf16/fp16 bwd (w too) at
// H <= 8192 runs NCH = 2 at 64 registers (ptxas -v, no spills): 4 blocks of 256 threads an
// SM at H = 4096, 2 of 512 at H = 8192.
//
// Any H up to bwd_row_vector_max_H, any row strides, any base alignment. Chunk starts are
// multiples of N, so a chunk's vector alignment is its row's: a row whose bases are all
// 16-byte aligned (contiguous rows of H a multiple of 8, or of 4 in fp32) moves whole
// vectors; in a row whose base is not (odd H, odd strides, a pointer one element off) the
// misaligned tensors load and store the same owned columns element by element (more
// instructions, same bytes). Ownership cannot follow a per-row peel: the registers holding
// dw belong to fixed columns. The last chunk of a row of H not a multiple of N is partial:
// element by element, masked.
//
// Size limit (bwd_row_vector_max_H): 2048 chunks = 512 threads x 4: H = 16384 for 16-bit
// x. What limits it is registers: per owned column a thread holds x, dy, w (raw), its fp32
// dw partial and for add-bwd ds_out; at 4 chunks of 8 16-bit columns that is 116-127
// registers (no spills but 24 B for fp32 w with ds_out), within the 128 of a 512-thread
// block, one block an SM. An fp32 x (fp32 bwd, or add-bwd with an fp32 residual) doubles
// x's and ds_out's share, so its limit is half: 8192 (for 16-bit dy, at 2 chunks of 8).
// Past 8192 (16-bit) / 4096 (fp32) rows in flight per SM drop to one or two and chunked
// may be faster: auto's table is to be measured.
//
// Numerics: fp32 throughout; g = dy * w_eff rounded once (w_eff: w, or 1 + w under gemma and
// zero-centered, epilogue.cuh), S a per-thread serial sum then the block tree; dx = rrms * g
// - x * (rrms^3 / H * S) (+ ds_out) rounded once to x's dtype; dw partial += (dy * x) * rrms
// (one fma) in row order; the saved rrms is read, never recomputed.
#include "kernels/bwd_common.cuh"
#include "kernels/launchers.h"

namespace rb::kern {
namespace {

constexpr int kMaxThreads = 512;

// Registers of data a thread holds (x, dy, ds_out raw, w raw, dw fp32). Up to 40, the
// kernel fits 64 registers (2 blocks of 512 threads) without spills; past that it spills
// at 64, so it is left up to 128 (ptxas -v).
template <class X, class G, class W, int NCH, bool kDs>
constexpr int min_blocks() {
  constexpr int N = kVec<G>;
  constexpr int data = NCH * N *
                           ((kDs ? 2 : 1) * static_cast<int>(sizeof(X)) + static_cast<int>(sizeof(G)) +
                            static_cast<int>(sizeof(W))) /
                           4 +
                       NCH * N;
  return data <= 40 ? 2 : 1;
}

template <class X, class G, class W, Convention C, int NCH, bool kDs>
__global__ void __launch_bounds__(kMaxThreads, (min_blocks<X, G, W, NCH, kDs>()))
    bwd_row_vector_kernel(BwdArgs a, float* __restrict__ part) {
  constexpr int N = kVec<G>;
  constexpr int XV = kChunkVecs<X, N>, GV = kChunkVecs<G, N>, WV = kChunkVecs<W, N>;
  __shared__ float scratch[32];
  const int H = static_cast<int>(a.H);  // <= bwd_row_vector_max_H
  const float inv_H = 1.f / static_cast<float>(H);
  // Owned chunk i: columns [c0 + i * step, + N) of which valid(i) lie inside the row.
  const int c0 = static_cast<int>(threadIdx.x) * N;
  const int step = static_cast<int>(blockDim.x) * N;
  auto valid = [&](int i) {
    const int v = H - (c0 + i * step);
    return v >= N ? N : (v > 0 ? v : 0);
  };

  uint4 wr[NCH][WV];
  float dw[NCH][N];
  const W* w = static_cast<const W*>(a.w) + c0;
#pragma unroll
  for (int i = 0; i < NCH; ++i) {
    load_cols<W, N, Ld::ro>(w + i * step, valid(i), wr[i]);
#pragma unroll
    for (int k = 0; k < N; ++k) dw[i][k] = 0.f;
  }

  for (std::int64_t row = blockIdx.x; row < a.M; row += gridDim.x) {
    const X* xrow = static_cast<const X*>(a.x) + row * a.x_stride + c0;
    const G* grow = static_cast<const G*>(a.dy) + row * a.dy_stride + c0;
    uint4 xr[NCH][XV], gr[NCH][GV], dsr[kDs ? NCH : 1][XV];
#pragma unroll
    for (int i = 0; i < NCH; ++i) {
      load_cols<X, N, Ld::stream>(xrow + i * step, valid(i), xr[i]);
      load_cols<G, N, Ld::stream>(grow + i * step, valid(i), gr[i]);
    }
    if constexpr (kDs) {
      const X* dsrow = static_cast<const X*>(a.ds_out) + row * a.ds_stride + c0;
#pragma unroll
      for (int i = 0; i < NCH; ++i) load_cols<X, N, Ld::stream>(dsrow + i * step, valid(i), dsr[i]);
    }
    const float r = a.rrms[row];

    // Columns past the row's end hold zeros: they add nothing.
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < NCH; ++i) {
      float xf[N], gf[N], wf[N];
      cols_to_f32<X, N>(xr[i], xf);
      cols_to_f32<G, N>(gr[i], gf);
      weights_to_f32<C, W, N>(wr[i], wf);
#pragma unroll
      for (int k = 0; k < N; ++k) s += gf[k] * wf[k] * xf[k];
    }
    const float S = block_sum(s, scratch);
    const float corr = r * r * r * inv_H * S;
    const unsigned z = static_cast<unsigned>(row >> 62);  // 0: row < M < 2^62

    X* dxrow = static_cast<X*>(a.dx) + row * a.dx_stride + c0;
#pragma unroll
    for (int i = 0; i < NCH; ++i) {
      reconvert_after<XV>(xr[i], z);
      reconvert_after<GV>(gr[i], z);
      reconvert_after<WV>(wr[i], z);
      float xf[N], gf[N], wf[N], d[N];
      cols_to_f32<X, N>(xr[i], xf);
      cols_to_f32<G, N>(gr[i], gf);
      weights_to_f32<C, W, N>(wr[i], wf);
#pragma unroll
      for (int k = 0; k < N; ++k) {
        d[k] = fmaf(-xf[k], corr, r * (gf[k] * wf[k]));
        dw[i][k] = fmaf(gf[k] * xf[k], r, dw[i][k]);
      }
      if constexpr (kDs) {
        float df[N];
        cols_to_f32<X, N>(dsr[i], df);
#pragma unroll
        for (int k = 0; k < N; ++k) d[k] += df[k];
      }
      store_cols<X, N>(dxrow + i * step, valid(i), d);
    }
  }

  // This block's partials: row blockIdx.x of the workspace, plain stores (the column sum
  // reads them next, from L2).
  float* prow = part + static_cast<std::int64_t>(blockIdx.x) * H + c0;
#pragma unroll
  for (int i = 0; i < NCH; ++i) {
    float* p = prow + i * step;
    const int v = valid(i);
    if (v == N && aligned16(p)) {
#pragma unroll
      for (int q = 0; q < N / 4; ++q)
        reinterpret_cast<float4*>(p)[q] =
            make_float4(dw[i][4 * q], dw[i][4 * q + 1], dw[i][4 * q + 2], dw[i][4 * q + 3]);
    } else {
#pragma unroll
      for (int k = 0; k < N; ++k)
        if (k < v) p[k] = dw[i][k];
    }
  }
}

using Kernel = void (*)(BwdArgs, float*);

// The launch configuration, computed the same way for the workspace size and the launch.
struct Plan {
  Kernel kernel = nullptr;
  int threads = 0;
  std::int64_t resident = 0;  // resident blocks on the device: rows in flight
  std::int64_t P = 0;       // blocks of the persistent grid = partial rows (0 when M == 0)
};

template <class X, class G, class W, Convention C, int NCH, bool kDs>
Plan make_plan(const BwdArgs& a, std::int64_t chunks) {
  Plan plan;
  std::int64_t threads = ((chunks + NCH - 1) / NCH + 31) / 32 * 32;
  if (threads < 32) threads = 32;
  if (threads > kMaxThreads) return plan;
  plan.kernel = bwd_row_vector_kernel<X, G, W, C, NCH, kDs>;
  plan.threads = static_cast<int>(threads);
  const std::int64_t resident = resident_blocks(plan.kernel, plan.threads, 0);
  if (resident <= 0) return Plan{};
  plan.resident = resident;
  plan.P = a.M < resident ? a.M : resident;
  return plan;
}

// 2 or 4 chunks a thread: whichever keeps more rows in flight per SM (the register count
// decides: ptxas -v), 2 on a tie (more threads for the same rows). An fp32 x with 16-bit dy
// (add-bwd, fp32 residual) takes 2 only: at 4 its 32 fp32 x and ds_out values a thread spill.
template <class X, class G, class W, Convention C, bool kDs>
Plan choose_plan(const BwdArgs& a) {
  constexpr int N = kVec<G>;
  const std::int64_t chunks = (a.H + N - 1) / N;
  Plan best;
  if (chunks <= 2 * kMaxThreads) best = make_plan<X, G, W, C, 2, kDs>(a, chunks);
  if constexpr (!(sizeof(X) == 4 && sizeof(G) == 2)) {
    if (chunks <= 4 * kMaxThreads) {
      const Plan four = make_plan<X, G, W, C, 4, kDs>(a, chunks);
      if (four.kernel != nullptr && four.resident > best.resident) best = four;
    }
  }
  return best;
}

// Calls f(plan, W{}) with the configuration for a's dtypes and H (a function object, for the
// host helpers of bwd_common.cuh).
constexpr auto with_plan = [](const BwdArgs& a, auto&& f) -> cudaError_t {
  if (a.H < 1 || a.M < 0 || a.H > bwd_row_vector_max_H(a.xdtype)) return cudaErrorInvalidValue;
  return dispatch_bwd(a, [&](auto xt, auto gt, auto wt, auto c) -> cudaError_t {
    using X = decltype(xt);
    using G = decltype(gt);
    using W = decltype(wt);
    constexpr Convention C = decltype(c)::value;
    const Plan plan =
        a.ds_out != nullptr ? choose_plan<X, G, W, C, true>(a) : choose_plan<X, G, W, C, false>(a);
    if (plan.kernel == nullptr) return cudaErrorInvalidConfiguration;
    return f(plan, W{});
  });
};

}  // namespace

std::int64_t bwd_row_vector_max_H(DType x) {
  // kMaxChunks chunks of 8 columns (16-bit dy, hence 16-bit x: x is dy's dtype or fp32);
  // an fp32 x is held to half (see the header).
  return x == DType::f32 ? 8192 : 16384;
}

std::size_t bwd_row_vector_workspace_bytes(const BwdArgs& a) { return planned_workspace_bytes(a, with_plan); }

cudaError_t launch_bwd_row_vector(const BwdArgs& a, cudaStream_t s) {
  return launch_planned(a, s, with_plan, [&](const Plan& plan, float* part) {
    plan.kernel<<<static_cast<unsigned>(plan.P), plan.threads, 0, s>>>(a, part);
  });
}

}  // namespace rb::kern

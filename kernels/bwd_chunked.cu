// chunked backward (bwd and add-bwd), any H: a persistent grid, two passes over each row in
// chunks of N = kVec<dy> columns (8 for 16-bit dy, 4 for fp32), dw partials in shared memory.
//   pass 1: S = sum_j (dy[j] * w[j]) * x[j] over the whole row (or the block's slice, then
//           over the cluster: below), 2 chunks of x, dy and w in flight a thread, then
//           block_sum;
//   pass 2: re-reads x, dy, w (and ds_out) of the block's column slice (from L1/L2: the row
//           was just read), writes dx = rrms * g - x * (rrms^3 / H * S) (+ ds_out) and adds
//           dy * x * rrms into the block's fp32 partial of each column, in shared memory.
// Rows whose fp32 partials would not fit in shared memory are split into column slices of
// at most kSliceCols columns: the grid is P x slices blocks, block (b, s) takes rows b,
// b + P, ... and writes dx and keeps partials only for slice s. On sm_90+ with at most
// kMaxClusterBlocks slices, the slices of a row block run as one thread-block cluster: pass 1 reads
// only the block's own slice, and the slices' sums meet through distributed shared memory
// (cluster_sum, added in slice order: every slice gets the same S). Otherwise (more slices,
// or no clusters) every slice's block computes S over the whole row itself: that reads the
// row slices times over (from L2: the blocks of one row's slices are adjacent in the grid),
// 31.5% of copy at bf16 M=1024 H=65536 (H200, perf-notes run 32) before clusters. When
// all rows are done, block (b, s) writes its slice of partial row b of the workspace
// (P x H fp32) and the column sum (bwd_common.cuh) reduces the P partials of each column in
// a fixed order: dw is bitwise repeatable.
//
// Any H >= 1, any row strides, any base alignment: each pass peels a scalar head up to dy's
// first 16-byte boundary (of the row, or of the slice), then whole chunks, then a scalar
// tail; within a chunk, each other tensor (x, w, ds_out, dx) moves as vectors where its own
// address is 16-byte aligned and element by element otherwise. Since the peel depends on
// the row, a column's thread changes from row to row: the shared-memory partials are
// indexed by column, and the barriers of the next row's block_sum order one row's updates
// of a column before the next row's. The partial of slice column c sits at c + c / N
// (one pad word every N), so the N-column chunks of a warp's 32 threads hit 32 different
// banks whatever the peel.
//
// Numerics: fp32 throughout; g = dy * w_eff rounded once (w_eff: w, or 1 + w under gemma and
// zero-centered, epilogue.cuh), S a per-thread serial sum then the block tree; dx rounded
// once to x's dtype; dw partial += (dy * x) * rrms (one fma) in row order; the saved rrms is
// read, never recomputed.
#include "kernels/bwd_common.cuh"
#include "kernels/launchers.h"

namespace rb::kern {
namespace {

constexpr int kMaxThreads = 512;
constexpr int kUnroll = 2;                  // pass 1: chunks in flight per thread
constexpr std::int64_t kSliceCols = 16384;  // partials: 72 KB (80 KB for fp32 dy) at most

// Shared-memory slot of slice column c.
template <int N>
__device__ __forceinline__ int slot(int c) {
  return c + c / N;
}

// Two 512-thread blocks an SM (64 registers) without spills (ptxas -v), except for an fp32
// x and w with 16-bit dy (add-bwd with an fp32 residual), whose chunks of 8 columns take
// twice the registers.
template <class X, class G, class W>
constexpr int min_blocks() {
  return sizeof(X) == 4 && sizeof(W) == 4 && sizeof(G) == 2 ? 1 : 2;
}

template <class X, class G, class W, Convention C, bool kDs>
__global__ void __launch_bounds__(kMaxThreads, (min_blocks<X, G, W>()))
    bwd_chunked_kernel(BwdArgs a, float* __restrict__ part, std::int64_t P, int slices,
                       std::int64_t slice_cols) {
  pdl_begin();
  constexpr int N = kVec<G>;
  constexpr int XV = kChunkVecs<X, N>, GV = kChunkVecs<G, N>, WV = kChunkVecs<W, N>;
  extern __shared__ float dwp[];  // slot(c) for slice column c
  __shared__ float scratch[32];
  const int T = blockDim.x;
  const int tid = threadIdx.x;
  const std::int64_t H = a.H;
  const float inv_H = 1.f / static_cast<float>(H);
  const std::int64_t b = blockIdx.x / slices;
  const std::int64_t lo = (blockIdx.x % slices) * slice_cols;  // this block's columns [lo, hi)
  const std::int64_t hi = lo + slice_cols < H ? lo + slice_cols : H;
  const int len = static_cast<int>(hi - lo);
  const W* w = static_cast<const W*>(a.w);

  __shared__ float cluster_slot[2];
  // Pass 1's columns: the slice where its cluster adds the slices' sums
  // (a cluster of all the row's slices), the whole row otherwise.
  const bool split_S = slices > 1 && cluster_blocks() == static_cast<unsigned>(slices);

  for (int c = tid; c < len; c += T) dwp[slot<N>(c)] = 0.f;
  __syncthreads();

  for (std::int64_t row = b; row < a.M; row += P) {
    const X* xrow = static_cast<const X*>(a.x) + row * a.x_stride;
    const G* grow = static_cast<const G*>(a.dy) + row * a.dy_stride;
    const float r = a.rrms[row];

    // Pass 1: its columns, through x1, g1 and w1.
    const X* x1 = xrow + (split_S ? lo : 0);
    const G* g1 = grow + (split_S ? lo : 0);
    const W* w1 = w + (split_S ? lo : 0);
    const std::int64_t len1 = split_S ? len : H;
    const std::int64_t head = head_elems(g1, len1);
    const std::int64_t nch = (len1 - head) / N;
    const std::int64_t body_end = head + nch * N;
    float s = 0.f;
    for (std::int64_t base = tid; base < nch; base += static_cast<std::int64_t>(kUnroll) * T) {
      uint4 xr[kUnroll][XV], gr[kUnroll][GV], wr[kUnroll][WV];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const std::int64_t i = base + static_cast<std::int64_t>(u) * T;
        if (i < nch) {
          const std::int64_t c = head + i * N;
          load_cols<X, N, Ld::plain>(x1 + c, N, xr[u]);
          load_cols<G, N, Ld::plain>(g1 + c, N, gr[u]);
          load_cols<W, N, Ld::ro>(w1 + c, N, wr[u]);
        }
      }
      float part = 0.f;  // the round's terms on their own (strided_sum: long rows' drift)
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (base + static_cast<std::int64_t>(u) * T < nch) {
          float xf[N], gf[N], wf[N];
          cols_to_f32<X, N>(xr[u], xf);
          cols_to_f32<G, N>(gr[u], gf);
          weights_to_f32<C, W, N>(wr[u], wf);
#pragma unroll
          for (int k = 0; k < N; ++k) part += gf[k] * wf[k] * xf[k];
        }
      }
      s += part;
    }
    for (std::int64_t c = tid; c < head; c += T)
      s += to_f32(g1[c]) * effective_weight<C, W>(to_f32(w1[c])) * to_f32(x1[c]);
    for (std::int64_t c = body_end + tid; c < len1; c += T)
      s += to_f32(g1[c]) * effective_weight<C, W>(to_f32(w1[c])) * to_f32(x1[c]);
    // Its barriers also order the previous row's partial updates before this row's.
    float S = block_sum(s, scratch);
    // The slot's parity: the block's row count, computed here (a loop counter would take the
    // register that keeps the fp32 add-bwd kernels from spilling at 64).
    if (split_S) S = cluster_sum(S, cluster_slot, static_cast<int>(((row - b) / P) & 1));
    const float corr = r * r * r * inv_H * S;

    // Pass 2: the slice [lo, hi).
    X* dxrow = static_cast<X*>(a.dx) + row * a.dx_stride;
    const X* dsrow = kDs ? static_cast<const X*>(a.ds_out) + row * a.ds_stride : nullptr;
    const int head2 = static_cast<int>(head_elems(grow + lo, len));
    const int nch2 = (len - head2) / N;
    const int body_end2 = head2 + nch2 * N;
    for (int i = tid; i < nch2; i += T) {
      const int cs = head2 + i * N;  // slice column
      const std::int64_t c = lo + cs;
      uint4 xr[XV], gr[GV], wr[WV], dsr[kDs ? XV : 1];
      load_cols<X, N, Ld::plain>(xrow + c, N, xr);
      load_cols<G, N, Ld::plain>(grow + c, N, gr);
      load_cols<W, N, Ld::ro>(w + c, N, wr);
      if constexpr (kDs) load_cols<X, N, Ld::stream>(dsrow + c, N, dsr);
      float xf[N], gf[N], wf[N], d[N];
      cols_to_f32<X, N>(xr, xf);
      cols_to_f32<G, N>(gr, gf);
      weights_to_f32<C, W, N>(wr, wf);
#pragma unroll
      for (int k = 0; k < N; ++k) {
        d[k] = column_dx(xf[k], gf[k], wf[k], r, corr);
        float& p = dwp[slot<N>(cs + k)];
        p = column_dw(p, xf[k], gf[k], r);
      }
      if constexpr (kDs) {
        float df[N];
        cols_to_f32<X, N>(dsr, df);
#pragma unroll
        for (int k = 0; k < N; ++k) d[k] += df[k];
      }
      store_cols<X, N>(dxrow + c, N, d);
    }
    // Scalar edges of the slice: [0, head2) and [body_end2, len).
    for (int e = tid; e < head2 + (len - body_end2); e += T) {
      const int cs = e < head2 ? e : body_end2 + (e - head2);
      const std::int64_t c = lo + cs;
      const float xv = to_f32(xrow[c]);
      const float gv = to_f32(grow[c]);
      float d = column_dx(xv, gv, effective_weight<C, W>(to_f32(w[c])), r, corr);
      if constexpr (kDs) d += to_f32(dsrow[c]);
      dxrow[c] = from_f32<X>(d);
      float& p = dwp[slot<N>(cs)];
      p = column_dw(p, xv, gv, r);
    }
  }

  __syncthreads();
  if (split_S) cluster_barrier();  // no block leaves while another may read its slot
  float* prow = part + b * H + lo;
  for (int c = tid; c < len; c += T) prow[c] = dwp[slot<N>(c)];
}

using Kernel = void (*)(BwdArgs, float*, std::int64_t, int, std::int64_t);

// The launch configuration, computed the same way for the workspace size and the launch.
struct Plan {
  Kernel kernel = nullptr;
  int threads = 0;
  int slices = 1;
  std::int64_t slice_cols = 0;
  std::size_t smem = 0;
  unsigned cluster = 1;  // slices when they run as a cluster, else 1
  std::int64_t P = 0;    // row blocks of the persistent grid = partial rows (0 when M == 0)
};

template <class X, class G, class W, Convention C, bool kDs>
cudaError_t make_plan(const BwdArgs& a, Plan& plan) {
  constexpr int N = kVec<G>;
  // Threads: one unrolled round of pass 1 covers the row where it can, 64 to 512.
  const std::int64_t chunks = (a.H + N - 1) / N;
  std::int64_t threads = ((chunks + kUnroll - 1) / kUnroll + 31) / 32 * 32;
  threads = threads < 64 ? 64 : (threads > kMaxThreads ? kMaxThreads : threads);
  // Slices: as few as fit kSliceCols, of equal width rounded up to whole chunks.
  const std::int64_t n = (a.H + kSliceCols - 1) / kSliceCols;
  std::int64_t cols = (a.H + n - 1) / n;
  cols = (cols + N - 1) / N * N;
  plan.kernel = bwd_chunked_kernel<X, G, W, C, kDs>;
  plan.threads = static_cast<int>(threads);
  plan.slice_cols = cols;
  plan.slices = static_cast<int>((a.H + cols - 1) / cols);
  plan.smem = static_cast<std::size_t>(cols + cols / N + 1) * sizeof(float);
  cudaError_t e = cudaFuncSetAttribute(plan.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(plan.smem));
  if (e != cudaSuccess) return e;
  plan.P = 0;
  if (a.M > 0) {
    std::int64_t resident = 0;
    if (plan.slices > 1 && plan.slices <= kMaxClusterBlocks) {
      resident = resident_clusters(plan.kernel, plan.threads, plan.smem, plan.slices);
      if (resident > 0) plan.cluster = static_cast<unsigned>(plan.slices);
    }
    if (plan.cluster == 1) resident = resident_blocks(plan.kernel, plan.threads, plan.smem) / plan.slices;
    const std::int64_t rows = resident > 0 ? resident : 1;
    plan.P = a.M < rows ? a.M : rows;
  }
  return cudaSuccess;
}

// Calls f(plan, W{}) with the configuration for a's dtypes and H (a function object, for the
// host helpers of bwd_common.cuh).
constexpr auto with_plan = [](const BwdArgs& a, auto&& f) -> cudaError_t {
  if (a.H < 1 || a.M < 0) return cudaErrorInvalidValue;
  return dispatch_bwd(a, [&](auto xt, auto gt, auto wt, auto c) -> cudaError_t {
    using X = decltype(xt);
    using G = decltype(gt);
    using W = decltype(wt);
    constexpr Convention C = decltype(c)::value;
    Plan plan;
    const cudaError_t e =
        a.ds_out != nullptr ? make_plan<X, G, W, C, true>(a, plan) : make_plan<X, G, W, C, false>(a, plan);
    if (e != cudaSuccess) return e;
    return f(plan, W{});
  });
};

}  // namespace

std::size_t bwd_chunked_workspace_bytes(const BwdArgs& a) { return planned_workspace_bytes(a, with_plan); }

cudaError_t launch_bwd_chunked(const BwdArgs& a, cudaStream_t s) {
  return launch_planned(a, s, with_plan, [&](const Plan& plan, float* part, void*) {
    const std::int64_t blocks = plan.P * plan.slices;
    launch_ex(true, plan.cluster, plan.kernel, static_cast<unsigned>(blocks), plan.threads, plan.smem, s, a, part, plan.P,
              plan.slices, plan.slice_cols);
    return false;  // the column sum writes dw
  });
}

}  // namespace rb::kern

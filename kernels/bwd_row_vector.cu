// row-vector backward (bwd and add-bwd): a persistent grid of P blocks (as many as are
// resident at once, at most M); block b takes rows b, b + P, b + 2P, ... in order. Each
// thread owns a FIXED set of columns for the whole launch: NCH chunks of N = kVec<dy>
// columns (8 for 16-bit dy, 4 for fp32), chunk i of thread t at column (t + i * T) * N, so
//   - its weights are loaded once per block and kept in registers (raw, in w's dtype),
//   - its dw partials (fp32, one per owned column) live in registers across all its rows,
//   - a row's x, dy (and ds_out) chunks are held in registers (raw) between the block_sum
//     of S = sum_j (dy[j] * w[j]) * x[j] and the write of dx: each input is read once,
//     with streaming 16-byte loads (2 to 3 vectors a chunk in flight a thread, all issued
//     before the first is used) and 16-byte stores for dx (plain for 16-bit x, streaming
//     for fp32: kDxStore).
// At the end each block writes its partials as row b of the workspace (P x H fp32) and the
// column sum (bwd_common.cuh) reduces them in a fixed order: dw is bitwise repeatable.
// NCH is 2 or 4, whichever keeps more blocks (rows in flight) resident per SM; the block has
// ceil(chunks / NCH) threads rounded up to whole warps, at most 512. bf16/fp16 bwd (w too) at
// H <= 8192 runs NCH = 2 at 64 registers (ptxas -v, no spills): 4 blocks of 256 threads an
// SM at H = 4096, 2 of 512 at H = 8192.
// A row passes one block-wide barrier (its sum, block_sum_alternating): the scratch of
// consecutive rows alternates, so no second barrier guards it (add-bwd bf16 M=16384: H=8192
// 83.7 -> 90.1% of copy, H=16384 77.4 -> 89.3; docs/perf-notes.md run 23).
// kPf (bwd only, H > kPrefetchMinH): the next row's x and dy are loaded into registers before
// this row's sum, so they are in flight through its barrier, dx and stores (93 registers for
// bf16 at NCH = 2: 2 blocks of 256 an SM at H = 4096, the same rows in flight as 4 without,
// and no SM empties its memory pipe at a barrier). bwd bf16 M=16384: H=4096 80.4 -> 85.0,
// H=8192 78.7 -> 86.5, H=16384 66.2 -> 88.9; at H <= 2048 and M=4096 it lost 4-15% (fewer
// warps for rows of a few µs), and in add-bwd 15-30% (ds_out's registers on top: run 23).
//
// Any H up to bwd_row_vector_max_H, any row strides, any base alignment. Chunk starts are
// multiples of N, so a chunk's vector alignment is its row's: a row whose bases are all
// 16-byte aligned (contiguous rows of H a multiple of 8, or of 4 in fp32) moves whole
// vectors; in a row whose base is not (odd H, odd strides, a pointer one element off) the
// ownership is shifted instead (kAny, chosen at launch when some row of x, dy, ds_out or dx
// is not 16-byte aligned). Ownership cannot follow a per-row peel, since the registers
// holding dw belong to fixed columns, but it can follow a per-BLOCK one: the grid P is a
// multiple of the rows' phase period (8 rows for 16-bit odd H), so all rows of a block start
// at one phase, and the block's chunks start `shift` columns before column 0 (OwnedColumns
// in bwd_common.cuh), which puts them on 16-byte boundaries: whole vectors again, with the
// first and last chunk of a row partial (element by element, masked): bwd bf16 M=16384
// H=4097 63.6% of copy (28 element by element, 43 for chunked; fp32 84.2 against 82.1 and
// 67). Tensors whose phases disagree with dy's (a stride or base of their own) stay element
// by element where they do. The first try, every chunk of a misaligned row loaded as two
// aligned vectors and a funnel shift with the shared vector passed by a warp shuffle, ran
// bf16 H=4097 at 26% of copy and fp32 at 22%: the shifts and shuffles cost more issue slots
// than the scalar accesses they replaced (perf-notes run 24).
// A shifted row spans one chunk more than an aligned one where the shift crosses a 16-byte
// boundary (H=4097 or a misaligned 4096: 513 chunks of 8); where that chunk would cost the
// block a warp, its 1..N columns go element by element instead (Overhang, takes_overhang),
// and the block keeps the aligned row's threads and residency (run 59, H200, auto, M=16384,
// % of copy: bwd bf16 H=4097 72.0 -> 79.0, misaligned 4096 69.5 -> 78.2, 8193 59.4 -> 82.6;
// add-bwd H=4097 61.5 -> 68.5, fp32 76.8 -> 86.9).
//
// Size limit (bwd_row_vector_max_H): 2048 chunks = 512 threads x 4: H = 16384 for 16-bit
// x. What limits it is registers: per owned column a thread holds x, dy, w (raw), its fp32
// dw partial and for add-bwd ds_out; at 4 chunks of 8 16-bit columns that is 116-127
// registers (no spills but 24 B for fp32 w with ds_out), within the 128 of a 512-thread
// block, one block an SM. An fp32 x (fp32 bwd, or add-bwd with an fp32 residual) doubles
// x's and ds_out's share, so its limit is half: 8192 (for 16-bit dy, at 2 chunks of 8).
// Past 8192 (16-bit) / 4096 (fp32) rows in flight per SM drop to one or two: bf16 H=16384
// ran at 66.7% of copy, where `staged` (below: the same ownership, rows streamed through a
// shared-memory ring) runs at 78.1% (docs/perf-notes.md runs 17-19); with kPf, 88.9 (run 23).
//
// Past one block's row (kCl, sm_90+, bwd_row_vector_max_H): the row is split into S = 2 to
// kMaxClusterBlocks slices of equal width (whole chunks), and a row block is a cluster of S
// blocks, block rank q owning slice q of every row of the cluster. Each block is the kernel
// above on its slice (its own weights, partials and prefetch), but for S: after its
// block_sum, cluster_sum adds the slices' sums in rank order through distributed shared
// memory, so every slice gets the same bits. The next row's loads (kPf) are in flight through
// both barriers. Measured (H200, bf16 M=1024, % of copy, docs/perf-notes.md run 34): bwd
// H=65536 54.8 (chunked's cluster 46.6), H=131072 57.1 (48.5), add-bwd H=65536 59.1 (56.7),
// M=16384 H=32768 66.5 (58.9); against 87.6 for one block's row at H=16384. The cluster's
// barrier a row is what it costs (one block an SM or two, at half-width slices, ran the same:
// 55.0 / 55.9); with rows not 16-byte aligned it loses to chunked (H=65537 29.3 / 34.2), and
// auto takes chunked there.
// A few rows (spread_plan): where M rows of S = 2-8 slices fit the SMs a block each, rows of
// 8192 columns or more at M=1 (16384 past one row) run as clusters too, since one block moves
// a row at about 20-25 GB/s: bwd bf16 M=1 H=16384 8.40 -> 3.87 µs of graph replay (run 46).
//
// Short rows (bwd_groups_kernel, below): rows of up to 2 chunks a lane in a warp whose every
// row is 16-byte aligned take a group of 4-32 lanes each, several rows a block, summed by
// shuffles, with no block barrier a row (docs/perf-notes.md run 45).
//
// Rows through a TMA ring (kTma, sm_90+; see the kernel): where every row of x, dy, dx (and
// ds_out) starts 16-byte aligned and x's and dy's rows are whole 16-byte vectors, x and dy
// come through a ring of 2-4 rows of shared memory a block, one bulk copy of each a row, so
// 2-4 rows a block are in flight through every barrier (kPf: one). It replaced the prefetch
// (and the plain loads) past 2048 columns wherever a block gets a second row: bwd bf16
// M=16384 H=8192 85.2 -> 91.4% of copy, H=16384 87.6 -> 97.1, M=1024 H=65536 (clusters) 54.8
// -> 57.4 (run 36, choose_plan_any); from 513 columns where a block gets more than two rows:
// M=16384 H=1024 67.6 -> 70.4, 2048 78.9 -> 83.9 (run 45). add-bwd takes it within one
// block's row only. Shifted 16-bit rows (kAny) take it too within one block's row, where x
// and dy share stride and phase (shifted_ring_rows): each row's image starts at the 16-byte
// boundary before its column 0 and ends at the last one inside it, the row's last partial
// chunk read from global memory (run 56, H100, auto, M=16384: bwd bf16 H=4097 80.4 -> 84.3%
// of copy, misaligned H=4096 83.0 -> 84.2; add-bwd H=4097 70.6 -> 74.6; fp32 lost, so its
// shifted rows go without: choose_plan_any).
//
// Numerics: fp32 throughout; g = dy * w_eff rounded once (w_eff: w, or 1 + w under gemma and
// zero-centered, epilogue.cuh), S a per-thread serial sum then the block tree; dx = rrms * g
// - x * (rrms^3 / H * S) (+ ds_out) rounded once to x's dtype; dw partial += (dy * x) * rrms
// (one fma) in row order; the saved rrms is read, never recomputed.
#include <algorithm>
#include <numeric>

#include "kernels/bwd_common.cuh"
#include "kernels/launchers.h"

namespace rb::kern {
namespace {

constexpr int kMaxThreads = 512;
constexpr int kMaxStages = 4;  // kTma's ring: rows a block has in flight, at most

// The registers of data a thread of NCH chunks holds: its raw x, dy, w (and ds_out) chunks
// and its fp32 dw partials.
template <class X, class G, class W, int NCH, bool kDs>
constexpr int data_registers() {
  constexpr int N = kVec<G>;
  return NCH * N *
             ((kDs ? 2 : 1) * static_cast<int>(sizeof(X)) + static_cast<int>(sizeof(G)) +
              static_cast<int>(sizeof(W))) /
             4 +
         NCH * N;
}

// Up to 40 registers of data, the kernel fits 64 registers (2 blocks of 512 threads) without
// spills; past that it spills at 64, so it is left up to 128 (ptxas -v).
template <class X, class G, class W, int NCH, bool kDs, bool kPf>
constexpr int min_blocks() {
  if (kPf) return 1;  // two rows' x and dy: left to ptxas up to 128 registers
  return data_registers<X, G, W, NCH, kDs>() <= 40 ? 2 : 1;
}

// Whether a kernel leaves its block's last 1..N columns to the overhang (Overhang, below):
// shifted rows within one block's row, but not with the prefetch's second row (its NCH=4
// kernels spilled 68-96 more bytes with it, ptxas -v) nor past 96 registers of data (add-bwd
// with an fp32 w at NCH=4 spilled 24 bytes).
template <class X, class G, class W, int NCH, bool kDs, bool kPf, bool kAny, bool kCl>
constexpr bool takes_overhang() {
  return kAny && !kCl && !kPf && data_registers<X, G, W, NCH, kDs>() <= 96;
}

// Rows from which the backward (not add-bwd) prefetches the next row (kPf): measured at 2048
// (a loss at M=4096) and 4096 (a gain at every M), run 23.
constexpr std::int64_t kPrefetchMinH = 2048;

// How dx is stored (store_out): plain for 16-bit x, streaming for fp32. Plain against
// streaming, M=16384: bf16 bwd H=4097 63.6 -> 66.7% of copy, add-bwd +0.4-1.0 at H 1024-16384,
// bwd level within 0.4 at aligned H, decode bwd M=1 H=1024 1.94 -> 1.73 us and add-bwd H=4096
// 3.86 -> 3.57 us; fp32 bwd H=8189 85.8 -> 81.6 and add-bwd 87.9 -> 82.2 (docs/perf-notes.md
// runs 25-26).
template <class X>
constexpr St kDxStore = sizeof(X) == 2 ? St::plain : St::stream;

// The columns [lo, lo + cols) of every row (clipped to H) as rows of their own: x, dy, w,
// ds_out and dx advanced by lo. lo is a multiple of kVec<G>, so every row keeps its 16-byte
// phase.
template <class X, class G, class W>
__device__ __forceinline__ BwdArgs column_slice(BwdArgs a, std::int64_t lo, std::int64_t cols) {
  a.x = static_cast<const X*>(a.x) + lo;
  a.dy = static_cast<const G*>(a.dy) + lo;
  a.w = static_cast<const W*>(a.w) + lo;
  a.dx = static_cast<X*>(a.dx) + lo;
  if (a.ds_out != nullptr) a.ds_out = static_cast<const X*>(a.ds_out) + lo;
  a.H = a.H - lo < cols ? a.H - lo : cols;
  return a;
}

// kTma (sm_90+, rows 16-byte aligned whose x and dy rows are whole 16-byte vectors): the
// rows' x and dy come through a ring of `stages` rows in dynamic shared memory, each filled
// by two bulk copies (one thread issues them) that complete an mbarrier; the block copies a
// row's chunks into registers, and once its block_sum's barrier shows every thread has, the
// stage takes the row `stages` rows ahead. So `stages` rows a block are in flight through
// every barrier, where kPf keeps one (registers hold no second row).
// A thread's share of a row's S from the raw x and dy chunks it holds (row-vector's block and
// the groups').
template <Convention C, class X, class G, class W, int N, int NCH, bool kShift, int XV, int GV>
__device__ __forceinline__ float row_S_share(const OwnedColumns<W, N, NCH, kShift>& own, const uint4 (&xr)[NCH][XV],
                                             const uint4 (&gr)[NCH][GV]) {
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < NCH; ++i) {
    float xf[N], gf[N];
    cols_to_f32<X, N>(xr[i], xf);
    cols_to_f32<G, N>(gr[i], gf);
    own.template add_to_S<C>(i, xf, gf, s);
  }
  return s;
}

// A thread's chunks of dx for `row` (from column own.c0 of dxrow), from the raw x, dy and w
// chunks held across the row's sum, converted again after it (reconvert_after: the raw
// chunks stay live, not their floats), plus ds_out's in add-bwd.
template <class X, class G, Convention C, bool kDs, class W, int N, int NCH, bool kShift, int XV, int GV, int DV>
__device__ __forceinline__ void store_dx_share(OwnedColumns<W, N, NCH, kShift>& own, uint4 (&xr)[NCH][XV],
                                               uint4 (&gr)[NCH][GV], const uint4 (&dsr)[DV][XV], std::int64_t row,
                                               float r, float corr, X* dxrow) {
  const unsigned z = static_cast<unsigned>(row >> 62);  // 0: row < M < 2^62
#pragma unroll
  for (int i = 0; i < NCH; ++i) {
    reconvert_after<XV>(xr[i], z);
    reconvert_after<GV>(gr[i], z);
    reconvert_after<kChunkVecs<W, N>>(own.wr[i], z);
    float xf[N], gf[N], d[N];
    cols_to_f32<X, N>(xr[i], xf);
    cols_to_f32<G, N>(gr[i], gf);
    own.template backward<C>(i, xf, gf, r, corr, d);
    if constexpr (kDs) {
      float df[N];
      cols_to_f32<X, N>(dsr[i], df);
#pragma unroll
      for (int k = 0; k < N; ++k) d[k] += df[k];
    }
    store_cols<X, N, kDxStore<X>>(dxrow + i * own.step, own.first(i), own.valid(i), d);
  }
}

// A shifted block's columns past its chunks (takes_overhang): make_plan gives the block one
// chunk fewer than its row spans, which saves a warp where the span is one chunk past whole
// warps (bf16 H=4097: 513 chunks of 8 need 129 threads at 4 chunks, a fifth warp for one
// chunk, so 3 blocks an SM where the aligned H=4096 has 4: docs/perf-notes.md run 59). The
// 1..N columns from the block's chunks' end, `from` = cover - shift, to H go element by
// element, column from + t to thread t. With the ring (kTma) their x and dy come with the
// row's stage (the 16 bytes from `from`, a 16-byte boundary, by a cp.async the stage's
// barrier waits for: kernel, issue), else from global memory. The kernels sit at their
// register caps, so nothing of it stays in registers across a row but the column: its weight
// and dw partial, and the row's x, dy and ds_out read before the row's sum, wait in shared
// memory (OverhangShared, entry t this thread's alone) for its dx after the sum. Measured
// (perf-notes run 59): loading x and dy from global memory before the sum, and again after
// it, cost bwd bf16 H=4097 3.7% (add-bwd gained 10%); keeping them in shared memory across
// the sum, 2.6% (ncu: the block's warps waited at its barrier 7.2 cycles an instruction
// instead of 4.4, for the overhang's loads). Its partial is written beside its chunks'.
// Off (kOn false, or col < 0) it does nothing.
template <int N>
struct OverhangShared {
  float w[N], dw[N], x[N], g[N], ds[N];
};

template <class X, class G, class W, Convention C, bool kDs, bool kOn>
struct Overhang {
  int col = -1;

  __device__ __forceinline__ Overhang(const BwdArgs& a, int from, OverhangShared<kOn ? kVec<G> : 1>& sh) {
    if constexpr (kOn) {
      const int t = static_cast<int>(threadIdx.x), c = from + t;
      if (t < kVec<G> && c < a.H) {
        col = c;
        sh.w[t] = effective_weight<C, W>(to_f32(static_cast<const W*>(a.w)[c]));
        sh.dw[t] = 0.f;
      }
    }
  }
  // The row's values of its column into sh (x and dy at xrow[col] and grow[col]: the row's
  // stage with the ring, else global memory); returns its share of the row's S.
  __device__ __forceinline__ float share(const BwdArgs& a, std::int64_t row, const X* xrow, const G* grow,
                                         OverhangShared<kOn ? kVec<G> : 1>& sh) const {
    if (!kOn || col < 0) return 0.f;
    const int t = static_cast<int>(threadIdx.x);
    const float x = to_f32(xrow[col]), g = to_f32(grow[col]);
    if constexpr (kDs) sh.ds[t] = to_f32(static_cast<const X*>(a.ds_out)[row * a.ds_stride + col]);
    sh.x[t] = x;
    sh.g[t] = g;
    return g * sh.w[t] * x;
  }
  // Its dx for the row (column_dx, then ds_out), and its dw partial.
  __device__ __forceinline__ void store(const BwdArgs& a, std::int64_t row, float r, float corr,
                                        OverhangShared<kOn ? kVec<G> : 1>& sh) const {
    if (!kOn || col < 0) return;
    const int t = static_cast<int>(threadIdx.x);
    const float x = sh.x[t], g = sh.g[t];
    float d = column_dx(x, g, sh.w[t], r, corr);
    if constexpr (kDs) d += sh.ds[t];
    static_cast<X*>(a.dx)[row * a.dx_stride + col] = from_f32<X>(d);
    sh.dw[t] = column_dw(sh.dw[t], x, g, r);
  }
  // Its partial beside the chunks' (OwnedColumns::write_partials: row p_row of part, or dw).
  __device__ __forceinline__ void write_partial(float* part, std::int64_t p_row, std::int64_t ld, W* dw_direct,
                                                const OverhangShared<kOn ? kVec<G> : 1>& sh) const {
    if (!kOn || col < 0) return;
    const float dw = sh.dw[threadIdx.x];
    if (dw_direct != nullptr)
      dw_direct[col] = from_f32<W>(0.f + dw);
    else
      part[p_row * ld + col] = dw;
  }
};

template <class X, class G, class W, Convention C, int NCH, bool kDs, bool kPf, bool kAny, bool kCl, bool kTma>
__global__ void __launch_bounds__(kMaxThreads, (min_blocks<X, G, W, NCH, kDs, kPf>()))
    bwd_row_vector_kernel(BwdArgs a, float* __restrict__ part, void* dw_direct, int cols, int stages) {
  pdl_begin();
  constexpr int N = kVec<G>;
  constexpr int XV = kChunkVecs<X, N>, GV = kChunkVecs<G, N>;
  static_assert(!(kPf && kDs), "add-bwd does not prefetch");
  static_assert(!(kTma && kPf), "the ring replaces the prefetch");
  static_assert(!(kTma && kAny && (kCl || sizeof(X) != sizeof(G))),
                "shifted rows take the ring within one block's row, x and dy at one phase");
  __shared__ float scratch[64];  // two halves: block_sum_alternating
  // kCl: the row blocks are clusters; block rank q of cluster b owns slice q (columns
  // [q * cols, (q + 1) * cols) of the row) of rows b, b + P, ... (P clusters), as a row of
  // its own but for S, which the cluster adds up (cluster_sum) before dx.
  const std::int64_t H = a.H;
  const unsigned slices = kCl ? cluster_blocks() : 1u;
  const std::int64_t lo = kCl ? static_cast<std::int64_t>(blockIdx.x % slices) * cols : 0;
  const std::int64_t b = blockIdx.x / slices, P = gridDim.x / slices;
  if constexpr (kCl) a = column_slice<X, G, W>(a, lo, cols);
  __shared__ float cluster_slot[kCl ? 2 : 1];
  // kAny: the columns before 0 that put this block's dy chunks on 16-byte boundaries (its
  // rows' phase: P is a multiple of the phase period, choose_plan).
  const int shift =
      kAny ? static_cast<int>((reinterpret_cast<std::uintptr_t>(static_cast<const G*>(a.dy) + b * a.dy_stride) & 15u) /
                              sizeof(G))
           : 0;
  OwnedColumns<W, N, NCH, kAny> own(a, shift);
  if constexpr (kCl) own.inv_H = 1.f / static_cast<float>(H);
  const int cover = static_cast<int>(blockDim.x) * NCH * N;  // columns the block's chunks span
  constexpr bool kOver = takes_overhang<X, G, W, NCH, kDs, kPf, kAny, kCl>();
  __shared__ OverhangShared<kOver ? N : 1> over_sh;
  const Overhang<X, G, W, C, kDs, kOver> over(a, cover - shift, over_sh);
  uint4 xr[NCH][XV], gr[NCH][GV];  // this row's x and dy
  const auto load_row = [&](std::int64_t rw, uint4 (&xo)[NCH][XV], uint4 (&go)[NCH][GV]) {
    const X* xrow = static_cast<const X*>(a.x) + rw * a.x_stride + own.c0;
    const G* grow = static_cast<const G*>(a.dy) + rw * a.dy_stride + own.c0;
#pragma unroll
    for (int i = 0; i < NCH; ++i) {
      load_cols<X, N, Ld::stream>(xrow + i * own.step, own.first(i), own.valid(i), xo[i]);
      load_cols<G, N, Ld::stream>(grow + i * own.step, own.first(i), own.valid(i), go[i]);
    }
  };
  if (kPf && b < a.M) load_row(b, xr, gr);
  int parity = 0;

  // kTma: stage k (of `stages`) at ring + k * stage_bytes holds a row's x (lanes' columns
  // own.c0 + i * own.step from its start) then its dy; full[k] counts its copies.
  // With kAny (x and dy at one phase: choose_plan) a row's image runs from the 16-byte
  // boundary `shift` columns before its column 0 to the last boundary inside it (img columns,
  // whole vectors: what a bulk copy takes), so chunk i sits at image column c0 + i * step +
  // shift, 16-byte aligned; the one chunk past the image (the row's last, partial) is read
  // from global memory. The image never reads past the row's end; before its start it reads
  // at most the 16-byte granule that holds column 0.
  extern __shared__ __align__(128) unsigned char ring[];
  __shared__ __align__(8) unsigned long long full[kTma ? kMaxStages : 1];
  // A row's image: its columns (a.H: under kCl the block's slice, not the row's H), whole
  // vectors from the boundary before column 0 with kAny, up to the chunks' end (the
  // overhang's columns past it come by a copy of their own, in issue).
  const int img = kAny ? min(static_cast<int>((a.H + shift) / N * N), cover) : static_cast<int>(a.H);
  const unsigned x_bytes = static_cast<unsigned>(img * sizeof(X)), g_bytes = static_cast<unsigned>(img * sizeof(G));
  // With the overhang a stage's x and dy each have N columns more, at image column cover: the
  // overhang's (plan_ring sizes the stage the same way).
  const int slot_cols = cover + (kOver && kTma ? N : 0), over_cols = static_cast<int>(a.H) - (cover - shift);
  const int x_slot = slot_cols * static_cast<int>(sizeof(X)), stage_bytes = x_slot + slot_cols * static_cast<int>(sizeof(G));
  const auto issue = [&](std::int64_t rw, int k) {  // one thread: row rw into stage k
    unsigned char* st = ring + k * stage_bytes;
    if (kOver && over_cols > 0) {  // the overhang's columns: 16 bytes from a boundary, zero-filled past H
      cp_async16_part(st + cover * static_cast<int>(sizeof(X)), static_cast<const X*>(a.x) + rw * a.x_stride - shift + cover,
                      static_cast<unsigned>(over_cols * sizeof(X)));
      cp_async16_part(st + x_slot + cover * static_cast<int>(sizeof(G)),
                      static_cast<const G*>(a.dy) + rw * a.dy_stride - shift + cover, static_cast<unsigned>(over_cols * sizeof(G)));
      cp_async_arrive(&full[k]);
    }
    bulk_expect(&full[k], x_bytes + g_bytes);
    bulk_copy(st, static_cast<const X*>(a.x) + rw * a.x_stride - shift, x_bytes, &full[k]);
    bulk_copy(st + x_slot, static_cast<const G*>(a.dy) + rw * a.dy_stride - shift, g_bytes, &full[k]);
  };
  if constexpr (kTma) {
    if (threadIdx.x == 0) {
      for (int k = 0; k < stages; ++k) bulk_barrier_init(&full[k]);
      for (int k = 0; k < stages && b + k * P < a.M; ++k) issue(b + k * P, k);
    }
    __syncthreads();
  }
  int stage = 0;
  unsigned phase = 0;  // of the stage's barrier, for this pass through the ring

  for (std::int64_t row = b; row < a.M; row += P, parity ^= 1) {
    uint4 xn[kPf ? NCH : 1][XV], gn[kPf ? NCH : 1][GV], dsr[kDs ? NCH : 1][XV];  // next row's; ds_out
    const unsigned char* st = nullptr;  // kTma: this row's stage
    if constexpr (kPf) {
      if (row + P < a.M) load_row(row + P, xn, gn);
    } else if constexpr (kTma) {
      bulk_wait(&full[stage], phase);
      st = ring + stage * stage_bytes;
#pragma unroll
      for (int i = 0; i < NCH; ++i) {
        const int c = own.c0 + i * own.step, p = c + shift;  // p: the chunk's image column
        if (!kAny || p + N <= img) {
          load_cols_shared<X, N>(st + p * static_cast<int>(sizeof(X)), own.first(i), own.valid(i), xr[i]);
          load_cols_shared<G, N>(st + x_slot + p * static_cast<int>(sizeof(G)), own.first(i), own.valid(i), gr[i]);
        } else {  // past the image: the row's last chunk (partial), or none of its columns
          load_cols<X, N, Ld::stream>(static_cast<const X*>(a.x) + row * a.x_stride + c, own.first(i), own.valid(i),
                                      xr[i]);
          load_cols<G, N, Ld::stream>(static_cast<const G*>(a.dy) + row * a.dy_stride + c, own.first(i),
                                      own.valid(i), gr[i]);
        }
      }
    } else {
      load_row(row, xr, gr);
    }
    if constexpr (kDs) {
      const X* dsrow = static_cast<const X*>(a.ds_out) + row * a.ds_stride + own.c0;
#pragma unroll
      for (int i = 0; i < NCH; ++i)
        load_cols<X, N, Ld::stream>(dsrow + i * own.step, own.first(i), own.valid(i), dsr[i]);
    }
    // The overhang reads its column c of the row at image column c + shift of the stage with
    // the ring, else from global memory.
    const float over_s = kTma ? over.share(a, row, reinterpret_cast<const X*>(st) + shift,
                                           reinterpret_cast<const G*>(st + x_slot) + shift, over_sh)
                              : over.share(a, row, static_cast<const X*>(a.x) + row * a.x_stride,
                                           static_cast<const G*>(a.dy) + row * a.dy_stride, over_sh);
    const float r = a.rrms[row];

    float S = block_sum_alternating(row_S_share<C, X, G>(own, xr, gr) + over_s, scratch, parity);
    if constexpr (kTma) {  // every thread has its chunks of this stage: refill it
      if (threadIdx.x == 0 && row + stages * P < a.M) {
        fence_async_shared();
        issue(row + stages * P, stage);
      }
      if (++stage == stages) stage = 0, phase ^= 1u;
    }
    if constexpr (kCl) S = cluster_sum(S, cluster_slot, parity);
    const float corr = r * r * r * own.inv_H * S;
    store_dx_share<X, G, C, kDs>(own, xr, gr, dsr, row, r, corr, static_cast<X*>(a.dx) + row * a.dx_stride + own.c0);
    over.store(a, row, r, corr, over_sh);
    if constexpr (kPf) {
#pragma unroll
      for (int i = 0; i < NCH; ++i) {
#pragma unroll
        for (int k = 0; k < XV; ++k) xr[i][k] = xn[i][k];
#pragma unroll
        for (int k = 0; k < GV; ++k) gr[i][k] = gn[i][k];
      }
    }
  }

  // This block's partials: row b of the workspace (its slice's columns), plain stores (the
  // column sum reads them next, from L2); or dw itself when the grid is one row block.
  if constexpr (kCl) cluster_barrier();  // no block leaves while another may read its slot
  own.write_partials(part != nullptr ? part + lo : part, b, H, dw_direct != nullptr ? static_cast<W*>(dw_direct) + lo : nullptr);
  over.write_partial(part, b, H, static_cast<W*>(dw_direct), over_sh);
}

// ---- groups: short rows, several a block ----------------------------------------------------
// Rows of up to kGroupChunks chunks a lane in a warp (bf16 H <= 512, fp32 <= 256) take a
// group of kLanes threads (4, 8, 16 or 32) instead of a block: kGroupThreads / kLanes groups
// a block, group g of block b taking rows (b + k * P) * R + g (R groups a
// block, P blocks), each row summed by shuffles inside its group (no barrier). A row-vector
// block would hold such a row in one warp with most lanes idle, one row at a time through a
// block barrier (bwd bf16 M=65536 H=128: 16 KB of x and dy in flight an SM, 18.7% of copy:
// docs/perf-notes.md run 45). Each lane owns its columns for the whole launch (OwnedColumns
// with the group as the block), so its dw partials stay in registers; at the end the block
// adds its groups' partials column by column in group order (shared memory, R rows of H
// floats) into its partial row: dw stays bitwise repeatable for a given plan. A warp's groups
// step through their rows together (the shuffles take the whole warp); a group past M loads
// and stores nothing and adds nothing to dw.
constexpr int kGroupThreads = 256;
constexpr int kGroupChunks = 2;
// Blocks an SM the registers must allow, by the registers of data a thread holds
// (data_registers): up to 40 without ds_out, 4 (64 registers a thread; 16-bit x, dy
// and w, or fp32); up to 56, 3 (80: ds_out, or an fp32 w or x); else 2. ptxas -v: no spills
// at these caps; left to itself it took 95-124 registers (two blocks an SM).
template <class X, class G, class W, bool kDs>
constexpr int group_min_blocks() {
  constexpr int data = data_registers<X, G, W, kGroupChunks, kDs>();
  return data <= 40 && !kDs ? 4 : data <= 56 ? 3 : 2;
}

template <class X, class G, class W, Convention C, bool kDs, int kLanes>
__global__ void __launch_bounds__(kGroupThreads, (group_min_blocks<X, G, W, kDs>()))
    bwd_groups_kernel(BwdArgs a, float* __restrict__ part, void* dw_direct, int /*cols*/, int /*stages*/) {
  pdl_begin();
  constexpr int N = kVec<G>;
  constexpr int NCH = kGroupChunks;
  constexpr int XV = kChunkVecs<X, N>, GV = kChunkVecs<G, N>;
  extern __shared__ __align__(16) float group_dw[];  // R rows of H: each group's partials
  const int H = static_cast<int>(a.H);
  const int lane = static_cast<int>(threadIdx.x) % kLanes, group = static_cast<int>(threadIdx.x) / kLanes;
  const int R = static_cast<int>(blockDim.x) / kLanes;
  const int warp_group = (static_cast<int>(threadIdx.x) & ~31) / kLanes;  // the warp's first group
  OwnedColumns<W, N, NCH> own(a, lane, kLanes, 0);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * R;
  for (std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * R + warp_group; first < a.M; first += stride) {
    const std::int64_t row = first + (group - warp_group);
    const bool active = row < a.M;
    const std::int64_t rw = active ? row : 0;
    const X* xrow = static_cast<const X*>(a.x) + rw * a.x_stride + own.c0;
    const G* grow = static_cast<const G*>(a.dy) + rw * a.dy_stride + own.c0;
    uint4 xr[NCH][XV], gr[NCH][GV], dsr[kDs ? NCH : 1][XV];
#pragma unroll
    for (int i = 0; i < NCH; ++i) {
      const int v = active ? own.valid(i) : 0;
      load_cols<X, N, Ld::stream>(xrow + i * own.step, 0, v, xr[i]);
      load_cols<G, N, Ld::stream>(grow + i * own.step, 0, v, gr[i]);
      if constexpr (kDs)
        load_cols<X, N, Ld::stream>(static_cast<const X*>(a.ds_out) + rw * a.ds_stride + own.c0 + i * own.step, 0, v,
                                    dsr[i]);
    }
    const float S = group_sum(row_S_share<C, X, G>(own, xr, gr), kLanes);
    if (!active) continue;
    const float r = a.rrms[row];
    const float corr = r * r * r * own.inv_H * S;
    store_dx_share<X, G, C, kDs>(own, xr, gr, dsr, row, r, corr, static_cast<X*>(a.dx) + row * a.dx_stride + own.c0);
  }
  own.write_partials(group_dw, group, H, nullptr);
  __syncthreads();
  for (int c = static_cast<int>(threadIdx.x); c < H; c += static_cast<int>(blockDim.x)) {
    float t = group_dw[c];
    for (int q = 1; q < R; ++q) t += group_dw[q * H + c];
    if (dw_direct != nullptr)
      static_cast<W*>(dw_direct)[c] = from_f32<W>(0.f + t);  // as the column sum rounds (write_partials)
    else
      part[static_cast<std::int64_t>(blockIdx.x) * H + c] = t;
  }
}

// ---- staged: the same ownership, rows streamed through a shared-memory ring -----------------
// The ring's layout (bytes), the same on host and device: `stages` stages of one row each
// (x, dy and, for add-bwd, ds_out, each in a slot of stage_slot_bytes), then, where some row
// of dx does not start 16-byte aligned, an image of one dx row.
struct Ring {
  int stages = 0;  // 2..4: rows staged ahead of the one being computed, plus one
  int slot_x = 0, slot_g = 0, stage = 0;
  int dxbuf = -1;  // offset of the dx row image; -1: every dx row is 16-byte aligned
  std::size_t bytes() const {
    return static_cast<std::size_t>(stage) * stages + (dxbuf >= 0 ? static_cast<std::size_t>(slot_x) : 0);
  }
};

template <class X, class G, class W, Convention C, int NCH, bool kDs>
__global__ void __launch_bounds__(kMaxThreads)
    bwd_staged_kernel(BwdArgs a, float* __restrict__ part, void* dw_direct, Ring ring) {
  pdl_begin();
  extern __shared__ __align__(16) unsigned char smem[];
  constexpr int N = kVec<G>;
  __shared__ float scratch[32];
  OwnedColumns<W, N, NCH> own(a);
  const int H = own.H;

  const X* xb = static_cast<const X*>(a.x);
  const G* gb = static_cast<const G*>(a.dy);
  const X* db = static_cast<const X*>(a.ds_out);
  const TensorSpan xspan(xb, a.M, a.x_stride, H), gspan(gb, a.M, a.dy_stride, H);
  const TensorSpan dspan = kDs ? TensorSpan(db, a.M, a.ds_stride, H) : xspan;
  const std::int64_t P = gridDim.x;
  // Stage `st` gets row `row` (nothing past M); one commit group per row, even an empty one,
  // so every thread counts the same groups.
  const auto issue = [&](std::int64_t row, int st) {
    if (row < a.M) {
      unsigned char* base = smem + st * ring.stage;
      stage_row(xb + row * a.x_stride, H, xspan, base);
      stage_row(gb + row * a.dy_stride, H, gspan, base + ring.slot_x);
      if constexpr (kDs) stage_row(db + row * a.ds_stride, H, dspan, base + ring.slot_x + ring.slot_g);
    }
    cp_async_commit();
  };
  for (int k = 0; k + 1 < ring.stages; ++k) issue(blockIdx.x + k * P, k);

  // The image of owned chunk i of a staged row whose column 0 sits at `row0`, as N floats.
  const auto chunk = [&](auto t, const unsigned char* row0, int i, int valid, float* f) {
    using T = decltype(t);
    uint4 raw[kChunkVecs<T, N>];
    load_cols_shared<T, N>(row0 + (own.c0 + i * own.step) * static_cast<int>(sizeof(T)), valid, raw);
    cols_to_f32<T, N>(raw, f);
  };
  const auto phase = [](const void* p) { return static_cast<int>(reinterpret_cast<std::uintptr_t>(p) & 15u); };
  int st = 0;
  for (std::int64_t row = blockIdx.x; row < a.M; row += P) {
    cp_async_wait(ring.stages - 2);  // this row's copies (this thread's) have landed
    __syncthreads();                 // everyone's have; the stage read last row is free
    issue(row + (ring.stages - 1) * P, st == 0 ? ring.stages - 1 : st - 1);

    const unsigned char* base = smem + st * ring.stage;
    const unsigned char* sx = base + phase(xb + row * a.x_stride);
    const unsigned char* sg = base + ring.slot_x + phase(gb + row * a.dy_stride);
    const unsigned char* sd = kDs ? base + ring.slot_x + ring.slot_g + phase(db + row * a.ds_stride) : nullptr;
    const float r = a.rrms[row];

    float s = 0.f;
#pragma unroll
    for (int i = 0; i < NCH; ++i) {
      const int v = own.valid(i);
      if (v == 0) continue;
      float xf[N], gf[N];
      chunk(X{}, sx, i, v, xf);
      chunk(G{}, sg, i, v, gf);
      own.template add_to_S<C>(i, xf, gf, s);
    }
    const float S = block_sum(s, scratch);
    const float corr = r * r * r * own.inv_H * S;

    X* dxrow = static_cast<X*>(a.dx) + row * a.dx_stride;
    const bool direct = aligned16(dxrow);  // else through the dx row image, for 16-byte stores
    X* image = direct ? nullptr : reinterpret_cast<X*>(smem + ring.dxbuf + phase(dxrow));
#pragma unroll
    for (int i = 0; i < NCH; ++i) {
      const int v = own.valid(i);
      if (v == 0) continue;
      float xf[N], gf[N], d[N];
      chunk(X{}, sx, i, v, xf);
      chunk(G{}, sg, i, v, gf);
      own.template backward<C>(i, xf, gf, r, corr, d);
      if constexpr (kDs) {
        float df[N];
        chunk(X{}, sd, i, v, df);
#pragma unroll
        for (int k = 0; k < N; ++k) d[k] += df[k];
      }
      const int c = own.c0 + i * own.step;
      if (direct) {
        store_cols<X, N>(dxrow + c, v, d);
      } else {
#pragma unroll
        for (int k = 0; k < N; ++k)
          if (k < v) image[c + k] = from_f32<X>(d[k]);
      }
    }
    if (!direct) {  // uniform across the block: dxrow is the block's
      __syncthreads();
      store_row_from_shared(dxrow, H, smem + ring.dxbuf);
    }
    st = st + 1 == ring.stages ? 0 : st + 1;
  }
  cp_async_wait(0);  // nothing left in flight (the groups past M are empty)
  own.write_partials(part, blockIdx.x, H, static_cast<W*>(dw_direct));
}

using Kernel = void (*)(BwdArgs, float*, void*, int, int);
using StagedKernel = void (*)(BwdArgs, float*, void*, Ring);

// The launch configuration, computed the same way for the workspace size and the launch.
template <class K>
struct PlanOf {
  K kernel = nullptr;
  int threads = 0;
  std::int64_t resident = 0;  // resident row blocks (blocks, or clusters) on the device: rows in flight
  std::int64_t P = 0;         // row blocks of the persistent grid = partial rows (0 when M == 0)
  unsigned cluster = 1;       // blocks a row block: the row's slices (row-vector on sm_90+), else 1
  int cols = 0;               // columns a slice, when cluster > 1
  int stages = 0;             // kTma: rows in the ring
  std::size_t smem = 0;       // dynamic shared memory a block (kTma's ring)
};
using Plan = PlanOf<Kernel>;

// Chunks of N = kVec<G> columns in a row of H.
template <class G>
constexpr std::int64_t chunks_of(std::int64_t H) {
  return (H + kVec<G> - 1) / kVec<G>;
}

// Threads for `chunks` chunks at NCH a thread: whole warps, 0 if more than a block holds.
inline int plan_threads(std::int64_t chunks, int nch) {
  std::int64_t threads = ((chunks + nch - 1) / nch + 31) / 32 * 32;
  if (threads < 32) threads = 32;
  return threads > kMaxThreads ? 0 : static_cast<int>(threads);
}

// A ring's depth for a persistent grid (kTma here, staged below): of 2..kMaxStages stages,
// the one that keeps the most row bytes in flight per SM, counted up to `cap`; on a tie the
// one with more resident row blocks, then fewer stages. resident_at(stages): the resident
// row blocks at that depth (<= 0: it does not fit, nor any deeper one); in_flight(stages,
// resident): the bytes in flight per SM. stages 0 where no depth fits.
struct RingDepth {
  int stages = 0;
  std::int64_t resident = 0;
};

template <class ResidentAt, class InFlight>
RingDepth best_ring_depth(std::size_t cap, ResidentAt&& resident_at, InFlight&& in_flight) {
  RingDepth best;
  std::size_t best_score = 0;
  for (int stages = 2; stages <= kMaxStages; ++stages) {
    const std::int64_t resident = resident_at(stages);
    if (resident <= 0) break;
    const std::size_t per_sm = in_flight(stages, resident);
    const std::size_t score = per_sm < cap ? per_sm : cap;
    if (score > best_score || (score == best_score && resident > best.resident)) {
      best_score = score;
      best = RingDepth{stages, resident};
    }
  }
  return best_score > 0 ? best : RingDepth{};
}

// kTma's ring for `plan` (kernel, threads and cluster set; NCH chunks of N a thread): every
// stage in flight, counted up to kRingInFlight; the resident row blocks in plan.resident.
// False where no depth fits (or the kernel has no sm_90 code: resident_clusters answers 0).
constexpr std::size_t kRingInFlight = 160 * 1024;

// `extra`: columns a stage holds past the block's chunks (the overhang's, N where the kernel
// takes it).
template <class X, class G>
bool plan_ring(Plan& plan, int nch, int extra = 0) {
  const std::size_t cols = static_cast<std::size_t>(plan.threads) * nch * kVec<G> + extra;  // a stage's
  const std::size_t stage = cols * (sizeof(X) + sizeof(G));
  const std::size_t max_smem = allow_max_dynamic_smem(reinterpret_cast<const void*>(plan.kernel));
  const int sms = sm_count();
  if (max_smem == 0 || sms == 0) return false;
  const RingDepth d = best_ring_depth(
      kRingInFlight,
      [&](int stages) -> std::int64_t {
        if (stage * stages > max_smem) return 0;
        return resident_clusters(plan.kernel, plan.threads, stage * stages, static_cast<int>(plan.cluster));
      },
      [&](int stages, std::int64_t resident) {
        return static_cast<std::size_t>(resident) * plan.cluster * stages * stage / sms;
      });
  if (d.stages == 0) return false;
  plan.stages = d.stages;
  plan.resident = d.resident;
  plan.smem = stage * d.stages;
  return true;
}

template <class X, class G, class W, Convention C, int NCH, bool kDs, bool kPf, bool kAny, bool kTma>
Plan make_plan(const BwdArgs& a, std::int64_t chunks) {
  Plan plan;
  // The overhang takes the span's last chunk (1..N columns) where the kernel has one.
  constexpr bool kOver = takes_overhang<X, G, W, NCH, kDs, kPf, kAny, false>();
  const int threads = plan_threads(kOver && chunks > 1 ? chunks - 1 : chunks, NCH);
  if (threads == 0) return plan;
  plan.kernel = bwd_row_vector_kernel<X, G, W, C, NCH, kDs, kPf, kAny, false, kTma>;
  plan.threads = threads;
  if constexpr (kTma) {
    if (!plan_ring<X, G>(plan, NCH, kOver ? kVec<G> : 0)) return Plan{};
  } else {
    plan.resident = resident_blocks(plan.kernel, plan.threads, 0);
    if (plan.resident <= 0) return Plan{};
  }
  plan.P = a.M < plan.resident ? a.M : plan.resident;
  return plan;
}

// The groups' plan (bwd_groups_kernel) for rows of up to kGroupChunks chunks a lane in a
// warp, or an empty plan: lanes a row, the least power of two from 4 that holds them;
// blocks of kGroupThreads, fewer where M rows fill fewer groups; the
// groups' partials in dynamic shared memory.
// From kGroupMinRows rows: run 45 measured decode (M=1, graph replay) 0.45-0.6 us slower in
// the groups than in a row-vector block (bf16 H=128 2.15 -> 2.60 us, H=512 1.74 -> 2.33) and
// M=4 faster (3.27 -> 2.20, 2.97 -> 2.23); M=2 and 3 stay with the block, unmeasured.
constexpr std::int64_t kGroupMinRows = 4;

template <class X, class G, class W, Convention C, bool kDs>
Plan group_plan(const BwdArgs& a) {
  const std::int64_t chunks = chunks_of<G>(a.H);
  if (a.M < kGroupMinRows || chunks > kGroupChunks * 32) return Plan{};
  int lanes = 4;
  while (lanes * kGroupChunks < chunks) lanes *= 2;
  const std::int64_t groups = std::min<std::int64_t>(a.M, kGroupThreads / lanes);
  Plan plan;
  plan.kernel = lanes == 4    ? bwd_groups_kernel<X, G, W, C, kDs, 4>
                : lanes == 8  ? bwd_groups_kernel<X, G, W, C, kDs, 8>
                : lanes == 16 ? bwd_groups_kernel<X, G, W, C, kDs, 16>
                              : bwd_groups_kernel<X, G, W, C, kDs, 32>;
  plan.threads = static_cast<int>(std::max<std::int64_t>(32, (groups * lanes + 31) / 32 * 32));
  const std::int64_t R = plan.threads / lanes;
  plan.smem = static_cast<std::size_t>(R * a.H) * sizeof(float);
  plan.resident = resident_blocks(plan.kernel, plan.threads, plan.smem);
  if (plan.resident <= 0) return Plan{};
  const std::int64_t row_blocks = (a.M + R - 1) / R;
  plan.P = row_blocks < plan.resident ? row_blocks : plan.resident;
  return plan;
}

// The chunks a thread of a cluster's block takes: 4, or 2 for an fp32 x with 16-bit dy (as
// choose_nch).
template <class X, class G>
constexpr int kClusterNch = sizeof(X) == 4 && sizeof(G) == 2 ? 2 : 4;

// Rows longer than a block holds, on sm_90+: S = 2..kMaxClusterBlocks slices of equal width
// (whole chunks; the last may be shorter), a cluster of S blocks a row block, each block the
// single-block kernel's work on its slice at NCH = kClusterNch and 512 threads or fewer.
// kAny leaves N - 1 columns a block for the shift. `cap`: a slice's columns at most, one
// block's row by default (spread_plan asks for narrower ones). An empty plan where S would
// pass kMaxClusterBlocks or the device runs no such cluster.
template <class X, class G, class W, Convention C, bool kDs, bool kPf, bool kAny, bool kTma>
Plan cluster_plan(const BwdArgs& a, std::int64_t cap = 0) {
  constexpr int N = kVec<G>;
  constexpr int NCH = kClusterNch<X, G>;
  const std::int64_t room = kAny ? N - 1 : 0;
  if (cap == 0) cap = (bwd_row_vector_block_H(a.xdtype) - room) / N * N;
  const std::int64_t S = (a.H + cap - 1) / cap;
  if (S < 2 || S > kMaxClusterBlocks) return Plan{};
  const std::int64_t cols = ((a.H + S - 1) / S + N - 1) / N * N;
  Plan plan;
  plan.threads = plan_threads(chunks_of<G>(cols + room), NCH);
  if (plan.threads == 0) return Plan{};
  plan.kernel = bwd_row_vector_kernel<X, G, W, C, NCH, kDs, kPf, kAny, true, kTma>;
  plan.cluster = static_cast<unsigned>(S);
  if constexpr (kTma) {
    if (!plan_ring<X, G>(plan, NCH)) return Plan{};
  } else {
    plan.resident = resident_clusters(plan.kernel, plan.threads, 0, static_cast<int>(S));
  }
  if (plan.resident <= 0) return Plan{};
  plan.cols = static_cast<int>(cols);
  plan.P = a.M < plan.resident ? a.M : plan.resident;
  return plan;
}

// A few rows (decode): one block on one SM a row moves about 20-25 GB/s (bwd bf16 M=1 H=16384
// 8.4 us of graph replay, docs/perf-notes.md run 46), so where the rows' slices fit the SMs a
// block each (M x S <= SMs), each row of kSpreadMinH columns or more is a cluster of S =
// 2..kMaxClusterBlocks blocks, slices of at least a warp's columns (32 threads x kClusterNch
// chunks). An empty plan elsewhere. The cluster's launch and its exchange of S cost a floor of
// about 3 us at M=1 (2.8-3.0 fp32, 3.3-4.0 16-bit, run 46): it won from 8192 columns (bwd M=1
// bf16 H=8192 4.85 -> 3.72 us, 16384 8.39 -> 3.77; fp32 4.45 -> 2.97, 5.97 -> 3.15; M=16
// bf16 H=16384 8.80 -> 7.70) and lost below (bf16 H=2048 2.47 -> 3.26, 4096 3.24 -> 3.52,
// 4097 3.19 -> 4.28; fp32 H=1024 1.38 -> 2.74; M=16-64 H=2048-4096 by 0.9-1.9). Past one row
// it takes kSpreadRowsMinH: at M=16 it won at H=16384 (bf16 8.80 -> 7.72, fp32 7.12 -> 6.70,
// add-bwd alike) and not at 8192 (bf16 6.62 -> 6.70, fp32 4.69 -> 5.77; M=2-15 untimed).
constexpr std::int64_t kSpreadMinH = 8192, kSpreadRowsMinH = 16384;

template <class X, class G, class W, Convention C, bool kDs, bool kAny>
Plan spread_plan(const BwdArgs& a) {
  constexpr std::int64_t N = kVec<G>, kWarpCols = 32 * kClusterNch<X, G> * N;
  if (a.H < (a.M > 1 ? kSpreadRowsMinH : kSpreadMinH)) return Plan{};
  const std::int64_t S = std::min<std::int64_t>((a.H + kWarpCols - 1) / kWarpCols, kMaxClusterBlocks);
  if (S < 2 || a.M < 1 || !one_wave(a.M * S)) return Plan{};
  // The narrowest whole-chunk slice that splits the row in S (cluster_plan then takes S or
  // fewer slices, and refuses one that with kAny's shift passes a block's threads).
  return cluster_plan<X, G, W, C, kDs, false, kAny, false>(a, ((a.H + S - 1) / S + N - 1) / N * N);
}

// 2 or 4 chunks a thread: whichever keeps more rows in flight per SM (the register count
// decides: ptxas -v), 2 on a tie (more threads for the same rows). An fp32 x with 16-bit dy
// (add-bwd, fp32 residual) takes 2 only: at 4 its 32 fp32 x and ds_out values a thread spill.
// Past one block's row: cluster_plan.
template <class X, class G, class W, Convention C, bool kDs, bool kPf, bool kAny, bool kTma = false>
Plan choose_nch(const BwdArgs& a) {
  // kAny: a block's chunks start up to N - 1 columns before column 0.
  const std::int64_t cols = kAny ? a.H + kVec<G> - 1 : a.H;
  if (cols > bwd_row_vector_block_H(a.xdtype)) {
    if constexpr (kAny && kTma) return Plan{};  // the shifted ring: one block's row only
    else return cluster_plan<X, G, W, C, kDs, kPf, kAny, kTma>(a);
  }
  const std::int64_t chunks = chunks_of<G>(cols);
  Plan best = make_plan<X, G, W, C, 2, kDs, kPf, kAny, kTma>(a, chunks);  // empty past a block
  if constexpr (!(sizeof(X) == 4 && sizeof(G) == 2)) {
    const Plan four = make_plan<X, G, W, C, 4, kDs, kPf, kAny, kTma>(a, chunks);
    if (four.kernel != nullptr && four.resident > best.resident) best = four;
  }
  return best;
}

// kTma's rows: every row of x and dy whole 16-byte vectors from an aligned start (so each is
// one bulk copy a slice).
template <class X, class G>
bool ring_rows(const BwdArgs& a) {
  return (a.H * static_cast<std::int64_t>(sizeof(X))) % 16 == 0 && (a.H * static_cast<std::int64_t>(sizeof(G))) % 16 == 0;
}

// `ring`: every row of x, dy, dx and ds_out starts 16-byte aligned and ring_rows holds. The
// ring (kTma) runs where rows are longer than kPrefetchMinH and some block gets a second row
// (M above the resident row blocks), as the prefetch does, and in add-bwd only within one
// block's row. Measured (H200, % of copy, registers -> ring, docs/perf-notes.md run 36):
// bwd bf16 M=16384 H=4096 83.8 -> 87.4, 8192 85.2 -> 91.4, 16384 87.6 -> 97.1, 32768
// (clusters of 2) 66.3 -> 73.1; bf16 x with fp32 w H=4096 67.3 -> 91.1; fp32 H=8192 91.2 ->
// 95.4; M=1024 H=65536 54.8 -> 57.4, fp32 65.7 -> 72.7; add-bwd bf16 H=4096 / 8192 87.7 /
// 89.2 -> 89.7 / 91.8. It lost in add-bwd clusters (fp32 M=1024 H=65536 71.7 -> 66.2) and at
// short rows (bwd bf16 M=65536 H=128 18.8 -> 14.9, H=512 75.5 -> 61.3, M=4096 H=2048 54.3 ->
// 51.4; add-bwd M=16384 H=128 15.6 -> 12.3), though it won at M=16384 H=1024 and 2048 (67.5
// -> 70.9, 79.2 -> 84.0).
// Rows from kRingShortMinH to kPrefetchMinH take the ring too where the blocks get more than
// kRingShortRows rows each on average: run 36's gains at M=16384 H=1024 and 2048 and its loss
// at M=4096 H=2048 (about 2 rows a block) set it; run 45 measures it.
constexpr std::int64_t kRingShortMinH = 512;
constexpr std::int64_t kRingShortRows = 2;

template <class X, class G, class W, Convention C, bool kDs, bool kAny>
Plan choose_plan_any(const BwdArgs& a, bool ring) {
  {
    const Plan spread = spread_plan<X, G, W, C, kDs, kAny>(a);
    if (spread.kernel != nullptr) return spread;
  }
  // Shifted rows (kAny) take the ring where x and dy are both 16-bit (and at one phase:
  // shifted_ring_rows), but not in add-bwd with a weight wider than x: its NCH=4 kernel
  // spilled 208 bytes there (-Xptxas -v; the aligned one 44). fp32 rows stay without it: on
  // an H100 (run 56, auto, M=16384, % of copy, base -> ring) it won bwd H=4097 (92.0 -> 93.4)
  // but lost bwd misaligned H=4096 (94.0 -> 90.4) and every shifted fp32 add-bwd (H=4097
  // 91.7 -> 87.5, misaligned 4096 91.7 -> 89.0), where bf16 won them all (bwd H=4097 80.4 ->
  // 84.3, add-bwd 70.6 -> 74.6).
  if constexpr (!kAny || (sizeof(X) == 2 && sizeof(G) == 2 && !(kDs && sizeof(W) > sizeof(X)))) {
    const bool long_rows = a.H > kPrefetchMinH;
    if (ring && a.H > kRingShortMinH) {
      const Plan plan = choose_nch<X, G, W, C, kDs, false, kAny, true>(a);
      if (plan.kernel != nullptr && a.M > (long_rows ? 1 : kRingShortRows) * plan.resident &&
          (!kDs || plan.cluster == 1))
        return plan;
    }
  }
  if constexpr (!kDs) {
    // The prefetch pays only where some block gets a second row (M above the resident
    // blocks): with one row a block there is nothing to prefetch, and its 93 registers cost
    // 0.5-0.7 us at M=1 H=4096 in graph replay (perf-notes run 23).
    if (a.H > kPrefetchMinH) {
      const Plan pf = choose_nch<X, G, W, C, false, true, kAny>(a);
      if (pf.kernel != nullptr && a.M > pf.resident) return pf;
    }
  }
  return choose_nch<X, G, W, C, kDs, false, kAny>(a);
}

// Whether every row of a tensor of T (base, `stride` elements apart) starts 16-byte aligned.
template <class T>
bool rows_aligned16(const void* base, std::int64_t stride, std::int64_t M) {
  return rb::kern::rows_aligned16(reinterpret_cast<std::uintptr_t>(base), stride,
                                  static_cast<std::int64_t>(sizeof(T)), M);
}

// The least P for which rows r and r + P of a tensor of T start at one 16-byte phase: 8 for
// 16-bit rows of odd stride, 1 for aligned strides (a power of two).
template <class T>
std::int64_t phase_period(std::int64_t stride) {
  const std::int64_t b = ((stride * static_cast<std::int64_t>(sizeof(T))) % 16 + 16) % 16;
  return b == 0 ? 1 : 16 / std::gcd<std::int64_t>(16, b);
}

// kAny (ownership shifted a block at a time) where some row of x, dy, ds_out or dx does not
// start 16-byte aligned. Its grid is rounded down to a multiple of every tensor's phase
// period (powers of two: the largest), so each block's rows share their phases. Where the
// shift leaves no plan (a row of 16-bit H > 16376 needs one chunk more than 512 threads x 4
// hold), the unshifted kernel runs: correct at any phase, element by element.
// `aligned`: every row of x, dy, dx and ds_out starts 16-byte aligned (rows_aligned).
template <class X, class G, bool kDs>
bool rows_aligned(const BwdArgs& a) {
  return rows_aligned16<X>(a.x, a.x_stride, a.M) && rows_aligned16<G>(a.dy, a.dy_stride, a.M) &&
         rows_aligned16<X>(a.dx, a.dx_stride, a.M) && (!kDs || rows_aligned16<X>(a.ds_out, a.ds_stride, a.M));
}

// The ring for shifted rows (kAny with kTma; x and dy 16-bit: choose_plan_any):
// x and dy at one phase in every row (the same stride and the same base phase), so one shift
// puts both images on 16-byte boundaries. dx and ds_out go through global memory at whatever
// phase they have.
inline bool shifted_ring_rows(const BwdArgs& a) {
  return (a.M <= 1 || a.x_stride == a.dy_stride) &&
         reinterpret_cast<std::uintptr_t>(a.x) % 16 == reinterpret_cast<std::uintptr_t>(a.dy) % 16;
}

// `shift_ring`: whether rows that are not 16-byte aligned may take the ring (where
// shifted_ring_rows holds); the workspace asks for both answers (WithPlan).
template <class X, class G, class W, Convention C, bool kDs>
Plan choose_plan(const BwdArgs& a, bool aligned, bool shift_ring = true) {
  if (aligned) {
    // Short rows: groups of lanes, several rows a block (docs/perf-notes.md run 45).
    const Plan groups = group_plan<X, G, W, C, kDs>(a);
    if (groups.kernel != nullptr) return groups;
    return choose_plan_any<X, G, W, C, kDs, false>(a, ring_rows<X, G>(a));
  }
  const std::int64_t period = std::max({phase_period<X>(a.x_stride), phase_period<G>(a.dy_stride),
                                        phase_period<X>(a.dx_stride), kDs ? phase_period<X>(a.ds_stride) : 1});
  const auto shifted = [&](bool ring) {
    Plan plan = choose_plan_any<X, G, W, C, kDs, true>(a, ring);
    if (plan.P < a.M && plan.P > period) plan.P -= plan.P % period;  // P = M: a row a block
    return plan;
  };
  Plan plan = shifted(shift_ring && shifted_ring_rows(a));
  // The ring's bulk copies need every row of a block at the block's phase: a grid of fewer
  // row blocks than the period (a small device) cannot give them that, so it goes without.
  if (plan.stages > 0 && plan.P < a.M && plan.P % period != 0) plan = shifted(false);
  if (plan.kernel == nullptr) return choose_plan_any<X, G, W, C, kDs, false>(a, false);
  return plan;
}

// staged: 2 chunks a thread where 512 threads hold the row, else 4 (registers are no limit:
// the row is in shared memory, a thread keeps only w and its dw partials). Stages: the ring
// depth (2..4) that keeps the most row bytes in flight per SM, counted up to kInFlight (what
// an SM's share of the copy bandwidth needs over a DRAM latency under load, with margin);
// past it, more resident blocks (a block's barriers then stall fewer of the SM's warps: the
// tie-break toward fewer blocks, to read fewer partial rows, ran bf16 H=8192 at one 512-thread
// block an SM and 4 stages, 46% of copy, docs/perf-notes.md run 17), then fewer stages.
constexpr std::size_t kInFlight = 96 * 1024;

struct StagedPlan : PlanOf<StagedKernel> {
  Ring ring;
};

template <class X, class G, class W, Convention C, bool kDs>
StagedPlan choose_staged_plan(const BwdArgs& a) {
  const std::int64_t chunks = chunks_of<G>(a.H);
  StagedPlan plan;
  const bool two = chunks <= 2 * kMaxThreads;
  plan.threads = plan_threads(chunks, two ? 2 : 4);
  if (plan.threads == 0) return StagedPlan{};
  plan.kernel = two ? bwd_staged_kernel<X, G, W, C, 2, kDs> : bwd_staged_kernel<X, G, W, C, 4, kDs>;
  const std::size_t max_smem = allow_max_dynamic_smem(reinterpret_cast<const void*>(plan.kernel));
  const int sms = sm_count();
  if (max_smem == 0 || sms == 0) return StagedPlan{};
  Ring ring;
  ring.slot_x = static_cast<int>(stage_slot_bytes<X>(a.H));
  ring.slot_g = static_cast<int>(stage_slot_bytes<G>(a.H));
  ring.stage = ring.slot_x + ring.slot_g + (kDs ? ring.slot_x : 0);
  const bool dx_rows_aligned = reinterpret_cast<std::uintptr_t>(a.dx) % 16 == 0 &&
                               (a.dx_stride * static_cast<std::int64_t>(sizeof(X))) % 16 == 0;
  const auto with_depth = [&](int stages) {
    Ring r = ring;
    r.stages = stages;
    r.dxbuf = dx_rows_aligned ? -1 : r.stage * stages;
    return r;
  };
  const RingDepth d = best_ring_depth(
      kInFlight,
      [&](int stages) -> std::int64_t {
        const Ring r = with_depth(stages);
        if (r.bytes() > max_smem) return 0;
        return resident_blocks(plan.kernel, plan.threads, r.bytes());
      },
      [&](int stages, std::int64_t resident) {  // the row being computed is not in flight
        return static_cast<std::size_t>(resident) * (stages - 1) * ring.stage / sms;
      });
  if (d.stages == 0) return StagedPlan{};
  plan.ring = with_depth(d.stages);
  plan.resident = d.resident;
  plan.P = a.M < plan.resident ? a.M : plan.resident;
  return plan;
}

// Calls f(plan, W{}) with the configuration for a's dtypes and H (a function object, for the
// host helpers of bwd_common.cuh); with_staged_plan the same for staged. kShifted: the plan
// row-vector makes where some row is not 16-byte aligned, whatever a's pointers (for the
// workspace size, asked before tensors are bound).
template <bool kStaged, bool kShifted = false, bool kShiftRing = true>
struct WithPlan {
  template <class F>
  cudaError_t operator()(const BwdArgs& a, F&& f) const {
    const std::int64_t max_H = kStaged ? bwd_row_vector_block_H(a.xdtype) : bwd_row_vector_max_H(a.xdtype);
    if (a.H < 1 || a.M < 0 || a.H > max_H) return cudaErrorInvalidValue;
    return dispatch_bwd(a, [&](auto xt, auto gt, auto wt, auto c) -> cudaError_t {
      using X = decltype(xt);
      using G = decltype(gt);
      using W = decltype(wt);
      constexpr Convention C = decltype(c)::value;
      if constexpr (kStaged) {
        const StagedPlan plan = a.ds_out != nullptr ? choose_staged_plan<X, G, W, C, true>(a)
                                                    : choose_staged_plan<X, G, W, C, false>(a);
        if (plan.kernel == nullptr) return cudaErrorInvalidConfiguration;
        return f(plan, W{});
      } else {
        const Plan plan =
            a.ds_out != nullptr
                ? choose_plan<X, G, W, C, true>(a, !kShifted && rows_aligned<X, G, true>(a), kShiftRing)
                : choose_plan<X, G, W, C, false>(a, !kShifted && rows_aligned<X, G, false>(a), kShiftRing);
        if (plan.kernel == nullptr) return cudaErrorInvalidConfiguration;
        return f(plan, W{});
      }
    });
  }
};
constexpr WithPlan<false> with_plan{};
constexpr WithPlan<true> with_staged_plan{};

}  // namespace

std::int64_t bwd_row_vector_block_H(DType x) {
  // kMaxChunks chunks of 8 columns for a 16-bit x (dy is x's dtype, or 16-bit with an fp32
  // x); half for an fp32 x (see the header).
  return x == DType::f32 ? 8192 : 16384;
}

std::int64_t bwd_row_vector_max_H(DType x) {
  // Clusters where this device runs them for this file's kernels (asked of one of them: the
  // rest are built for the same architectures).
  const bool cl =
      resident_clusters(
          bwd_row_vector_kernel<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, Convention::fp32, 4, false, false, false, true, false>,
          kMaxThreads, 0, 2) > 0;
  return bwd_row_vector_block_H(x) * (cl ? kMaxClusterBlocks : 1);
}

// Asked before the tensors are bound (null pointers read as aligned rows), and where rows are
// not 16-byte aligned the shifted plan may take more partial rows than the aligned one (a row
// a block at M=300 H=128, where the groups take 32 rows a block), with or without the ring
// (the bound tensors' phases decide it): all three.
std::size_t bwd_row_vector_workspace_bytes(const BwdArgs& a) {
  return planned_workspace_bytes(a, with_plan, WithPlan<false, true>{}, WithPlan<false, true, false>{});
}

cudaError_t launch_bwd_row_vector(const BwdArgs& a, cudaStream_t s) {
  return launch_planned(a, s, with_plan, [&](const Plan& plan, float* part, void* dw_direct) {
    launch_ex(true, plan.cluster, plan.kernel, static_cast<unsigned>(plan.P * plan.cluster), plan.threads, plan.smem,
              s, a, part, dw_direct, plan.cols, plan.stages);
    return dw_direct != nullptr;  // OwnedColumns::write_partials wrote dw
  });
}

std::size_t bwd_staged_workspace_bytes(const BwdArgs& a) { return planned_workspace_bytes(a, with_staged_plan); }

cudaError_t launch_bwd_staged(const BwdArgs& a, cudaStream_t s) {
  return launch_planned(a, s, with_staged_plan, [&](const StagedPlan& plan, float* part, void* dw_direct) {
    launch_pdl(true, plan.kernel, static_cast<unsigned>(plan.P), plan.threads, plan.ring.bytes(), s, a, part,
               dw_direct, plan.ring);
    return dw_direct != nullptr;
  });
}

}  // namespace rb::kern

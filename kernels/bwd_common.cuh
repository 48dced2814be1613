// Device building blocks shared by the backward strategies (bwd and add-bwd, BwdArgs): a
// row's tensor pointers; chunks of N consecutive columns moved as 16-byte vectors where the
// chunk is whole and its address 16-byte aligned, element by element otherwise; dw's column
// reduction, the second kernel of every strategy with partials; and the host side (workspace
// size, launch) of the persistent-grid strategies. Resident-block counts: common.cuh.
//
// dw is deterministic by construction: each block of a persistent grid of P blocks owns
// partial row p of the workspace (P x H fp32) and adds its rows into it in row order; the
// column sum then adds the P partials of a column in a fixed order (below). Nothing depends
// on block scheduling and nothing uses atomics, so dw is bitwise repeatable for a given P,
// and P depends only on (device, kernel configuration, M).
#pragma once

#include <algorithm>

#include "kernels/common.cuh"
#include "kernels/epilogue.cuh"

namespace rb::kern {

// A row's tensors in a (row `row`): x, dy, ds (ds_out; nullptr without it) and dx at the
// row's first column, each through its own stride; w, the one weight vector of every row.
template <class X, class G, class W>
struct BwdRow {
  const X* x;
  const G* dy;
  const W* w;
  const X* ds;
  X* dx;
  __device__ __forceinline__ BwdRow(const BwdArgs& a, std::int64_t row)
      : x(static_cast<const X*>(a.x) + row * a.x_stride),
        dy(static_cast<const G*>(a.dy) + row * a.dy_stride),
        w(static_cast<const W*>(a.w)),
        ds(a.ds_out != nullptr ? static_cast<const X*>(a.ds_out) + row * a.ds_stride : nullptr),
        dx(static_cast<X*>(a.dx) + row * a.dx_stride) {}
};

// How a chunk load reaches memory: plain (cached in L1, for rows read again), streaming
// (evict-first, for rows read once) or read-only (__ldg, for the weight).
enum class Ld { plain, stream, ro };

template <Ld kMode>
__device__ __forceinline__ uint4 load_vec(const uint4* p) {
  if constexpr (kMode == Ld::stream)
    return __ldcs(p);
  else if constexpr (kMode == Ld::ro)
    return __ldg(p);
  else
    return *p;
}

// 16-byte vectors that hold a chunk of N elements of T.
template <class T, int N>
inline constexpr int kChunkVecs = N* static_cast<int>(sizeof(T)) / 16;

// Columns [c + first, c + valid) of a row of T, with p = row + c, into raw: N elements in
// the storage type, packed in 16-byte vectors as in memory; elements before `first` or at
// or past `valid` are zero bits (+0 in every type: they add nothing to a sum) and are not
// read (p may point before the row: a chunk that starts before column 0). Whole vectors
// when all N are valid and p is 16-byte aligned, element by element otherwise (the
// elements' bits packed into 32-bit words, so both paths leave the chunk in the same
// registers). N * sizeof(T) is a multiple of 16 for every type and N we use.
template <class T, int N, Ld kMode>
__device__ __forceinline__ void load_cols(const T* p, int first, int valid, uint4* raw) {
  static_assert((N * sizeof(T)) % 16 == 0, "a chunk is whole 16-byte vectors");
  constexpr int kVecs = kChunkVecs<T, N>;
  if (first <= 0 && valid >= N && aligned16(p)) {
#pragma unroll
    for (int v = 0; v < kVecs; ++v) raw[v] = load_vec<kMode>(reinterpret_cast<const uint4*>(p) + v);
  } else {
    unsigned words[4 * kVecs];
    if constexpr (sizeof(T) == 4) {
      const unsigned* b = reinterpret_cast<const unsigned*>(p);
#pragma unroll
      for (int k = 0; k < N; ++k) words[k] = k >= first && k < valid ? b[k] : 0u;
    } else {
      const unsigned short* b = reinterpret_cast<const unsigned short*>(p);
#pragma unroll
      for (int k = 0; k < N / 2; ++k) {
        const unsigned lo = 2 * k >= first && 2 * k < valid ? b[2 * k] : 0u;
        const unsigned hi = 2 * k + 1 >= first && 2 * k + 1 < valid ? b[2 * k + 1] : 0u;
        words[k] = lo | (hi << 16);
      }
    }
#pragma unroll
    for (int v = 0; v < kVecs; ++v)
      raw[v] = make_uint4(words[4 * v], words[4 * v + 1], words[4 * v + 2], words[4 * v + 3]);
  }
}

// The same from column c on (first = 0).
template <class T, int N, Ld kMode>
__device__ __forceinline__ void load_cols(const T* p, int valid, uint4* raw) {
  load_cols<T, N, kMode>(p, 0, valid, raw);
}

// A chunk loaded by load_cols as N floats; paired conversions for 16-bit T.
template <class T, int N>
__device__ __forceinline__ void cols_to_f32(const uint4* raw, float* out) {
#pragma unroll
  for (int v = 0; v < kChunkVecs<T, N>; ++v) unpack<T>(raw[v], out + v * kVec<T>);
}

// A weight chunk as the effective weights of convention C (epilogue.cuh): w itself for fp32
// and llama, 1 + w for gemma and zero-centered.
template <Convention C, class W, int N>
__device__ __forceinline__ void weights_to_f32(const uint4* raw, float* out) {
  cols_to_f32<W, N>(raw, out);
#pragma unroll
  for (int k = 0; k < N; ++k) out[k] = effective_weight<C, W>(out[k]);
}

// One column's backward, the arithmetic every backward kernel shares: its dx without ds_out,
// rrms * g - x * corr, with g = dy * w_eff rounded once (w: the effective weight, corr =
// rrms^3 / H * S); and its dw partial after the column, dw + (dy * x) * rrms in one fma.
__device__ __forceinline__ float column_dx(float x, float g, float w, float r, float corr) {
  return fmaf(-x, corr, r * (g * w));
}
__device__ __forceinline__ float column_dw(float dw, float x, float g, float r) { return fmaf(g * x, r, dw); }

// raw ^= z, for a z that is 0 at run time but unknown to the compiler. Floats converted
// from a chunk before this point then cannot be reused after it, so they are converted
// again rather than kept live across a reduction (fp32 copies take twice the registers of
// 16-bit chunks). An empty asm statement would not do: ptxas sees through it.
template <int kVecs>
__device__ __forceinline__ void reconvert_after(uint4* raw, unsigned z) {
#pragma unroll
  for (int v = 0; v < kVecs; ++v) {
    raw[v].x ^= z;
    raw[v].y ^= z;
    raw[v].z ^= z;
    raw[v].w ^= z;
  }
}

// Stores columns [c + first, c + valid) of f (rounded to T) at p = row + c: 16-byte vectors
// (store_out's kSt) when the chunk is whole and p 16-byte aligned, element by element
// otherwise. Never touches an element before `first` or at or past `valid`.
template <class T, int N, St kSt = St::stream>
__device__ __forceinline__ void store_cols(T* p, int first, int valid, const float* f) {
  if (first <= 0 && valid >= N && aligned16(p)) {
#pragma unroll
    for (int v = 0; v < N / kVec<T>; ++v)
      store_out<kSt>(reinterpret_cast<uint4*>(p) + v, pack<T>(f + v * kVec<T>));
  } else {
#pragma unroll
    for (int k = 0; k < N; ++k)
      if (k >= first && k < valid) p[k] = from_f32<T>(f[k]);
  }
}

// The same from column c on (first = 0).
template <class T, int N>
__device__ __forceinline__ void store_cols(T* p, int valid, const float* f) {
  store_cols<T, N>(p, 0, valid, f);
}

// ---- rows staged in shared memory (the `staged` backward) ---------------------------------
// A row of T is copied as the 16-byte granules of global memory that cover it,
// [floor16(row), ceil16(row + H)), granule k to slot + 16 k, so the row's column 0 sits at
// slot + (row & 15): the same phase in shared memory as in global memory. Granules are
// copied by cp.async (asynchronous; visible after cp_async_wait and a barrier); a granule
// that reaches outside the tensor's own bytes [lo, hi) (a row at either end of a tensor
// whose base or end is not 16-byte aligned) is copied element by element, only the row's
// elements in it, with plain loads. Granule bytes outside the row (a neighbouring row's,
// or a stride's padding, all inside the tensor) land in the slot but are never used.
template <class T>
inline constexpr std::size_t stage_slot_bytes(std::int64_t H) {
  return (static_cast<std::size_t>(H) * sizeof(T) + 15) / 16 * 16 + 64;  // + phase + granules read ahead
}

// The byte range [lo, hi) of a tensor of M rows of H elements, `stride` elements apart.
struct TensorSpan {
  std::uintptr_t lo, hi;
  template <class T>
  __device__ __forceinline__ TensorSpan(const T* base, std::int64_t M, std::int64_t stride, std::int64_t H) {
    const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(base);
    const std::uintptr_t last = reinterpret_cast<std::uintptr_t>(base + (M > 0 ? M - 1 : 0) * stride);
    lo = first < last ? first : last;
    hi = (first < last ? last : first) + static_cast<std::uintptr_t>(H) * sizeof(T);
  }
};

// The 16-byte granules of global memory that cover a row of T: granule k at g0 + 16 k, k <
// ng; the row's own bytes are [rs, re).
template <class T>
struct RowGranules {
  std::uintptr_t rs, re, g0;
  int ng;
  __device__ __forceinline__ RowGranules(const T* row, int H)
      : rs(reinterpret_cast<std::uintptr_t>(row)),
        re(rs + static_cast<std::uintptr_t>(H) * sizeof(T)),
        g0(rs & ~std::uintptr_t{15}),
        ng(static_cast<int>((((re + 15) & ~std::uintptr_t{15}) - g0) >> 4)) {}
  __device__ __forceinline__ std::uintptr_t at(int k) const { return g0 + 16u * static_cast<unsigned>(k); }
  // The row's elements in granule g, one by one, between global memory and its shared image
  // `image` (the granule's 16 bytes in shared memory): into the image, or out of it.
  template <bool kToShared>
  __device__ __forceinline__ void copy_elements(std::uintptr_t g, unsigned char* image) const {
    using Bits = std::conditional_t<sizeof(T) == 2, unsigned short, unsigned>;
    const std::uintptr_t b = g < rs ? rs : g, e = g + 16 < re ? g + 16 : re;
    for (std::uintptr_t q = b; q < e; q += sizeof(T)) {
      Bits* sh = reinterpret_cast<Bits*>(image + (q - g));
      if constexpr (kToShared)
        *sh = *reinterpret_cast<const Bits*>(q);
      else
        *reinterpret_cast<Bits*>(q) = *sh;
    }
  }
};

template <class T>
__device__ __forceinline__ void stage_row(const T* row, int H, const TensorSpan& t, unsigned char* slot) {
  const RowGranules<T> r(row, H);
  for (int k = threadIdx.x; k < r.ng; k += blockDim.x) {
    const std::uintptr_t g = r.at(k);
    if (g >= t.lo && g + 16 <= t.hi)
      cp_async16(slot + 16 * k, reinterpret_cast<const void*>(g));
    else
      r.template copy_elements<true>(g, slot + 16 * k);
  }
}

// load_cols from a staged row: p = the slot's column c (any even phase, the row's), columns
// [first, valid) of N, the rest zero bits (the shared image may hold other bytes there: a
// neighbouring row's, or what precedes the tensor). One 16-byte load per vector when the row
// is 16-byte aligned, else one more and a funnel shift (shift16): the row's phase is the same
// for every chunk, so the branch is uniform across the block.
template <class T, int N>
__device__ __forceinline__ void load_cols_shared(const unsigned char* p, int first, int valid, uint4* raw) {
  constexpr int kVecs = kChunkVecs<T, N>;
  const unsigned phase = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(p) & 15u);
  const uint4* a = reinterpret_cast<const uint4*>(p - phase);
  if (phase == 0) {
#pragma unroll
    for (int v = 0; v < kVecs; ++v) raw[v] = a[v];
  } else {
    uint4 q[kVecs + 1];
#pragma unroll
    for (int v = 0; v <= kVecs; ++v) q[v] = a[v];
#pragma unroll
    for (int v = 0; v < kVecs; ++v) raw[v] = shift16(q[v], q[v + 1], phase);
  }
  if (first > 0 || valid < N) {  // zero the elements before `first` and past the row's end
    unsigned* w = reinterpret_cast<unsigned*>(raw);
#pragma unroll
    for (int k = 0; k < 4 * kVecs; ++k) {
      if constexpr (sizeof(T) == 4) {
        if (k < first || k >= valid) w[k] = 0u;
      } else {
        if (2 * k < first || 2 * k >= valid) w[k] &= 0xffff0000u;
        if (2 * k + 1 < first || 2 * k + 1 >= valid) w[k] &= 0x0000ffffu;
      }
    }
  }
}

// The same from column c on (first = 0).
template <class T, int N>
__device__ __forceinline__ void load_cols_shared(const unsigned char* p, int valid, uint4* raw) {
  load_cols_shared<T, N>(p, 0, valid, raw);
}

// A row of T written from its shared-memory image at the row's phase (slot + (row & 15),
// as stage_row lays it out): whole granules inside the row as streaming 16-byte stores,
// the row's elements in its first and last granule one by one. Every thread of the block
// calls it, after a barrier that follows the image's writes.
template <class T>
__device__ __forceinline__ void store_row_from_shared(T* row, int H, unsigned char* slot) {
  const RowGranules<T> r(row, H);
  for (int k = threadIdx.x; k < r.ng; k += blockDim.x) {
    const std::uintptr_t g = r.at(k);
    if (g >= r.rs && g + 16 <= r.re)
      store_out(reinterpret_cast<uint4*>(g), *reinterpret_cast<const uint4*>(slot + 16 * k));
    else
      r.template copy_elements<false>(g, slot + 16 * k);
  }
}

// ---- dw column sum -------------------------------------------------------------------------
// dw[c] = sum over p of part[p * H + c], p in [0, P). A block takes 32 columns (x) and 32
// groups (y): group g adds the partials p = g, g + 32, g + 64, ... in increasing p, eight
// loads in flight; then one thread per column adds the 32 group sums in order g = 0..31 and
// rounds once to W. The order of every addition is fixed by (P, c) alone. P = 0 writes
// dw = 0 (M == 0).
constexpr int kSumCols = 32;
constexpr int kSumGroups = 32;
constexpr int kSumBatch = 8;  // loads in flight a thread

template <class W>
__global__ void __launch_bounds__(kSumCols* kSumGroups)
    dw_column_sum_kernel(const float* __restrict__ part, std::int64_t P, std::int64_t H, W* __restrict__ dw) {
  pdl_begin();
  __shared__ float group_sum_of[kSumGroups][kSumCols + 1];
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * kSumCols + threadIdx.x;
  float s = 0.f;
  if (c < H) {
    std::int64_t p = threadIdx.y;
    for (; p + (kSumBatch - 1) * kSumGroups < P; p += kSumBatch * kSumGroups) {
      float v[kSumBatch];
#pragma unroll
      for (int k = 0; k < kSumBatch; ++k) v[k] = part[(p + k * kSumGroups) * H + c];
#pragma unroll
      for (int k = 0; k < kSumBatch; ++k) s += v[k];
    }
    for (; p < P; p += kSumGroups) s += part[p * H + c];
  }
  group_sum_of[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y == 0 && c < H) {
    float t = group_sum_of[0][threadIdx.x];
#pragma unroll
    for (int g = 1; g < kSumGroups; ++g) t += group_sum_of[g][threadIdx.x];
    dw[c] = from_f32<W>(t);
  }
}

template <class W>
void launch_dw_column_sum(const float* part, std::int64_t P, std::int64_t H, void* dw, cudaStream_t s) {
  const std::int64_t blocks = (H + kSumCols - 1) / kSumCols;
  launch_pdl(true, dw_column_sum_kernel<W>, static_cast<unsigned>(blocks), dim3(kSumCols, kSumGroups), 0, s, part, P, H,
             static_cast<W*>(dw));
}

// Workspace bytes of P partial rows of H fp32.
inline std::size_t partial_bytes(std::int64_t P, std::int64_t H) {
  return static_cast<std::size_t>(P) * static_cast<std::size_t>(H) * sizeof(float);
}

// The launcher's check of the caller's workspace against what the launch writes.
inline bool workspace_ok(const BwdArgs& a, std::size_t need) {
  return need == 0 || (a.workspace != nullptr && a.workspace_bytes >= need);
}

// ---- host side of the persistent-grid strategies (chunked, row-vector) ---------------------
// with_plan(a, f) checks a, makes the launch configuration for a's dtypes, convention and H
// and returns f(plan, W{}) (W: w's dtype), or its own error without calling f. plan.P is the number of
// row blocks of the persistent grid = partial rows of the workspace (0 when M == 0).

// The workspace of a launch of a's shape: plan.P partial rows of H fp32 (0 where with_plan
// refuses a), the most of any binding. The caller asks before it binds the tensors (null
// pointers: the harness sizes the workspace from the problem), and the plan may turn on them:
// the kernel for ds_out (add-bwd) where ds_out is present, and each of `with_plans`
// (row-vector: its plan for aligned rows and its plan for shifted ones). Planning reads only
// whether ds_out is null and whether its rows are 16-byte aligned (the shifted plans stand
// for rows that are not), so a 16-byte-aligned address no one reads stands in for it.
template <class... WithPlan>
std::size_t planned_workspace_bytes(const BwdArgs& a, const WithPlan&... with_plans) {
  alignas(16) static const unsigned char kPlanningOnly[16] = {};
  std::size_t bytes = 0;
  for (const bool ds : {false, true}) {
    BwdArgs b = a;
    if (ds != (b.ds_out != nullptr)) b.ds_out = ds ? kPlanningOnly : nullptr;
    const auto one = [&](const auto& with_plan) {
      with_plan(b, [&](const auto& plan, auto) -> cudaError_t {
        bytes = std::max(bytes, partial_bytes(plan.P, b.H));
        return cudaSuccess;
      });
    };
    (one(with_plans), ...);
  }
  return bytes;
}

// a's launch: the caller's workspace checked against the plan's partial rows, then
// launch_rows(plan, part, dw_direct) where there are rows (P > 0: the row kernel, its
// partials into part = the workspace), then dw's column sum of the P partials. With a single
// partial row (P == 1: decode, M = 1) dw_direct is dw, and a kernel that can writes dw itself
// and returns true: one launch, not two. Returns the launch error.
template <class WithPlan, class LaunchRows>
cudaError_t launch_planned(const BwdArgs& a, cudaStream_t s, const WithPlan& with_plan,
                           const LaunchRows& launch_rows) {
  return with_plan(a, [&](const auto& plan, auto wt) -> cudaError_t {
    using W = decltype(wt);
    if (!workspace_ok(a, partial_bytes(plan.P, a.H))) return cudaErrorInvalidValue;
    float* part = static_cast<float*>(a.workspace);
    const bool dw_written = plan.P > 0 && launch_rows(plan, part, plan.P == 1 ? a.dw : nullptr);
    if (!dw_written) launch_dw_column_sum<W>(part, plan.P, a.H, a.dw, s);
    return cudaGetLastError();
  });
}

// The columns a thread of a fixed-ownership kernel (row-vector, staged) owns for the whole
// launch: NCH chunks of N = kVec<dy> columns, chunk i at column c0 + i * step (step = the
// block's threads * N, or a group's lanes * N), columns [first(i), valid(i)) of them inside the row; its weights
// (raw, loaded once) and its fp32 dw partials, all in registers.
// kShift (row-vector, rows not 16-byte aligned): the block's chunks start `shift` columns
// before column 0, the shift that puts its rows' chunks on 16-byte boundaries (all its rows
// share one phase: bwd_row_vector.cu), so the first chunk of the block is partial at both
// ends of a row instead of every chunk being misaligned.
template <class W, int N, int NCH, bool kShift = false>
struct OwnedColumns {
  int H, c0, step;
  float inv_H;
  uint4 wr[NCH][kChunkVecs<W, N>];
  float dw[NCH][N];

  // The block's threads own the row: thread t its chunks from column t * N.
  __device__ __forceinline__ explicit OwnedColumns(const BwdArgs& a, int shift = 0)
      : OwnedColumns(a, static_cast<int>(threadIdx.x), static_cast<int>(blockDim.x), shift) {}

  // A group of `lanes` threads owns the row (bwd row-vector's groups): lane l its chunks from
  // column l * N, `lanes` chunks apart.
  __device__ __forceinline__ OwnedColumns(const BwdArgs& a, int lane, int lanes, int shift)
      : H(static_cast<int>(a.H)),  // <= bwd_row_vector_max_H
        c0(lane * N - (kShift ? shift : 0)),
        step(lanes * N),
        inv_H(1.f / static_cast<float>(H)) {
    const W* w = static_cast<const W*>(a.w) + c0;
#pragma unroll
    for (int i = 0; i < NCH; ++i) {
      load_cols<W, N, Ld::ro>(w + i * step, first(i), valid(i), wr[i]);
#pragma unroll
      for (int k = 0; k < N; ++k) dw[i][k] = 0.f;
    }
  }

  __device__ __forceinline__ int valid(int i) const {
    const int v = H - (c0 + i * step);
    return v >= N ? N : (v > 0 ? v : 0);
  }

  // Chunk i's first column inside the row: 0 but for a shifted block's chunk at column < 0.
  __device__ __forceinline__ int first(int i) const {
    if constexpr (kShift) {
      const int f = -(c0 + i * step);
      return f > 0 ? f : 0;
    } else {
      return 0;
    }
  }

  // s += chunk i's share of S = sum_j (dy[j] * w_eff[j]) * x[j], element by element in order
  // (columns past the row's end hold zeros: they add nothing).
  template <Convention C>
  __device__ __forceinline__ void add_to_S(int i, const float* xf, const float* gf, float& s) const {
    float wf[N];
    weights_to_f32<C, W, N>(wr[i], wf);
#pragma unroll
    for (int k = 0; k < N; ++k) s += gf[k] * wf[k] * xf[k];
  }

  // Chunk i's dx (without ds_out) into d, and its dw partials updated: g = dy * w_eff rounded
  // once, dx = rrms * g - x * corr (corr = rrms^3 / H * S), dw += (dy * x) * rrms in one fma.
  template <Convention C>
  __device__ __forceinline__ void backward(int i, const float* xf, const float* gf, float r, float corr, float* d) {
    float wf[N];
    weights_to_f32<C, W, N>(wr[i], wf);
#pragma unroll
    for (int k = 0; k < N; ++k) {
      d[k] = column_dx(xf[k], gf[k], wf[k], r, corr);
      dw[i][k] = column_dw(dw[i][k], xf[k], gf[k], r);
    }
  }

  // The partials, as row p_row of the workspace (rows of ld floats, this block's columns from
  // part's column 0); or, with dw_direct (the launch has one row block, so its partial is the
  // column sum), as dw itself: rounded to W exactly as the column sum rounds its total
  // (0 + partial, so -0 becomes +0 there too): the same bits either way. dw by store_cols:
  // 16-byte vectors where the chunk is whole and aligned. Element by element (8 x NCH 2-byte
  // stores a thread in 16-bit) the decode backward ran slower, graph replay M=1 bf16 H=2048
  // 2.52 -> 1.97 us, 4096 3.25 -> 1.96-2.15, fp32 4096 2.93 -> 1.97, bf16 x with fp32 w 5.11
  // -> 3.00 (docs/perf-notes.md run 47).
  __device__ __forceinline__ void write_partials(float* part, std::int64_t p_row, std::int64_t ld,
                                                 W* dw_direct) const {
    if (dw_direct != nullptr) {
#pragma unroll
      for (int i = 0; i < NCH; ++i) {
        float t[N];
#pragma unroll
        for (int k = 0; k < N; ++k) t[k] = 0.f + dw[i][k];  // a -0 sum stores +0, as the column sum's
        store_cols<W, N, St::plain>(dw_direct + c0 + i * step, first(i), valid(i), t);
      }
      return;
    }
    float* prow = part + p_row * ld + c0;
#pragma unroll
    for (int i = 0; i < NCH; ++i) {
      float* p = prow + i * step;
      const int f = first(i), v = valid(i);
      if (f == 0 && v == N && aligned16(p)) {
#pragma unroll
        for (int q = 0; q < N / 4; ++q)
          reinterpret_cast<float4*>(p)[q] =
              make_float4(dw[i][4 * q], dw[i][4 * q + 1], dw[i][4 * q + 2], dw[i][4 * q + 3]);
      } else {
#pragma unroll
        for (int k = 0; k < N; ++k)
          if (k >= f && k < v) p[k] = dw[i][k];
      }
    }
  }
};

}  // namespace rb::kern

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

// Columns [c, c + valid) of a row of T, with p = row + c, into raw: N elements in the
// storage type, packed in 16-byte vectors as in memory; elements at or past `valid` are
// zero bits (+0 in every type: they add nothing to a sum). Whole vectors when all N are
// valid and p is 16-byte aligned, element by element otherwise (the elements' bits packed
// into 32-bit words, so both paths leave the chunk in the same registers). N * sizeof(T)
// is a multiple of 16 for every type and N we use.
template <class T, int N, Ld kMode>
__device__ __forceinline__ void load_cols(const T* p, int valid, uint4* raw) {
  static_assert((N * sizeof(T)) % 16 == 0, "a chunk is whole 16-byte vectors");
  constexpr int kVecs = kChunkVecs<T, N>;
  if (valid >= N && aligned16(p)) {
#pragma unroll
    for (int v = 0; v < kVecs; ++v) raw[v] = load_vec<kMode>(reinterpret_cast<const uint4*>(p) + v);
  } else {
    unsigned words[4 * kVecs];
    if constexpr (sizeof(T) == 4) {
      const unsigned* b = reinterpret_cast<const unsigned*>(p);
#pragma unroll
      for (int k = 0; k < N; ++k) words[k] = k < valid ? b[k] : 0u;
    } else {
      const unsigned short* b = reinterpret_cast<const unsigned short*>(p);
#pragma unroll
      for (int k = 0; k < N / 2; ++k) {
        const unsigned lo = 2 * k < valid ? b[2 * k] : 0u;
        const unsigned hi = 2 * k + 1 < valid ? b[2 * k + 1] : 0u;
        words[k] = lo | (hi << 16);
      }
    }
#pragma unroll
    for (int v = 0; v < kVecs; ++v)
      raw[v] = make_uint4(words[4 * v], words[4 * v + 1], words[4 * v + 2], words[4 * v + 3]);
  }
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

// Stores columns [c, c + valid) of f (rounded to T) at p = row + c: streaming vectors when
// the chunk is whole and p 16-byte aligned, element by element otherwise. Never touches an
// element at or past `valid`.
template <class T, int N>
__device__ __forceinline__ void store_cols(T* p, int valid, const float* f) {
  if (valid >= N && aligned16(p)) {
#pragma unroll
    for (int v = 0; v < N / kVec<T>; ++v) __stcs(reinterpret_cast<uint4*>(p) + v, pack<T>(f + v * kVec<T>));
  } else {
#pragma unroll
    for (int k = 0; k < N; ++k)
      if (k < valid) p[k] = from_f32<T>(f[k]);
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
  dw_column_sum_kernel<W>
      <<<static_cast<unsigned>(blocks), dim3(kSumCols, kSumGroups), 0, s>>>(part, P, H, static_cast<W*>(dw));
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

// The workspace of a's launch: plan.P partial rows of H fp32 (0 where with_plan refuses a).
template <class WithPlan>
std::size_t planned_workspace_bytes(const BwdArgs& a, const WithPlan& with_plan) {
  std::size_t bytes = 0;
  with_plan(a, [&](const auto& plan, auto) -> cudaError_t {
    bytes = partial_bytes(plan.P, a.H);
    return cudaSuccess;
  });
  return bytes;
}

// a's launch: the caller's workspace checked against the plan's partial rows, then
// launch_rows(plan, part) where there are rows (P > 0: the row kernel, its partials into
// part = the workspace), then dw's column sum of the P partials. Returns the launch error.
template <class WithPlan, class LaunchRows>
cudaError_t launch_planned(const BwdArgs& a, cudaStream_t s, const WithPlan& with_plan,
                           const LaunchRows& launch_rows) {
  return with_plan(a, [&](const auto& plan, auto wt) -> cudaError_t {
    using W = decltype(wt);
    if (!workspace_ok(a, partial_bytes(plan.P, a.H))) return cudaErrorInvalidValue;
    float* part = static_cast<float*>(a.workspace);
    if (plan.P > 0) launch_rows(plan, part);
    launch_dw_column_sum<W>(part, plan.P, a.H, a.dw, s);
    return cudaGetLastError();
  });
}

}  // namespace rb::kern

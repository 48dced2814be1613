// row-vector (add): the row held in registers as its fp32 sum s = x + r, read from global
// memory exactly once. Each thread issues all its loads up front (4 vectors of x and their
// residual vectors: 8 or 12 16-byte loads in flight), forms s, stores it
// (residual_out, streaming) before the reduction so those stores drain during it, then writes
// y = s * rrms * w once the row's rrms is known (w from L1: every row reads it).
// Groups: ceil(H / kVec<x> / 4) threads a row. Up to 32 lanes: 8, 16 or 32 lanes of a warp per
// row, several rows per block (small_block), reduced by shuffles alone (small H). Beyond: one row
// a block of that many threads (whole warps, up to 512), reduced through shared memory. Holds
// H up to 16K for 16-bit x, 8K for fp32 x, whatever r's dtype: the row is held as fp32 s
// (4 bytes a column) either way; fp32 r only adds raw vectors in flight while loading, which
// 8 more registers a thread cover (reg_cap).
// Any H >= 1, any row strides, any base alignment of every tensor: the row peels a scalar
// head up to x's first 16-byte boundary. Rows whose r, s and y are 16-byte aligned at that
// boundary (contiguous aligned tensors: every row) take plain vector accesses; others go one
// vector at a time and test each access (element-wise where misaligned, add_common.cuh).
// w is tested per row (its phase follows the row's head).
// Numerics: s added in fp32 and used unrounded (the stored s is rounded to r's dtype; llama
// rounds it first), fp32 accumulation, eps inside the sqrt, w(H) by column, rrms = 1/rms
// saved; y by the convention's epilogue (epilogue.cuh), in x's dtype or fp8 with amax.
#include "kernels/add_common.cuh"
#include "kernels/launchers.h"
#include "kernels/row_in_registers.cuh"

namespace rb::kern {
namespace {

constexpr int kMaxThreads = 512;  // per block, one row a block
// Threads a block of the sub-warp groups: 128 (16 rows of 8 lanes, 8 of 16), but a warp for
// rows of 32 lanes, whose blocks then free their slots row by row (bf16 H=1024, % of copy:
// M=16384 89.9 -> 90.3, M=65536 -> 96.2; at 8 lanes, H=256, blocks of a warp lost 7 points at
// M=16384: docs/perf-notes.md run 43).
template <int G>
constexpr int small_block() {
  return G == 32 ? 32 : 128;
}
constexpr int kVpt = 4;  // vectors of x a thread

// Registers a thread may use (__maxnreg__). Left to itself, ptxas's choice moves with the
// launch bounds (54 to 96 measured for the one-row blocks of 16-bit x), and residency is what
// this kernel lives on. 64, for the groups and the one-row blocks alike: 8 blocks of 128
// threads an SM at 16-bit H = 4K. (The one-row blocks had 56, 9 such blocks, while x and r
// were read by streaming loads; the cap alone, 56 -> 64, measured level to -0.7 and the
// default loads below gained 2-3 points at it: docs/perf-notes.md run 43.) fp32 r under 16-bit
// x adds 8 (12 raw vectors in flight, not 8), fp32 w 16 (weight vectors twice as wide in the
// normalize loop). ptxas -v: no spills at these caps (48 spills for 16-bit x at 48), but for
// the sub-warp groups of 16-bit x with fp32 r since the default loads: 4-12 bytes (bf16 x,
// fp32 r, H=1024: 78.05 -> 78.25 against the streaming loads without spills, run 43).
template <class T, class W, class R, int G>
constexpr int reg_cap() {
  return 64 + (kResVecs<T, R> == 2 ? 8 : 0) + (sizeof(W) > sizeof(T) ? 16 : 0);
}

// G in {8, 16, 32}: groups of G lanes, small_block<G>() / G rows a block. G == 0: the block is the
// group (one row a block, blockDim.x threads, a multiple of 32).
template <class T, class W, class R, Convention C, class Y, int G>
__global__ void __maxnreg__((reg_cap<T, W, R, G>())) add_row_vector_kernel(AddArgs a, bool pdl) {
  if (pdl) pdl_begin();
  constexpr int V = kVec<T>;
  constexpr int RV = kResVecs<T, R>;
  constexpr int E = G ? (V - 1 + G - 1) / G : 1;  // edge elements a thread and side: E * size >= V - 1
  __shared__ float scratch[32];
  const int size = G ? G : static_cast<int>(blockDim.x);
  const int rank = static_cast<int>(threadIdx.x) % size;
  const std::int64_t row =
      G ? static_cast<std::int64_t>(blockIdx.x) * (small_block<G>() / (G ? G : 1)) + threadIdx.x / size
        : blockIdx.x;
  // Rows past M (sub-warp groups of the last block) ride along inactive: the shuffles take
  // the whole warp. They load nothing and store nothing.
  const bool active = row < a.M;
  const std::int64_t rw = active ? row : 0;
  const AddRow<T, W, R, Y> io(a, rw);
  Epilogue<C, T, W, Y> epi(a.scale);
  const std::int64_t H = a.H;
  const std::int64_t head = active ? head_elems(io.x, H) : 0;
  const std::int64_t nvec = active ? (H - head) / V : 0;
  const std::int64_t body_end = head + nvec * V;
  // Rows whose r, s and y share x's 16-byte phase (every row of contiguous tensors with
  // aligned bases and r of x's dtype) issue all their loads at once, with no per-access test,
  // by default loads: against streaming (evict-first) ones, bf16 M=16384 % of copy, H=1024
  // 88.3 -> 89.9, 2048 91.1 -> 93.2, 4096 92.9 -> 94.9, 8192 93.5 -> 96.2, 16384 92.5 -> 95.5
  // (docs/perf-notes.md run 43; store policies and an s stored beside y lost or held level).
  // Other rows test each access and go one vector at a time: their element-wise loads of r
  // would otherwise hold a register per element and cost every row registers.
  const bool aligned = streams_aligned(io.r, io.s, io.y, head);

  float sv[kVpt][V];  // the thread's body columns of s, fp32
  float edge[2 * E];  // head columns rank + e*size, then tail columns body_end + rank + e*size
  float sumsq = 0.f;
  const auto load_edges = [&] {
#pragma unroll
    for (int e = 0; e < E; ++e) {
      const std::int64_t j = rank + static_cast<std::int64_t>(e) * size;
      edge[e] = j < head ? add_store_elem(epi, io.x, io.r, io.s, j) : 0.f;
      edge[E + e] = active && body_end + j < H ? add_store_elem(epi, io.x, io.r, io.s, body_end + j) : 0.f;
    }
  };
  const auto add_sum_store = [&](int i, const uint4& xv, const uint4* rv, R* sp) {
    add_vec<T, R>(epi, xv, rv, sv[i]);
#pragma unroll
    for (int k = 0; k < V; ++k) sumsq += sv[i][k] * sv[i][k];
    store_residual<T, R>(sp, sv[i]);
  };

  if (aligned) {
    uint4 xv[kVpt], rv[kVpt][RV];
#pragma unroll
    for (int i = 0; i < kVpt; ++i) {
      const std::int64_t vi = rank + static_cast<std::int64_t>(i) * size;
      if (vi < nvec) {
        const std::int64_t c0 = head + vi * V;
        xv[i] = load_once<false>(io.x + c0);
        load_residual<T, R, false>(assume16<true>(io.r + c0), rv[i]);
      }
    }
    load_edges();
#pragma unroll
    for (int i = 0; i < kVpt; ++i) {
      const std::int64_t vi = rank + static_cast<std::int64_t>(i) * size;
      if (vi < nvec) add_sum_store(i, xv[i], rv[i], assume16<true>(io.s + head + vi * V));
    }
  } else {
    load_edges();
#pragma unroll
    for (int i = 0; i < kVpt; ++i) {
      const std::int64_t vi = rank + static_cast<std::int64_t>(i) * size;
      if (vi < nvec) {
        const std::int64_t c0 = head + vi * V;
        uint4 rv[RV];
        load_residual<T, R, true>(io.r + c0, rv);
        add_sum_store(i, load_stream(io.x + c0), rv, io.s + c0);
      }
    }
  }
#pragma unroll
  for (int e = 0; e < 2 * E; ++e) sumsq += edge[e] * edge[e];

  const float total = G ? group_sum(sumsq, G ? G : 32) : block_sum(sumsq, scratch);
  if (!active) return;
  const float rr = rsqrtf(total / static_cast<float>(H) + a.eps);
  if (a.rrms != nullptr && rank == 0) a.rrms[row] = rr;

  // y = s * rrms * w. The weights are loaded here, not with x and r: held across the
  // reduction they cost ~30 more registers (ptxas), a third fewer rows per SM; they hit L1.
  const auto normalize = [&](auto kAligned) {
#pragma unroll
    for (int i = 0; i < kVpt; ++i) {
      const std::int64_t vi = rank + static_cast<std::int64_t>(i) * size;
      if (vi < nvec) {
        const std::int64_t c0 = head + vi * V;
        normalize_vec(epi, sv[i], rr, io.w + c0, assume16_y<kAligned>(io.y + c0));
      }
    }
  };
  if (aligned)
    normalize(std::true_type{});
  else
    normalize(std::false_type{});
#pragma unroll
  for (int e = 0; e < E; ++e) {
    const std::int64_t j = rank + static_cast<std::int64_t>(e) * size;
    if (j < head) normalize_elem(epi, edge[e], rr, io.w, io.y, j);
    if (body_end + j < H) normalize_elem(epi, edge[E + e], rr, io.w, io.y, body_end + j);
  }
  epi.flush(a.amax);
}

template <class T, class W, class R, Convention C, class Y, int G>
cudaError_t launch_groups(const AddArgs& a, cudaStream_t s) {
  constexpr int kThreads = small_block<G>();
  constexpr std::int64_t kRows = kThreads / G;
  const std::int64_t blocks = (a.M + kRows - 1) / kRows;
  return launch_per_rows(add_row_vector_kernel<T, W, R, C, Y, G>, static_cast<unsigned>(blocks), kThreads, 0, s, a);
}

}  // namespace

std::int64_t add_row_vector_max_H(DType x, DType /*r: the row is held as fp32 s whatever r is*/) {
  return static_cast<std::int64_t>(kMaxThreads) * kVpt * static_cast<std::int64_t>(16 / dtype_size(x));
}

cudaError_t launch_add_row_vector(const AddArgs& a, cudaStream_t s) {
  if (const cudaError_t e = begin_output(a, s); e != cudaSuccess) return e;
  if (a.M == 0) return cudaSuccess;
  return dispatch_add(a, [&](auto t, auto w, auto r, auto c, auto y) -> cudaError_t {
    using T = decltype(t);
    using W = decltype(w);
    using R = decltype(r);
    constexpr Convention C = decltype(c)::value;
    using Y = decltype(y);
    // Body vectors a row can hold, at most: the group must cover them with kVpt per thread.
    const std::int64_t nv = row_vectors(a.H, sizeof(T));
    if (nv <= 8 * kVpt) return launch_groups<T, W, R, C, Y, 8>(a, s);
    if (nv <= 16 * kVpt) return launch_groups<T, W, R, C, Y, 16>(a, s);
    if (nv <= 32 * kVpt) return launch_groups<T, W, R, C, Y, 32>(a, s);
    const std::int64_t group = ((nv + kVpt - 1) / kVpt + 31) / 32 * 32;
    if (group > kMaxThreads) return cudaErrorInvalidConfiguration;
    return launch_per_rows(add_row_vector_kernel<T, W, R, C, Y, 0>, static_cast<unsigned>(a.M),
                           static_cast<unsigned>(group), 0, s, a);
  });
}

}  // namespace rb::kern

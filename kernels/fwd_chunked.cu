// chunked: one block per row, two passes over the row in chunks of blockDim 16-byte vectors:
// the first sums squares (4 loads in flight a thread), the second re-reads x (from L1: the
// row was just read; the first read hints evict-last, the re-read evict-first, load_keep and
// load_last in common.cuh) and writes y. Nothing is held across the passes, so any H works
// without spilling. Rows longer than the L1 pass keeps (64 KB in 16-bit, 32 KB in fp32; as
// long as one fits a block's shared memory) go through shared memory instead: the first pass
// copies the row there by cp.async, every vector of a thread in flight at once, and the
// second reads it back (docs/perf-notes.md runs 18 and 31). Rows whose image fits one block
// an SM at most (bf16 past ~57K) keep a part in registers so that two fit, while the rows are
// few (run 22: bf16 M=1024 H=65536 67 -> 78%). Blocks of ~H/(4 vectors) threads, 64 to 512.
// A decode launch (one wave) whose row fits one round of 4 vectors a thread, in a block of
// up to 512 sized for it, holds x and w in registers across the sum instead (kDecode, runs
// 49-50): one memory round trip a row, not two.
// On the H200 this L1
// re-read beats holding the row in registers (row-vector) for fp16/bf16 from H=2K up and
// for most fp32 H from 1K (docs/perf-notes.md): it holds fewer registers, so more rows
// are in flight per SM.
// Any H >= 1, any row stride, any base alignment (scalar head/tail peel per row).
// Numerics: fp32 accumulation, eps inside the sqrt, w(H) by column, rrms = 1/rms saved; y
// by the convention's epilogue (epilogue.cuh), in x's dtype or fp8 with amax.
#include "kernels/epilogue.cuh"
#include "kernels/launchers.h"

namespace rb::kern {
namespace {

constexpr int kMaxThreads = 512;
constexpr int kUnroll = 4;  // independent vector loads in flight per thread
// The longest rows (bytes) that take the L1 passes; longer ones go through shared memory
// (kShared, kHybrid). With load_keep / load_last's hints the L1 pass beat the shared one at
// every row measured up to 64 KB in 16-bit and 32 KB in fp32, and lost at fp32's 64 KB rows
// (M=16384, % of copy, shared -> L1: bf16 H=16384 97.0 -> 100.4, H=32768 95.7 -> 99.3; fp32
// H=8192 95.7 -> 99.8, H=16384 95.8 -> 94.1; docs/perf-notes.md run 31). Before the hints the
// shared pass led from 32 KB in both (run 18). Rows in between (fp32 32-64 KB) are not measured.
template <class T>
constexpr std::size_t kL1RowMax = (sizeof(T) == 4 ? 32 : 64) * 1024;

// How the second pass gets the row: kPlain re-reads x one vector at a time, kUnrolled
// kUnroll vectors at a time (both from L1, where the first pass left the row), kShared from
// shared memory, where the first pass put it with cp.async (every vector of the thread in
// flight at once, and no L1 eviction between the passes: for rows past kL1RowMax).
// kHybrid: kShared with each thread's first kKeep vectors held in registers instead, for
// rows whose whole image would leave room for one block an SM only: the shared part is then
// small enough for two, which overlap one block's loads with the other's stores (a 128 KB
// bf16 row: docs/perf-notes.md runs 21-22).
// kPlainFirst: kPlain with the row's scalar edges normalised before the body instead of
// after it. ptxas then keeps 16-bit rows at 32 registers where kPlain takes 39: four
// 512-thread blocks an SM instead of three (seven of 288 threads instead of five), for rows
// of up to kPlainFirstRowMax bytes.
// kCluster: kShared with the row split among the blocks of a thread-block cluster (sm_90+),
// each block holding its slice of the body's vectors in shared memory; the blocks' sums of
// squares meet through distributed shared memory (cluster_sum, added in block-rank order:
// every slice gets the same rrms), and block 0 of the cluster also does the row's scalar
// head and tail. For rows too long to keep two blocks on an SM (kClusterRowMin).
// kDecode: for launches of one wave (M <= SMs) whose row fits one round of kUnroll vectors a
// thread (the launcher sizes the block for that: decode_threads): x's vectors and w's are
// loaded together before the sum into registers held to the stores, so w's loads are in
// flight with x's (the SASS issues them side by side before the barrier) and the second pass
// reads nothing. Graph replay, kUnrolled -> kDecode (docs/perf-notes.md run 49): bf16 M=1
// H=1024 1.59 -> 1.16 us, 4096 1.85 -> 1.51, 8192 2.02 -> 1.71, M=128 H=4096 2.21 -> 1.87;
// fp32 H=4096 1.86 -> 1.54.
enum class Pass2 { kPlain, kPlainFirst, kUnrolled, kShared, kHybrid, kCluster, kDecode };
// The longest rows (bytes) that take kPlainFirst. M=16384, % of copy, kPlain -> kPlainFirst
// (docs/perf-notes.md run 42, two rounds): bf16 H=8193 91.2 -> 94.8, 20480 (40 KB) 91.7 ->
// 98.8, fp16 8193 91.9 -> 96.7; aligned 8192-16384 level within 0.5 (16384 100.1 -> 99.4-99.8);
// past 40 KB it lost: 24576 (48 KB) 98.6 -> 98.1, 32768 (64 KB) 99.3 -> 93.9, where four rows
// overflow L1 between the passes. Rows of 40-48 KB are not measured and keep kPlain.
constexpr std::size_t kPlainFirstRowMax = 40 * 1024;
// kHybrid: vectors a thread keeps in registers (6 measured within 2 points of 8 either way:
// docs/perf-notes.md run 22).
constexpr int kKeep = 8;
// kHybrid runs only while the rows are few enough that the SMs go through their waves in
// step (M <= this many per SM): at M=1024 on 132 SMs it gained 5-11 points of copy in every
// dtype, at M=4096 it lost 3 in fp16 and fp32 (and gained 7 in bf16), run 22.
constexpr std::int64_t kHybridRowsPerSm = 16;
// kCluster: rows (images) from kClusterRowMin bytes that the hybrid does not take, in slices
// of at most kClusterSlice bytes, clusters of at most kMaxClusterBlocks blocks (the portable size).
// Measured (H200, % of copy, the pass before -> kCluster at S slices; docs/perf-notes.md run
// 33): 128 KB rows bf16 H=65536 M=4096 62.2 -> 80.6 (S=2), M=16384 64.5 -> 82.0 (S=2; S=4
// 69.1); 256 KB bf16 H=131072 M=1024 62.3 -> 76.1 (S=4), fp32 H=65536 63.9 -> 78.9 (S=4); 512
// KB fp32 H=131072 63.0 -> 77.1 (S=8). It lost at 64 KB rows (fp32 H=16384 M=16384 95.6 ->
// 82.7, S=2) and to the hybrid at 128 KB with few rows (bf16 H=65536 M=1024 77.8 -> 75.4),
// and at fp32 H=32768 M=16384 (128 KB) it measured 86.1 against 87.3.
constexpr std::int64_t kClusterRowMin = 128 * 1024;
constexpr std::int64_t kClusterSlice = 64 * 1024;
// sumsq += the squares of one 16-byte vector of T, element by element in order.
template <class T>
__device__ __forceinline__ void add_squares(const uint4& v, float& sumsq) {
  float f[kVec<T>];
  unpack<T>(v, f);
#pragma unroll
  for (int k = 0; k < kVec<T>; ++k) sumsq += f[k] * f[k];
}

// Minimum blocks an SM for __launch_bounds__: 2 for kHybrid (64 registers), else 0, which
// asks for no minimum. An explicit 1 is not the same: ptxas then took 48 registers where it
// takes 32 (bf16 plain pass; 77 for 61 unrolled), and bf16 M=16384 fell from 93.7 to 88.9% of
// copy at H=4096 and from 95.9 to 92.7 at H=16384 (docs/perf-notes.md run 23).
template <Pass2 kPass2>
constexpr int chunked_min_blocks() {
  return kPass2 == Pass2::kHybrid ? 2 : 0;
}

template <class T, class W, Convention C, class Y, Pass2 kPass2>
__global__ void __launch_bounds__(kMaxThreads, chunked_min_blocks<kPass2>())
    fwd_chunked_kernel(FwdArgs a, bool pdl) {
  if (pdl) pdl_begin();
  const int nthreads = blockDim.x;
  constexpr int V = kVec<T>;
  __shared__ float scratch[32];
  // kShared: the row's body, vector i at row_image[i]; kHybrid: vector i at
  // row_image[i - kept], past the vectors the threads keep in registers; kCluster: the
  // block's vectors [v_lo, v_hi), vector i at row_image[i - v_lo].
  extern __shared__ uint4 row_image[];
  constexpr bool kSplit = kPass2 == Pass2::kCluster;
  __shared__ float cluster_slot[kSplit ? 2 : 1];
  // kCluster: the blocks of a cluster, and this block's place among them (its slice). With
  // no cluster (code for an architecture before sm_90) the launch is refused: launcher.
  const unsigned slices = kSplit ? cluster_blocks() : 1;
  const unsigned slice = kSplit ? blockIdx.x % slices : 0;
  const bool edges = slice == 0;  // the block that does the row's scalar head and tail
  const std::int64_t row = blockIdx.x / slices;
  const T* x = static_cast<const T*>(a.x) + row * a.x_stride;
  const W* w = static_cast<const W*>(a.w);
  Y* y = static_cast<Y*>(a.y) + row * a.y_stride;
  const std::int64_t H = a.H;
  const std::int64_t head = head_elems(x, H);
  const std::int64_t nvec = (H - head) / V;
  const std::int64_t body_end = head + nvec * V;
  const uint4* xv = reinterpret_cast<const uint4*>(x + head);
  const std::int64_t per_slice = (nvec + slices - 1) / slices;
  const std::int64_t v_lo = kSplit ? slice * per_slice : 0;
  const std::int64_t v_hi = kSplit ? (v_lo + per_slice < nvec ? v_lo + per_slice : nvec) : nvec;
  float sumsq = 0.f;
  // kShared is kHybrid keeping no vector: the image starts at the row's first vector.
  constexpr bool kImaged = kPass2 == Pass2::kShared || kPass2 == Pass2::kHybrid || kSplit;
  constexpr int kRegs = kPass2 == Pass2::kHybrid ? kKeep : 0;
  uint4 keep[kRegs > 0 ? kRegs : 1];
  const std::int64_t kept = static_cast<std::int64_t>(kRegs) * nthreads;
  if constexpr (kImaged) {
    // Each thread loads, copies and reads back only its own vectors (no barrier needed); the
    // kept vectors' loads and the rest's copies are all in flight before the first sum.
#pragma unroll
    for (int j = 0; j < kRegs; ++j) {
      const std::int64_t i = threadIdx.x + static_cast<std::int64_t>(j) * nthreads;
      if (i < nvec) keep[j] = xv[i];
    }
    for (std::int64_t i = v_lo + threadIdx.x + kept; i < v_hi; i += nthreads)
      cp_async16(row_image + (i - v_lo - kept), xv + i);
    cp_async_commit();
#pragma unroll
    for (int j = 0; j < kRegs; ++j) {
      if (threadIdx.x + static_cast<std::int64_t>(j) * nthreads < nvec) add_squares<T>(keep[j], sumsq);
    }
    cp_async_wait(0);
    // Written out, not add_squares: through the helper NVVM stops unrolling this runtime loop
    // (the PTX differs; the other three sites' PTX is the same either way).
    for (std::int64_t i = v_lo + threadIdx.x + kept; i < v_hi; i += nthreads) {
      float f[V];
      unpack<T>(row_image[i - v_lo - kept], f);
#pragma unroll
      for (int k = 0; k < V; ++k) sumsq += f[k] * f[k];
    }
  }
  constexpr bool kDecode = kPass2 == Pass2::kDecode;
  uint4 xk[kDecode ? kUnroll : 1];
  alignas(16) W wk[kDecode ? kUnroll : 1][V];
  if constexpr (kDecode) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::int64_t i = threadIdx.x + static_cast<std::int64_t>(u) * nthreads;
      if (i < nvec) {
        xk[u] = xv[i];
        load_weights_raw_any<W, V>(w + head + i * V, w, w + H, wk[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (threadIdx.x + static_cast<std::int64_t>(u) * nthreads < nvec) add_squares<T>(xk[u], sumsq);
    }
  }
  for (std::int64_t base = threadIdx.x; !kImaged && !kDecode && base < nvec;
       base += static_cast<std::int64_t>(kUnroll) * nthreads) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::int64_t i = base + static_cast<std::int64_t>(u) * nthreads;
      if (i < nvec) v[u] = load_keep(xv + i);
    }
    float part = 0.f;  // the round's squares on their own (strided_sum: long rows' drift)
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (base + static_cast<std::int64_t>(u) * nthreads < nvec) add_squares<T>(v[u], part);
    }
    sumsq += part;
  }
  if (edges) sumsq += edge_sumsq(x, head, body_end, H, threadIdx.x, nthreads);
  float total = block_sum(sumsq, scratch);
  if constexpr (kSplit) {
    total = cluster_sum(total, cluster_slot, 0);
    cluster_arrive();  // this block's reads of the others' slots are done (cluster_wait below)
  }
  const float r = rsqrtf(total / static_cast<float>(H) + a.eps);
  if (a.rrms != nullptr && edges && threadIdx.x == 0) a.rrms[row] = r;
  Epilogue<C, T, W, Y> epi(a.scale);

  // Second pass. Unrolled like the first where it pays (small blocks, see the launcher): all
  // re-reads of a round are issued before the first store. Otherwise one vector at a time,
  // which holds fewer registers (more blocks per SM for 512-thread blocks). Weights load at
  // any phase of the row (load_weights_raw_any: aligned, shifted or, at a row's ends, scalar).
  const bool unrolled = kPass2 == Pass2::kUnrolled;
  // y plain from the shared-memory pass of 16-bit x, streaming otherwise: plain stores took
  // bf16 M=16384 H=16384 from 95.7 to 97.0% of copy when its 32 KB rows still took this pass
  // (level at H=32768), and fp32 H=8192 from 95.7 to 92.3; the L1 passes lost 0.5-3 points and
  // the hybrid 1 (docs/perf-notes.md runs 25-26; since run 31 the pass runs past 64 KB only).
  constexpr St kStore = kPass2 == Pass2::kShared && sizeof(T) == 2 ? St::plain : St::stream;
  const auto put = [&](std::int64_t i, const uint4& raw) {  // y's body vector i from x's
    float f[V], wf[V];
    unpack<T>(raw, f);
    load_weights_any<W, V>(w + head + i * V, w, w + H, wf);
#pragma unroll
    for (int k = 0; k < V; ++k) f[k] = epi.value(f[k], r, wf[k]);
    epi.template store_vec<kStore>(y + head + i * V, f);
  };
  const auto put_raw = [&](std::int64_t i, const uint4& raw, const W* wr) {  // the same from raw w
    float f[V];
    unpack<T>(raw, f);
#pragma unroll
    for (int k = 0; k < V; ++k) f[k] = epi.value(f[k], r, to_f32(wr[k]));
    epi.store_vec(y + head + i * V, f);
  };
  // The row's scalar edges first: their x (an L1 hit) and w loads then go out before the
  // body's, not after the block's last body store, where they were a memory round trip in
  // the tail of every row that has edges (7 in 8 of odd H in 16-bit). bf16 M=16384, % of
  // copy: H=4097 86.7 -> 87.6, 2049 80.1 -> 80.7, fp16 4097 88.2 -> 89.2, 32771 88.3 -> 89.0
  // (docs/perf-notes.md run 41). kPlain keeps them last (39 registers; kPlainFirst, the same
  // pass with them first, takes 32); so does the hybrid (it spilled 10 bytes instead of 6
  // with them first).
  constexpr bool kEdgesFirst = kPass2 != Pass2::kPlain && kPass2 != Pass2::kHybrid;
  if (kEdgesFirst && edges) edge_normalize(epi, x, w, y, head, body_end, H, r, threadIdx.x, nthreads);
#pragma unroll
  for (int j = 0; j < kRegs; ++j) {
    const std::int64_t i = threadIdx.x + static_cast<std::int64_t>(j) * nthreads;
    if (i < nvec) put(i, keep[j]);
  }
  if constexpr (kDecode) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::int64_t i = threadIdx.x + static_cast<std::int64_t>(u) * nthreads;
      if (i < nvec) put_raw(i, xk[u], wk[u]);
    }
  }
  if (!unrolled && !kDecode) {
    for (std::int64_t i = v_lo + threadIdx.x + kept; i < v_hi; i += nthreads)
      put(i, kImaged ? row_image[i - v_lo - kept] : load_last(xv + i));
  }
  for (std::int64_t base = threadIdx.x; unrolled && base < nvec; base += static_cast<std::int64_t>(kUnroll) * nthreads) {
    uint4 v[kUnroll];
    alignas(16) W wraw[kUnroll][V];  // raw: half the registers of fp32 for 16-bit weights
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::int64_t i = base + static_cast<std::int64_t>(u) * nthreads;
      if (i < nvec) {
        v[u] = load_last(xv + i);
        load_weights_raw_any<W, V>(w + head + i * V, w, w + H, wraw[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::int64_t i = base + static_cast<std::int64_t>(u) * nthreads;
      if (i < nvec) put_raw(i, v[u], wraw[u]);
    }
  }
  if (!kEdgesFirst && edges) edge_normalize(epi, x, w, y, head, body_end, H, r, threadIdx.x, nthreads);
  epi.flush(a.amax);
  if constexpr (kSplit) cluster_wait();  // no block leaves while another may read its slot
}

}  // namespace

cudaError_t launch_fwd_chunked(const FwdArgs& a, cudaStream_t s) {
  if (const cudaError_t e = begin_output(a, s); e != cudaSuccess) return e;
  if (a.M == 0) return cudaSuccess;
  return dispatch_fwd(a, [&](auto t, auto w, auto c, auto y) -> cudaError_t {
    using T = decltype(t);
    using W = decltype(w);
    constexpr Convention C = decltype(c)::value;
    using Y = decltype(y);
    // About kUnroll vectors a thread, in whole warps. Small blocks round DOWN: a row one
    // vector past a multiple (odd H: 4097 is 513 vectors) then gives one thread a second
    // round instead of running 160 threads, which fit fewer rows per SM than 128 (bf16
    // H=4097: 78.4% -> 86.5% of copy, 2049: 72.4% -> 80.6%). From 256 threads up they round
    // UP: 8193 at 288 threads takes the plain second pass (92.8%), at 256 the unrolled one
    // with a second round (87.9%). docs/perf-notes.md, runs 11-12.
    const std::int64_t nv = row_vectors(a.H, sizeof(T));
    const auto threads_for = [](std::int64_t vectors) {
      std::int64_t t = vectors / kUnroll / 32 * 32;
      if (t >= 256) t = ((vectors + kUnroll - 1) / kUnroll + 31) / 32 * 32;
      return t < 64 ? 64 : (t > kMaxThreads ? kMaxThreads : t);
    };
    const std::int64_t threads = threads_for(nv);
    // Measured (docs/perf-notes.md): the unrolled second pass wins for blocks of <= 256
    // threads, the plain one for larger blocks, where its smaller register footprint fits
    // a third 512-thread block on an SM (a fourth with kPlainFirst, up to kPlainFirstRowMax).
    const auto rows = static_cast<unsigned>(a.M);
    const auto block = static_cast<unsigned>(threads);
    // A decode launch whose row fits one round of kUnroll vectors a thread in a block of its
    // own size (up to bf16 H=16384, fp32 8192): kDecode, docs/perf-notes.md runs 49-50.
    if (one_wave(a.M)) {
      if (const int t = decode_threads(nv, kUnroll, kMaxThreads); t > 0)
        return launch_per_rows(fwd_chunked_kernel<T, W, C, Y, Pass2::kDecode>, rows, static_cast<unsigned>(t), 0, s, a);
    }
    if (threads <= 256)
      return launch_per_rows(fwd_chunked_kernel<T, W, C, Y, Pass2::kUnrolled>, rows, block, 0, s, a);
    // Rows longer than kL1RowMax go through shared memory, as long as the row fits a
    // block's: docs/perf-notes.md runs 18-19 and 31.
    const std::size_t image = static_cast<std::size_t>(nv) * 16;
    if (image > kL1RowMax<T>) {
      const auto kernel = fwd_chunked_kernel<T, W, C, Y, Pass2::kShared>;
      const bool fits = allow_max_dynamic_smem(reinterpret_cast<const void*>(kernel)) >= image;
      // Where the whole image leaves room for one block an SM and the hybrid's part for
      // two, and the rows are few, the hybrid: docs/perf-notes.md run 22. (A row longer than
      // the kept vectors has 512-thread blocks: fewer threads hold 4 vectors each or less.)
      const std::int64_t sms = sm_count();
      const std::int64_t kept = static_cast<std::int64_t>(kKeep) * threads;
      if (a.M <= kHybridRowsPerSm * sms && nv > kept &&
          (!fits || resident_blocks(kernel, static_cast<int>(threads), image) < 2 * sms)) {
        const auto hybrid = fwd_chunked_kernel<T, W, C, Y, Pass2::kHybrid>;
        const std::size_t part = static_cast<std::size_t>(nv - kept) * 16;
        if (allow_max_dynamic_smem(reinterpret_cast<const void*>(hybrid)) >= part &&
            resident_blocks(hybrid, static_cast<int>(threads), part) >= 2 * sms)
          return launch_per_rows(hybrid, rows, block, part, s, a);
      }
      // Rows of kClusterRowMin and more that the hybrid does not take: split among the blocks
      // of a cluster, slices of at most kClusterSlice (docs/perf-notes.md run 33).
      const std::int64_t S = (static_cast<std::int64_t>(image) + kClusterSlice - 1) / kClusterSlice;
      if (static_cast<std::int64_t>(image) >= kClusterRowMin && S <= kMaxClusterBlocks) {
        const auto split = fwd_chunked_kernel<T, W, C, Y, Pass2::kCluster>;
        const std::int64_t per = (nv + S - 1) / S;
        const std::int64_t t = threads_for(per);
        const std::size_t slice_image = static_cast<std::size_t>(per) * 16;
        if (allow_max_dynamic_smem(reinterpret_cast<const void*>(split)) >= slice_image &&
            resident_clusters(split, static_cast<int>(t), slice_image, static_cast<int>(S)) > 0) {
          const std::int64_t blocks = a.M * S;
          const bool pdl = one_wave(blocks);
          return launch_ex(pdl, static_cast<unsigned>(S), split, static_cast<unsigned>(blocks),
                           static_cast<unsigned>(t), slice_image, s, a, pdl);
        }
      }
      if (fits) return launch_per_rows(kernel, rows, block, image, s, a);
    }
    if (image <= kPlainFirstRowMax)
      return launch_per_rows(fwd_chunked_kernel<T, W, C, Y, Pass2::kPlainFirst>, rows, block, 0, s, a);
    return launch_per_rows(fwd_chunked_kernel<T, W, C, Y, Pass2::kPlain>, rows, block, 0, s, a);
  });
}

}  // namespace rb::kern

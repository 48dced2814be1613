// Device building blocks shared by every forward strategy: storage types, fp32 conversion,
// 16-byte vector access with a scalar fallback, row geometry (scalar head up to the first
// 16-byte boundary, vector body, scalar tail) and fp32 reductions.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "kernels/types.h"
#include "kernels/strided_sum.h"

namespace rb::kern {

template <class T>
__device__ __forceinline__ float to_f32(T v);
template <>
__device__ __forceinline__ float to_f32<float>(float v) { return v; }
template <>
__device__ __forceinline__ float to_f32<__half>(__half v) { return __half2float(v); }
template <>
__device__ __forceinline__ float to_f32<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }

template <class T>
__device__ __forceinline__ T from_f32(float v);
template <>
__device__ __forceinline__ float from_f32<float>(float v) { return v; }
template <>
__device__ __forceinline__ __half from_f32<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// Elements of T in one 16-byte vector.
template <class T>
inline constexpr int kVec = 16 / static_cast<int>(sizeof(T));

__device__ __forceinline__ bool aligned16(const void* p) {
  return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0;
}

// Elements before the first 16-byte boundary of a row of T starting at p, at most H.
template <class T>
__device__ __forceinline__ std::int64_t head_elems(const T* p, std::int64_t H) {
  const unsigned mis = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(p) & 15u);
  const std::int64_t h = mis ? static_cast<std::int64_t>((16u - mis) / sizeof(T)) : 0;
  return h < H ? h : H;
}

// Unpacks one 16-byte vector of T into kVec<T> floats; pack is the inverse, rounding to
// nearest even. 16-bit types go through paired conversions (one instruction per two
// elements).
template <class T>
__device__ __forceinline__ void unpack(const uint4& v, float* out) {
  if constexpr (sizeof(T) == 4) {
    const float* e = reinterpret_cast<const float*>(&v);
#pragma unroll
    for (int k = 0; k < 4; ++k) out[k] = e[k];
  } else {
    using T2 = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
    const T2* e = reinterpret_cast<const T2*>(&v);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      float2 f;
      if constexpr (std::is_same_v<T, __half>)
        f = __half22float2(e[k]);
      else
        f = __bfloat1622float2(e[k]);
      out[2 * k] = f.x;
      out[2 * k + 1] = f.y;
    }
  }
}

template <class T>
__device__ __forceinline__ uint4 pack(const float* in) {
  uint4 v;
  if constexpr (sizeof(T) == 4) {
    float* e = reinterpret_cast<float*>(&v);
#pragma unroll
    for (int k = 0; k < 4; ++k) e[k] = in[k];
  } else {
    using T2 = std::conditional_t<std::is_same_v<T, __half>, __half2, __nv_bfloat162>;
    T2* e = reinterpret_cast<T2*>(&v);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if constexpr (std::is_same_v<T, __half>)
        e[k] = __floats2half2_rn(in[2 * k], in[2 * k + 1]);
      else
        e[k] = __floats2bfloat162_rn(in[2 * k], in[2 * k + 1]);
    }
  }
  return v;
}

// N consecutive weights in their storage type, from p = w + column. Vector loads when p is
// 16-byte aligned (N * sizeof(W) is a multiple of 16 for every combo we build), scalar
// otherwise; the branch is uniform across a row, since p's alignment depends only on the
// row's head.
template <class W, int N>
__device__ __forceinline__ void load_weights_raw(const W* p, W* out) {
  static_assert((N * sizeof(W)) % 16 == 0, "weight chunk must be whole vectors");
  if (aligned16(p)) {
    constexpr int kChunks = N * static_cast<int>(sizeof(W)) / 16;
#pragma unroll
    for (int c = 0; c < kChunks; ++c) reinterpret_cast<uint4*>(out)[c] = __ldg(reinterpret_cast<const uint4*>(p) + c);
  } else {
#pragma unroll
    for (int k = 0; k < N; ++k) out[k] = __ldg(p + k);
  }
}

// Bytes [phase, phase + 16) of the 32 bytes lo:hi (lo first), for an even phase in 0..15:
// a funnel shift of the covering words. Shared by the shifted global loads below and the
// shared-memory row stages of the backward (bwd_common.cuh).
__device__ __forceinline__ uint4 shift16(const uint4& lo, const uint4& hi, unsigned phase) {
  const std::uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  const unsigned wo = phase >> 2;          // first word, 0..3
  const unsigned sh = (phase & 3u) * 8u;   // bits within it, 0 or 16
  std::uint32_t o[5];
#pragma unroll
  for (int k = 0; k < 5; ++k)  // w[wo + k] by selects: no dynamic register indexing
    o[k] = wo == 0 ? w[k] : wo == 1 ? w[k + 1] : wo == 2 ? w[k + 2] : w[k + 3];
  return make_uint4(__funnelshift_r(o[0], o[1], sh), __funnelshift_r(o[1], o[2], sh),
                    __funnelshift_r(o[2], o[3], sh), __funnelshift_r(o[3], o[4], sh));
}

// 16 bytes at any even address p, from the two aligned 16-byte vectors that cover them and
// a funnel shift: two vector loads (L1 hits for neighbouring threads) instead of 8 scalar
// ones. The caller guarantees both covering vectors lie inside the tensor (see
// load_weights_any), so nothing outside it is read.
__device__ __forceinline__ uint4 load16_shifted(const void* p) {
  const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(p);
  const uint4* base = reinterpret_cast<const uint4*>(a & ~std::uintptr_t{15});
  return shift16(__ldg(base), __ldg(base + 1), static_cast<unsigned>(a & 15u));
}

// N consecutive weights from p = w + column, raw, for any alignment of p: vector loads
// when p is 16-byte aligned; shifted vector loads when both aligned vectors covering each
// 16-byte piece lie within [lo, hi) (the weight tensor); scalar loads otherwise (a row's
// first or last vector). Rows of odd H start at every phase, so without the shifted path
// 7 rows in 8 (16-bit) would load their weights element by element.
template <class W, int N>
__device__ __forceinline__ void load_weights_raw_any(const W* p, const W* lo, const W* hi, W* raw) {
  constexpr int kChunks = N * static_cast<int>(sizeof(W)) / 16;
  static_assert(kChunks * 16 == N * static_cast<int>(sizeof(W)), "weight chunk must be whole vectors");
  const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t{15};
  const std::uintptr_t last = first + 16 * (kChunks + 1);  // end of the last covering vector
  if (aligned16(p)) {
    load_weights_raw<W, N>(p, raw);
  } else if (first >= reinterpret_cast<std::uintptr_t>(lo) && last <= reinterpret_cast<std::uintptr_t>(hi)) {
#pragma unroll
    for (int c = 0; c < kChunks; ++c)
      reinterpret_cast<uint4*>(raw)[c] = load16_shifted(reinterpret_cast<const char*>(p) + 16 * c);
  } else {
#pragma unroll
    for (int k = 0; k < N; ++k) raw[k] = __ldg(p + k);
  }
}

// The same, as fp32.
template <class W, int N>
__device__ __forceinline__ void load_weights_any(const W* p, const W* lo, const W* hi, float* out) {
  alignas(16) W raw[N];
  load_weights_raw_any<W, N>(p, lo, hi, raw);
#pragma unroll
  for (int k = 0; k < N; ++k) out[k] = to_f32(raw[k]);
}

// The same, as fp32.
template <class W, int N>
__device__ __forceinline__ void load_weights(const W* p, float* out) {
  alignas(16) W raw[N];
  load_weights_raw<W, N>(p, raw);
#pragma unroll
  for (int k = 0; k < N; ++k) out[k] = to_f32(raw[k]);
}

// x is read once: a streaming load (evict-first) keeps L2 for the weight, which every row
// reads again.
__device__ __forceinline__ uint4 load_stream(const void* p) { return __ldcs(static_cast<const uint4*>(p)); }

// One 16-byte vector read once, by a streaming load (kStream) or by the default policy, the
// one each kernel measured better for it (add row-vector's aligned rows and warp-row's 32-lane
// rows take the default: docs/perf-notes.md runs 43-44).
template <bool kStream>
__device__ __forceinline__ uint4 load_once(const void* p) {
  if constexpr (kStream)
    return load_stream(p);
  else
    return *static_cast<const uint4*>(p);
}

// A vector read twice by one block (chunked's two passes over a row, the second from L1):
// load_keep for the first read, with L1 and L2 evict-last hints, load_last for the second,
// evict-first in both, so the row's lines stay through the reduction and give way first once
// read again (the policies of torch.compile's two-loop reductions). Against plain loads, at
// M=16384 (% of copy): bf16 H=2048 90.1 -> 92.2, 4096 93.7 -> 96.3, 8192 94.6 -> 97.5, fp16
// 8192 95.5 -> 98.6, fp32 4096 96.3 -> 99.8; one launch at M=1 H=4096 1.79 -> 1.85 us
// (graph replay; docs/perf-notes.md run 30). Both are volatile so that they keep their order
// against the passes' stores (a row may be normalised in place).
//
// The two differ only in the eviction priority both hints name (a string literal inside the
// asm, so spliced by the preprocessor): an L2 policy made by createpolicy, then the load.
// createpolicy reads nothing and writes only its result, so its asm is not volatile: the
// compiler makes each policy once a thread and hoists it out of the passes' loops, where a
// volatile one was made again before every load (docs/perf-notes.md run 31).
#define RB_HINTED_LOAD(prio, p, v)                                                            \
  do {                                                                                        \
    unsigned long long pol;                                                                   \
    asm("createpolicy.fractional.L2::" prio ".b64 %0, 1.0;" : "=l"(pol));                     \
    asm volatile("ld.global.L1::" prio ".L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"      \
                 : "=r"((v).x), "=r"((v).y), "=r"((v).z), "=r"((v).w)                         \
                 : "l"(p), "l"(pol));                                                         \
  } while (0)
__device__ __forceinline__ uint4 load_keep(const uint4* p) {
  uint4 v;
  RB_HINTED_LOAD("evict_last", p, v);
  return v;
}
__device__ __forceinline__ uint4 load_last(const uint4* p) {
  uint4 v;
  RB_HINTED_LOAD("evict_first", p, v);
  return v;
}
#undef RB_HINTED_LOAD

// How an output vector (y, s, dx) is stored: streaming (st.global.cs, evict-first), the
// default for every kernel, or plain (the default policy). Plain stores cost add row-vector
// 11-13 points of copy at bf16 M=16384, chunked's L1 passes 0.5-3 and fp32 rows 2-6, and
// gained 3 points for the 16-bit row-vector backward at H=4097 and 1 for chunked's 16-bit
// shared-memory pass at H=16384: each kernel names the one measured better for it
// (docs/perf-notes.md runs 25-26).
enum class St { stream, plain };

template <St kSt = St::stream, class V>
__device__ __forceinline__ void store_out(V* p, const V& v) {
  if constexpr (kSt == St::stream)
    __stcs(p, v);
  else
    *p = v;
}

// Stores one vector of T at p (store_out), or element by element where p is not 16-byte
// aligned (an output whose row phase differs from the input's).
template <class T, St kSt = St::stream>
__device__ __forceinline__ void store_vec(T* p, const uint4& v) {
  if (aligned16(p)) {
    store_out<kSt>(reinterpret_cast<uint4*>(p), v);
  } else {
    const T* e = reinterpret_cast<const T*>(&v);
#pragma unroll
    for (int k = 0; k < kVec<T>; ++k) p[k] = e[k];
  }
}

// The scalar edges of a row peeled around the vector body: [0, head) and [body_end, H),
// spread over `size` threads. Fewer than 2 * kVec<T> elements in all.
template <class T>
__device__ __forceinline__ float edge_sumsq(const T* x, std::int64_t head, std::int64_t body_end,
                                            std::int64_t H, int rank, int size) {
  float s = 0.f;
  for (std::int64_t j = rank; j < head; j += size) s += to_f32(x[j]) * to_f32(x[j]);
  for (std::int64_t j = body_end + rank; j < H; j += size) s += to_f32(x[j]) * to_f32(x[j]);
  return s;
}

template <class T, class W>
__device__ __forceinline__ void edge_normalize(const T* x, const W* w, T* y, std::int64_t head,
                                               std::int64_t body_end, std::int64_t H, float r,
                                               int rank, int size) {
  for (std::int64_t j = rank; j < head; j += size) y[j] = from_f32<T>(to_f32(x[j]) * r * to_f32(w[j]));
  for (std::int64_t j = body_end + rank; j < H; j += size)
    y[j] = from_f32<T>(to_f32(x[j]) * r * to_f32(w[j]));
}

// Sum over groups of `width` consecutive lanes (width a power of two <= 32). Every lane of
// the warp must call it.
__device__ __forceinline__ float group_sum(float v, int width) {
  for (int off = width / 2; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off, width);
  return v;
}

// Sum over the whole block; `scratch` holds 32 floats of shared memory. All threads get the
// result. Safe to call repeatedly with the same scratch (the trailing barrier protects it).
// block_sum_once: the same sum with one barrier, leaving scratch[0..31] in use until every
// thread has passed the next barrier of the block. A loop over rows alternates between two
// such scratches (block_sum_alternating, scratch of 64 floats, parity = row count & 1): the
// row after next reuses a half only once every thread has passed this row's barrier, so
// after its read of that half.
__device__ __forceinline__ float block_sum_once(float v, float* scratch) {
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int warps = (blockDim.x + 31) >> 5;
  v = group_sum(v, 32);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  const float t = lane < warps ? scratch[lane] : 0.f;
  return group_sum(t, 32);
}

__device__ __forceinline__ float block_sum(float v, float* scratch) {
  const float t = block_sum_once(v, scratch);
  __syncthreads();
  return t;
}

__device__ __forceinline__ float block_sum_alternating(float v, float* scratch, int parity) {
  return block_sum_once(v, scratch + 32 * parity);
}

// Blocks of `kernel` (threads a block, smem bytes of dynamic shared memory) resident on the
// whole device at once: SMs x blocks per SM; 0 if the runtime cannot say or none fits.
// Cached per (device, kernel, threads, smem): kernels/occupancy.cpp.
std::int64_t resident_blocks(const void* kernel, int threads, std::size_t smem);

template <class Kernel>
std::int64_t resident_blocks(Kernel* kernel, int threads, std::size_t smem) {
  return resident_blocks(reinterpret_cast<const void*>(kernel), threads, smem);
}

// SMs of the current device (0 if the runtime cannot say). Cached.
int sm_count();

// Whether a grid of `blocks` blocks is one wave: a block an SM at most, all resident at once
// (the decode launches). Such a grid takes programmatic dependent launch (launch_per_rows)
// and, in chunked's forward and add, the pass that holds the row in registers.
inline bool one_wave(std::int64_t blocks) { return blocks <= sm_count(); }

// The block of a launch that holds each row's `vectors` 16-byte vectors in registers,
// `per_thread` a thread (chunked's decode passes): whole warps, 64 threads at least; 0 when
// the row needs more than `max_threads`. Rounded up, not down as the many-row launches round
// their small blocks: a row one vector past a multiple (odd H) then still fits one round.
inline int decode_threads(std::int64_t vectors, int per_thread, int max_threads) {
  const std::int64_t t = ((vectors + per_thread - 1) / per_thread + 31) / 32 * 32;
  return t > max_threads ? 0 : static_cast<int>(t < 64 ? 64 : t);
}

// Lets `kernel` take up to the device's opt-in maximum of dynamic shared memory a block (once
// per kernel and device; needed before a launch or an occupancy query above 48 KB). Returns
// that maximum in bytes, 0 on failure.
std::size_t allow_max_dynamic_smem(const void* kernel);

// Blocks for a persistent grid: as many as fit on every SM at once, but no more than the
// work needs (0: the kernel cannot run with that many threads).
template <class Kernel>
int persistent_grid(Kernel kernel, int threads, std::int64_t work_blocks) {
  const std::int64_t resident = resident_blocks(kernel, threads, 0);
  return static_cast<int>(work_blocks < resident ? work_blocks : resident);
}

// Sum over consecutive groups of `group` threads (a multiple of 32) of the block, each
// group on its own; `scratch` holds 32 floats of shared memory. Every thread of the block
// must call it (it holds two block barriers).
__device__ __forceinline__ float segmented_block_sum(float v, float* scratch, int group) {
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int warps_per_group = group >> 5;
  v = group_sum(v, 32);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  const int first = (threadIdx.x / group) * warps_per_group;
  float t = 0.f;
  for (int i = 0; i < warps_per_group; ++i) t += scratch[first + i];
  __syncthreads();
  return t;
}

// ---- programmatic dependent launch (decode) -----------------------------------------------
// A built-in kernel launched with launch_pdl(true, ...) starts with pdl_begin. The launch
// lets the kernel be scheduled while the kernel before it in the stream is still running
// (its blocks resident, waiting); griddepcontrol.wait then holds every thread until that
// kernel has completed and its memory is visible, before any global read or write, so the
// order of effects is the plain stream order. The trigger lets the next such launch do the
// same with this one. For back-to-back kernels (decode: a graph of launches at M = 1) this
// hides the launch latency; for a kernel after a plain launch (or with none before it) the
// wait returns at once. No effect on what a kernel computes.
// Persistent grids always take it (launch_pdl(true, ...)). Grids of a block (or a few rows)
// per row-group take it only while they fit one wave of the SMs (launch_per_rows): at M=16384
// and H <= 1024 those kernels (16384 blocks of 64-128 threads, each a few hundred ns) ran
// 9-37% below the baseline of 2026-11-29 with it on every launch; whether PDL or the issue-10
// epilogue caused that is not measured (docs/perf-notes.md run 19). Such a kernel takes the
// flag as its last parameter and skips pdl_begin without it.
// (griddepcontrol is sm_90+: code built for an earlier architecture waits for nothing, which
// is right there, where a launch never overlaps the kernel before it.)
__device__ __forceinline__ void pdl_begin() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// The launch attribute of clusters of `cluster` consecutive blocks along x.
inline cudaLaunchAttribute cluster_attribute(unsigned cluster) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = cluster;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  return attr;
}

// kernel<<<grid, block, smem, s>>>(args...), with the programmatic-serialization attribute
// when `pdl` (see pdl_begin) and, when cluster > 1, as thread-block clusters of `cluster`
// consecutive blocks along x (sm_90+; grid.x a multiple of cluster). Returns the launch error.
template <class... Params, class... Args>
cudaError_t launch_ex(bool pdl, unsigned cluster, void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem,
                      cudaStream_t s, Args&&... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  cudaLaunchAttribute attr[2];
  unsigned n = 0;
  if (pdl) {
    attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[n++].val.programmaticStreamSerializationAllowed = 1;
  }
  if (cluster > 1) attr[n++] = cluster_attribute(cluster);
  cfg.attrs = attr;
  cfg.numAttrs = n;
  return cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
}

template <class... Params, class... Args>
cudaError_t launch_pdl(bool pdl, void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem, cudaStream_t s,
                       Args&&... args) {
  return launch_ex(pdl, 1, kernel, grid, block, smem, s, std::forward<Args>(args)...);
}

// Clusters of `cluster` blocks (threads a block, smem bytes of dynamic shared memory) of
// `kernel` resident on the whole device at once; 0 where the device has no clusters (before
// sm_90), the kernel's code was built for an architecture before sm_90 (its cluster paths
// compiled out), the runtime cannot say or none fits. Cached like resident_blocks.
std::int64_t resident_clusters(const void* kernel, int threads, std::size_t smem, int cluster);

template <class Kernel>
std::int64_t resident_clusters(Kernel* kernel, int threads, std::size_t smem, int cluster) {
  return resident_clusters(reinterpret_cast<const void*>(kernel), threads, smem, cluster);
}

// ---- thread-block clusters (sm_90+) --------------------------------------------------------
// The largest portable cluster: 8 blocks (a kernel may opt in to 16 on the H100/H200; none
// here does).
constexpr int kMaxClusterBlocks = 8;

// Blocks in this block's cluster: 1 for a launch without clusters, and in code built for an
// architecture before sm_90 (which then never takes the cluster paths: a kernel that runs
// the same work either way stays correct on any launch).
__device__ __forceinline__ unsigned cluster_blocks() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  return cooperative_groups::this_cluster().num_blocks();
#else
  return 1;
#endif
}

// Every thread of every block of the cluster waits for all of them; shared-memory writes
// before it are visible to the cluster's reads after it. No-op without a cluster.
__device__ __forceinline__ void cluster_barrier() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (cluster_blocks() > 1) cooperative_groups::this_cluster().sync();
#endif
}

// cluster_barrier in two halves: arrive (this thread's shared-memory writes and reads so far
// are done as far as the cluster is concerned), then wait (for every thread of the cluster
// to have arrived). Work between them overlaps the wait. Only in a cluster launch.
__device__ __forceinline__ void cluster_arrive() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
#endif
}

__device__ __forceinline__ void cluster_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
#endif
}

// The sum of v over the blocks of the cluster, added in block-rank order from 0, so every
// block gets the same bits. v must be the same in every thread of a block (a block_sum's
// result); each block's thread 0 puts it in its own slot[parity] (2 floats of shared memory),
// a cluster barrier, then every thread reads every block's slot through distributed shared
// memory. A loop over rows alternates parity: the row after next overwrites a slot only once
// every block has passed the next row's barrier, so after this row's reads. Every thread of
// every block of the cluster calls it. Without a cluster: v.
__device__ __forceinline__ float cluster_sum(float v, float* slot, int parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cooperative_groups::cluster_group cl = cooperative_groups::this_cluster();
  const unsigned n = cl.num_blocks();
  if (n == 1) return v;
  if (threadIdx.x == 0) slot[parity] = v;
  cl.sync();
  float t = 0.f;
  for (unsigned r = 0; r < n; ++r) t += *cl.map_shared_rank(slot + parity, r);
  return t;
#else
  (void)slot;
  (void)parity;
  return v;
#endif
}

// A grid of a block per row (or per few rows): launch_pdl with the flag decided once, by
// whether the grid fits one wave, and passed on to the kernel as its last argument (the
// kernel calls pdl_begin only with it).
template <class... Params, class... Args>
cudaError_t launch_per_rows(void (*kernel)(Params...), unsigned grid, unsigned block, std::size_t smem, cudaStream_t s,
                            Args&&... args) {
  const bool pdl = one_wave(grid);
  return launch_pdl(pdl, kernel, grid, block, smem, s, std::forward<Args>(args)..., pdl);
}

// ---- asynchronous copies into shared memory (cp.async, sm_80+) -----------------------------
// 16 bytes from global src (16-byte aligned) to shared dst (16-byte aligned), through L2 only.
__device__ __forceinline__ void cp_async16(void* dst, const void* src) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// Waits until at most `pending` (0..3) of this thread's committed groups are in flight.
__device__ __forceinline__ void cp_async_wait(int pending) {
  switch (pending) {
    case 0:
      asm volatile("cp.async.wait_group 0;" ::: "memory");
      break;
    case 1:
      asm volatile("cp.async.wait_group 1;" ::: "memory");
      break;
    case 2:
      asm volatile("cp.async.wait_group 2;" ::: "memory");
      break;
    default:
      asm volatile("cp.async.wait_group 3;" ::: "memory");
      break;
  }
}

// ---- bulk asynchronous copies (TMA, sm_90+) and the mbarriers they complete ------------------
// A shared-memory mbarrier (8 bytes, 8-byte aligned) counts one arrival a phase here: the
// thread that issues a stage's copies arrives once, with the bytes they will bring
// (bulk_expect), and the copies complete the phase as their bytes land. Waiters poll the
// phase's parity (bulk_wait). In code built for an architecture before sm_90 these are
// no-ops: no plan takes a path that calls them there (the plans ask resident_clusters, which
// answers 0 for such code).
__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
// One thread, before any other uses the barrier (then __syncthreads).
__device__ __forceinline__ void bulk_barrier_init(unsigned long long* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(bar)) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#else
  (void)bar;
#endif
}
// The issuing thread: this phase completes when `bytes` have landed (and this arrival).
__device__ __forceinline__ void bulk_expect(unsigned long long* bar, unsigned bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
#else
  (void)bar;
  (void)bytes;
#endif
}
// `bytes` (a multiple of 16) from global src to shared dst (both 16-byte aligned), counted
// on bar. Shared memory the block read before (through ordinary loads) is ordered before
// the copy by the barrier that precedes the call plus fence_async_shared.
__device__ __forceinline__ void bulk_copy(void* dst, const void* src, unsigned bytes, unsigned long long* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(smem_addr(dst)),
      "l"(src), "r"(bytes), "r"(smem_addr(bar))
      : "memory");
#else
  (void)dst;
  (void)src;
  (void)bytes;
  (void)bar;
#endif
}
__device__ __forceinline__ void fence_async_shared() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}
// Every thread: until the barrier's phase of parity `parity` (0 for its first phase, then
// alternating) has completed; the copies' bytes are then visible to the thread.
__device__ __forceinline__ void bulk_wait(unsigned long long* bar, unsigned parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n"
      "}\n" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
#else
  (void)bar;
  (void)parity;
#endif
}

// Calls f(T{}, W{}) with the storage types for a (x, w) dtype pair we build: w is x's
// dtype or fp32. Any other pair is an error the caller reports.
template <class F>
cudaError_t dispatch_fwd_dtypes(DType x, DType w, F&& f) {
  switch (x) {
    case DType::f32:
      if (w == DType::f32) return f(float{}, float{});
      break;
    case DType::f16:
      if (w == DType::f16) return f(__half{}, __half{});
      if (w == DType::f32) return f(__half{}, float{});
      break;
    case DType::bf16:
      if (w == DType::bf16) return f(__nv_bfloat16{}, __nv_bfloat16{});
      if (w == DType::f32) return f(__nv_bfloat16{}, float{});
      break;
    case DType::e4m3:  // fp8 is an output dtype only: no kernel reads it
    case DType::e5m2:
      break;
  }
  return cudaErrorInvalidValue;
}

// Calls f(T{}, W{}, R{}) for the add op's (x, w, r) dtypes: w and r each x's dtype or fp32.
template <class F>
cudaError_t dispatch_add_dtypes(DType x, DType w, DType r, F&& f) {
  if (r == x) return dispatch_fwd_dtypes(x, w, [&](auto t, auto wt) { return f(t, wt, decltype(t){}); });
  if (r != DType::f32) return cudaErrorInvalidValue;
  return dispatch_fwd_dtypes(x, w, [&](auto t, auto wt) { return f(t, wt, float{}); });
}

// Calls f(X{}, G{}, W{}) for the backward's dtypes: X is x's (and dx's) storage type, G
// dy's, W w's. bwd: X == G, W in {G, fp32}. add-bwd: X is the residual stream's (G's or
// fp32), W in {G, fp32}.
template <class F>
cudaError_t dispatch_bwd_dtypes(DType x, DType dy, DType w, F&& f) {
  return dispatch_add_dtypes(dy, w, x, [&](auto g, auto wt, auto xt) { return f(xt, g, wt); });
}

// ---- cp.async into a bulk copy's stage (sm_90+) -----------------------------------------------
// The first src_bytes (1..16) of the 16 bytes at global src (16-byte aligned) to shared dst
// (16-byte aligned), the rest of the 16 zero-filled: no byte past src + src_bytes is read.
__device__ __forceinline__ void cp_async16_part(void* dst, const void* src, unsigned src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem_addr(dst)), "l"(src), "r"(src_bytes)
               : "memory");
}
// The issuing thread, BEFORE its bulk_expect on bar: bar's phase then also waits for this
// thread's cp.asyncs issued so far (the arrival comes when they land; without .noinc it adds
// the arrival it makes, so the phase's count stays bulk_expect's one).
__device__ __forceinline__ void cp_async_arrive(unsigned long long* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.mbarrier.arrive.shared::cta.b64 [%0];" ::"r"(smem_addr(bar)) : "memory");
#else
  (void)bar;
#endif
}

}  // namespace rb::kern

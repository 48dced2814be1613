// cluster: one row split across a thread-block cluster of CS CTAs (CS in {2, 4, 8}, the
// portable sizes), for rows too large for one SM to hold well (H from about 8K to 256K
// fp16/bf16, 128K fp32). Each CTA holds its part of the row in registers as 16-byte vectors,
// VPT per thread, read from global memory exactly once; the cluster acts as one group of
// CS * T threads (thread rank = CTA rank * T + threadIdx.x), so vector i of the row lies with
// thread i mod (CS * T). Grid: M * CS CTAs, cluster c = row c.
// Any H >= 1 in range, any row stride, any base alignment: each row peels a scalar head up
// to its first 16-byte boundary, so rows of odd H still load full vectors. A CTA without
// columns (H smaller than the cluster) still takes part in both cluster barriers.
// Numerics: fp32 accumulation; each CTA sums its squares (block_sum), the CS partials are
// exchanged through distributed shared memory and every CTA adds them in the fixed rank
// order 0..CS-1, so all CTAs of a row hold the bitwise same total; eps inside the sqrt; w(H)
// by column; rrms = 1/rms saved (by CTA rank 0); y by the convention's epilogue
// (epilogue.cuh), in x's dtype or fp8 with amax.
#include <cooperative_groups.h>

#include "kernels/launchers.h"
#include "kernels/row_in_registers.cuh"

namespace rb::kern {
namespace {

namespace cg = cooperative_groups;

constexpr int kMaxThreads = 512;  // per CTA
constexpr int kMinThreads = 128;
constexpr int kMaxCluster = 8;  // the largest portable cluster size
constexpr int kMaxVpt = 8;
// The default configuration's first step: 256 threads a CTA, 4 vectors a thread (16 KB of
// a 16-bit row per CTA), CS the smallest cluster that holds the row.
constexpr int kDefaultThreads = 256;
constexpr int kDefaultVpt = 4;

template <class T, class W, Convention C, class Y, int VPT>
__global__ void __launch_bounds__(kMaxThreads) fwd_cluster_kernel(FwdArgs a) {
  pdl_begin();
  __shared__ float scratch[32];
  __shared__ float partial;  // this CTA's sum of squares, read by every CTA of the cluster
  const cg::cluster_group cluster = cg::this_cluster();
  const int cs = static_cast<int>(cluster.num_blocks());
  const int cta = static_cast<int>(cluster.block_rank());
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) / cs;  // < M: the grid is M * CS
  const int size = cs * static_cast<int>(blockDim.x);
  const int rank = cta * static_cast<int>(blockDim.x) + static_cast<int>(threadIdx.x);

  RowSlice<T, VPT, 1> slice;
  slice.load(static_cast<const T*>(a.x) + row * a.x_stride, a.H, rank, size, true);
  const float mine = block_sum(slice.sumsq(rank, size), scratch);
  if (threadIdx.x == 0) partial = mine;
  cluster.sync();  // every CTA's partial is written
  // The cluster's total, in rank order 0..CS-1 in every CTA. The loads are independent, so
  // they are all in flight at once; the adds keep the order.
  float p[kMaxCluster];
#pragma unroll
  for (int i = 0; i < kMaxCluster; ++i) p[i] = i < cs ? *cluster.map_shared_rank(&partial, i) : 0.f;
  float total = p[0];
#pragma unroll
  for (int i = 1; i < kMaxCluster; ++i)
    if (i < cs) total += p[i];
  // No CTA may exit while a peer still reads its `partial`: arrive now (the reads above are
  // done: their values are in `total`), wait at the end, so the barrier's latency hides
  // behind the stores of y.
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");

  const float r = rsqrtf(total / static_cast<float>(a.H) + a.eps);
  if (a.rrms != nullptr && rank == 0) a.rrms[row] = r;
  Epilogue<C, T, W, Y> epi(a.scale);
  slice.store(epi, static_cast<const W*>(a.w), static_cast<Y*>(a.y) + row * a.y_stride, r, a.H, rank, size);
  epi.flush(a.amax);
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

template <class T, class W, Convention C, class Y, int VPT>
cudaError_t launch_vpt(const FwdArgs& a, cudaStream_t s, int cs, int threads) {
  const std::int64_t nv = row_vectors(a.H, sizeof(T));
  if (nv > static_cast<std::int64_t>(cs) * threads * VPT) return cudaErrorInvalidConfiguration;
  if (a.M > 0x7fffffff / cs) return cudaErrorInvalidConfiguration;  // gridDim.x limit
  const std::int64_t blocks = a.M * cs;
  cudaLaunchAttribute attr[2];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = static_cast<unsigned>(cs);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  attr[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;  // see pdl_begin
  attr[1].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(blocks), 1, 1);
  cfg.blockDim = dim3(static_cast<unsigned>(threads), 1, 1);
  cfg.dynamicSmemBytes = 0;
  cfg.stream = s;
  cfg.attrs = attr;
  cfg.numAttrs = 2;
  const cudaError_t e = cudaLaunchKernelEx(&cfg, fwd_cluster_kernel<T, W, C, Y, VPT>, a);
  const cudaError_t last = cudaGetLastError();  // clears what a failed launch left behind
  return e != cudaSuccess ? e : last;
}

}  // namespace

std::int64_t fwd_cluster_max_H(DType x) {
  return static_cast<std::int64_t>(kMaxCluster) * kMaxThreads * kMaxVpt *
         static_cast<std::int64_t>(16 / dtype_size(x));
}

cudaError_t launch_fwd_cluster_cfg(const FwdArgs& a, cudaStream_t s, int cs, int threads, int vpt) {
  if (const cudaError_t e = begin_output(a, s); e != cudaSuccess) return e;
  if (a.M == 0) return cudaSuccess;
  if (a.H < 1 || a.M < 0) return cudaErrorInvalidValue;
  if ((cs != 2 && cs != 4 && cs != 8) || threads < kMinThreads || threads > kMaxThreads || threads % 32 != 0)
    return cudaErrorInvalidConfiguration;
  return dispatch_fwd_dtypes(a.xdtype, a.wdtype, [&](auto t, auto w) -> cudaError_t {
    using T = decltype(t);
    using W = decltype(w);
    const auto launch = [&](auto c, auto y) -> cudaError_t {
      using Y = decltype(y);
      constexpr Convention C = decltype(c)::value;
      switch (vpt) {
        case 4:
          return launch_vpt<T, W, C, Y, 4>(a, s, cs, threads);
        case 8:
          return launch_vpt<T, W, C, Y, 8>(a, s, cs, threads);
      }
      return cudaErrorInvalidConfiguration;
    };
    return dispatch_epilogue<T, W>(a.conv, a.ydtype, a.xdtype, launch);
  });
}

cudaError_t launch_fwd_cluster(const FwdArgs& a, cudaStream_t s) {
  // The smallest cluster that holds the row at 256 threads and 4 vectors a thread; past 8
  // CTAs, 8 vectors a thread, then 512 threads.
  const std::int64_t nv = row_vectors(a.H, dtype_size(a.xdtype));
  for (int cs = 2; cs <= kMaxCluster; cs *= 2)
    if (nv <= static_cast<std::int64_t>(cs) * kDefaultThreads * kDefaultVpt)
      return launch_fwd_cluster_cfg(a, s, cs, kDefaultThreads, kDefaultVpt);
  if (nv <= static_cast<std::int64_t>(kMaxCluster) * kDefaultThreads * kMaxVpt)
    return launch_fwd_cluster_cfg(a, s, kMaxCluster, kDefaultThreads, kMaxVpt);
  return launch_fwd_cluster_cfg(a, s, kMaxCluster, kMaxThreads, kMaxVpt);
}

}  // namespace rb::kern

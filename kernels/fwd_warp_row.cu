// warp-row: a group of 8-32 lanes of one warp per row, several rows per block, the row held
// in registers (16-byte vectors, up to 8 per lane). For small H (up to 1K fp32, 2K
// fp16/bf16), where a block per row would leave most threads idle. The reduction is warp
// shuffles only: no shared memory, no barrier. A grid of a group per row: each group loads,
// reduces and stores its one row, and the block scheduler overlaps blocks. (A persistent
// grid whose groups streamed rows with a next-row prefetch ran 3-11% below it at M=16384 and
// 65536, H 128-2048: docs/perf-notes.md run 20.)
// Any H >= 1 in range, any row stride, any base alignment (scalar head/tail peel per row).
// Numerics: fp32 accumulation, eps inside the sqrt, w(H) by column, rrms = 1/rms saved; y
// by the convention's epilogue (epilogue.cuh), in x's dtype or fp8 with amax.
#include <limits>

#include "kernels/launchers.h"
#include "kernels/row_in_registers.cuh"

namespace rb::kern {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxVpt = 8;

// BT threads a block (kThreads, or 128 for the 32-lane rows of 4 vectors a lane: see the
// launcher). kPlain: x by default loads and y by plain stores, not streaming ones (the same).
template <class T, class W, Convention C, class Y, int G, int VPT, int BT, bool kPlain>
__global__ void __launch_bounds__(kThreads) fwd_warp_row_kernel(FwdArgs a, bool pdl) {
  if (pdl) pdl_begin();
  constexpr int kGroups = BT / G;
  constexpr int E = (kVec<T> - 1 + G - 1) / G;  // edge elements per lane and side
  const int rank = threadIdx.x % G;
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kGroups + threadIdx.x / G;
  // The shuffles take the whole warp: a warp with any row in range runs whole, its rows past
  // M inactive.
  if (row - (threadIdx.x % 32) / G >= a.M) return;
  const bool active = row < a.M;
  const T* xrow = static_cast<const T*>(a.x) + (active ? row : 0) * a.x_stride;
  RowSlice<T, VPT, E> slice;
  slice.template load<!kPlain>(xrow, a.H, rank, G, active);
  const float total = group_sum(slice.sumsq(rank, G), G);
  Epilogue<C, T, W, Y> epi(a.scale);
  if (active) {
    const float r = rsqrtf(total / static_cast<float>(a.H) + a.eps);
    if (a.rrms != nullptr && rank == 0) a.rrms[row] = r;
    slice.template store<kPlain ? St::plain : St::stream>(epi, static_cast<const W*>(a.w),
                                                          static_cast<Y*>(a.y) + row * a.y_stride, r, a.H, rank, G);
  }
  epi.flush(a.amax);
}

template <class T, class W, Convention C, class Y, int G, int VPT, int BT = kThreads, bool kPlain = false>
cudaError_t launch_g(const FwdArgs& a, cudaStream_t s) {
  constexpr int kRowsPerBlock = BT / G;
  const std::int64_t blocks = (a.M + kRowsPerBlock - 1) / kRowsPerBlock;
  if (blocks > std::numeric_limits<int>::max()) return cudaErrorInvalidConfiguration;
  return launch_per_rows(fwd_warp_row_kernel<T, W, C, Y, G, VPT, BT, kPlain>, static_cast<unsigned>(blocks), BT, 0, s,
                         a);
}

}  // namespace

std::int64_t warp_row_max_H(DType x) {
  const std::int64_t v = static_cast<std::int64_t>(16 / dtype_size(x));
  return 32 * kMaxVpt * v;
}

cudaError_t launch_fwd_warp_row(const FwdArgs& a, cudaStream_t s) {
  if (const cudaError_t e = begin_output(a, s); e != cudaSuccess) return e;
  if (a.M == 0) return cudaSuccess;
  return dispatch_fwd(a, [&](auto t, auto w, auto c, auto y) -> cudaError_t {
    using T = decltype(t);
    using W = decltype(w);
    constexpr Convention C = decltype(c)::value;
    using Y = decltype(y);
    const std::int64_t nv = row_vectors(a.H, sizeof(T));
    // Smallest group that holds the row with 4 vectors per lane; 8 per lane at 32 lanes. Rows
    // of up to 16 vectors take 8 lanes of 2 (40 registers, 6 blocks an SM), not 4 of 4 (61, 4
    // blocks): bf16 H=128, % of copy, M=16384 29.9 -> 33.3, M=65536 61.9 -> 65.5 (the shape of
    // torch.compile's kernel there; more vectors a lane lost, docs/perf-notes.md runs 42-43).
    // The 32-lane rows of 4 vectors go 4 to a 128-thread block, which frees its slot sooner
    // than 8 to 256: bf16 H=1024 M=16384 79.6 -> 80.9, M=65536 90.3 -> 90.7 (run 43; blocks of
    // 64 and 32 threads gained less at M=16384; at 8 vectors a lane the experiment's blocks of
    // 128 ran at 78.5 against main's 83.8 at H=2048, so those keep 256). Those 32-lane rows
    // also read x by default loads and store y by plain stores: bf16 H=1024, % of copy, M=2048
    // to 8192 level (28.9 -> 29.5, 48.9 -> 48.2, 64.2 -> 64.2), 16384 80.8 -> 81.8, 32768 87.7
    // -> 91.9, 65536 90.5 -> 94.2, 131072 91.9 -> 96.2 (run 44; at 8 lanes of 2, H=128, the
    // same lost up to 5 points at large M, so only these take it).
    if (nv <= 8 * 2) return launch_g<T, W, C, Y, 8, 2>(a, s);
    if (nv <= 8 * 4) return launch_g<T, W, C, Y, 8, 4>(a, s);
    if (nv <= 16 * 4) return launch_g<T, W, C, Y, 16, 4>(a, s);
    if (nv <= 32 * 4) return launch_g<T, W, C, Y, 32, 4, 128, true>(a, s);
    if (nv <= 32 * kMaxVpt) return launch_g<T, W, C, Y, 32, kMaxVpt>(a, s);
    return cudaErrorInvalidConfiguration;
  });
}

}  // namespace rb::kern

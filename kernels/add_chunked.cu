// chunked (add): one block per row, two passes over the row in chunks of blockDim vectors of
// x. Pass 1 loads x and r (about 4 16-byte loads in flight a thread: 2 vectors of x with
// their r, 1 when r is fp32 under 16-bit x), forms s = x + r, stores it (residual_out,
// streaming) and sums its squares. Pass 2 re-reads x and r (from L1 or L2: pass 1 read the
// row with caching loads), forms the same fp32 s again and writes y. Nothing is held across
// the passes, so any H works without spilling. Rows of 512-thread blocks whose x and r
// together take 32 KB and more go through shared memory instead (kShared: pass 1 copies them
// there by cp.async, pass 2 reads them back), and so do rows of 16-bit x, r and w in smaller
// blocks from 3 vectors a thread (kImageMinVectors). auto's pick past row-vector's rows and
// for those shared-memory rows, where x, r and w share a dtype. Blocks of ~H/(4 vectors)
// threads, 64 to 512 (512 from 2 vectors a thread for 16-bit tensors), with compile-time
// sizes (fixed offsets between a round's vectors, fewer registers).
// A decode launch (one wave) of x, r and w of one dtype whose row fits one round of 4 vectors
// a thread holds the row's x, r and w in registers from before the sum to y's stores instead
// (kDecode): one memory round trip a row, not two (docs/perf-notes.md run 50).
// Any H >= 1, any row strides, any base alignment of every tensor: the row peels a scalar
// head up to x's first 16-byte boundary and a scalar tail. Rows whose r, s and y are 16-byte
// aligned at that boundary take plain vector accesses in unrolled rounds (pass 2 unrolled
// only in blocks of <= 256 threads and when w is aligned too); others go one vector at a
// time and test each access (add_common.cuh).
// Numerics: s added in fp32 and used unrounded (the stored s is rounded to r's dtype; llama
// rounds it first; pass 2 recomputes the identical sum), fp32 accumulation, eps inside the
// sqrt, w(H) by column, rrms = 1/rms saved; y by the convention's epilogue (epilogue.cuh),
// in x's dtype or fp8 with amax.
#include <type_traits>

#include "kernels/add_common.cuh"
#include "kernels/launchers.h"

namespace rb::kern {
namespace {

constexpr int kMaxThreads = 512;
constexpr int kLoads1 = 4;     // 16-byte loads in flight a thread, pass 1
constexpr int kLoads2 = 6;     // and pass 2 (unrolled)
constexpr int kBlockVecs = 4;  // vectors of x a thread, when the block size allows
// Image bytes (x's and r's row bodies) from which a row of a 512-thread block goes through
// shared memory (kShared). M=16384, % of copy, L1 re-read -> shared memory: bf16 H=8192 (32 KB)
// 95.4 -> 95.8, H=10240 93.8 -> 96.0, H=12288 94.0 -> 95.6, H=16384 (64 KB) 88.3 -> 95.9,
// H=24576 72.8 -> 96.1, H=32768 (128 KB, one block an SM) 67.6 -> 95.4; fp32 H=4097 92.0 ->
// 91.4, H=6144 92.3 -> 95.5, H=8192 85.5 -> 96.1, H=16384 67.0 -> 96.8 (docs/perf-notes.md run
// 31). Blocks of 256 threads and fewer keep the L1 passes (fp32 H=4096: 79.7 either way).
constexpr std::size_t kSharedRowMin = 32 * 1024;
// Blocks of 64-256 threads take the image for rows of 16-bit x, r and w (narrow) from this
// many vectors a thread: there the L1 pass's rounds of 2 vector steps (kLoads1 loads) take
// two DRAM trips in series, where the image puts all of a thread's vectors in flight at once.
// M=16384, % of copy, L1 pass -> image (with the batched weights below): bf16 H=2048 (64
// threads, 4 vectors each) 90.7 -> 93.3, 3072 (3 a thread) row-vector's 92.6 -> 95.2, 4096
// (128 threads, 4) 94.0 -> 94.3-94.5, fp16 2048 91.3 -> 93.9, 4096 93.4 -> 95.0; 6144 (3 in
// 256 threads) level. With 2 vectors a thread or fewer the image lost (one L1 round already
// holds them): H=1024 -1.2, 4097 (513 vectors in 256 threads) -7.5, M=65536 H=512 -10.8, H=128
// -5.4 (docs/perf-notes.md run 41).
constexpr std::int64_t kImageMinVectors = 3;

// x, r and w all 16-bit.
inline bool narrow(DType x, DType w, DType r) {
  return dtype_size(x) == 2 && dtype_size(w) == 2 && dtype_size(r) == 2;
}

// The compile-time block size the launcher runs a row of add_chunked_threads' threads in.
constexpr std::int64_t launched_block(std::int64_t threads) {
  return threads <= 64 ? 64 : threads <= 128 ? 128 : threads <= 256 ? 256 : 512;
}

// How a row's passes get at it. kL1: pass 2 re-reads x and r (from L1 or L2). kShared: pass 1
// copies them into shared memory and pass 2 reads them back (see the kernel). kDecode: for
// launches of one wave (M <= SMs) and the many rows add_chunked_holds takes, x, r and w of one
// dtype, a row of one round of kBlockVecs vectors a thread (2 for the many 16-bit rows,
// add_held_shape): x's, r's and w's vectors load
// together before the sum and stay in registers, so pass 2 reads nothing and w's trip
// overlaps x's and r's instead of following the block's reduction (the L1 and image passes
// load w after it).
enum class Path { kL1, kShared, kDecode };
template <Path P>
using PathTag = std::integral_constant<Path, P>;

// Blocks of NT threads that must fit on an SM at once (launch bounds; ptxas sizes the
// registers to fit): 3 of 512 threads (40 registers; the forward's chunked fits 3 at large H
// too), 5 of 256, 9 of 128. fp32 r or w under 16-bit x holds more per vector step: 64
// registers. ptxas -v: no spills. kDecode asks for no minimum (one block an SM; it holds up to
// 4 vectors of each tensor a thread). At many rows a bound of 896 threads an SM (72 registers
// at 128 threads: 7 blocks against 5, occupancy 42% against 30%) measured no faster and lost
// 1.0-1.2 points at bf16 H=8192 and fp32 4096 (docs/perf-notes.md run 53). kDecode of kDV = 2
// vectors a thread (the many 16-bit rows, add_held_shape) asks for 1024 threads an SM: ptxas
// 48-60 registers, no spills.
template <class T, class W, class R, int NT, Path kPath, int kDV = kBlockVecs>
constexpr int chunked_min_blocks() {
  constexpr bool narrow = sizeof(R) == sizeof(T) && sizeof(W) == sizeof(T);
  if constexpr (kPath == Path::kDecode) return kDV == 2 ? 1024 / NT : 0;
  return narrow ? (NT > 256 ? 3 : NT > 128 ? 5 : NT > 64 ? 9 : 16) : 65536 / NT / 64;
}

// kShared: rows whose x and r are aligned where x's body starts (streams_aligned) go through
// shared memory: pass 1 copies the row's body of x and r there by cp.async (every vector of a
// thread in flight at once) and pass 2 reads them back, instead of re-reading them through L1,
// which three 512-thread rows of 64 KB and more (x and r together) overflow, and which at 32-64
// KB measured 0.4-3.3 points behind but at fp32 H=4097 (0.6 ahead; kSharedRowMin). The
// forward's chunked does the same for its longer rows (fwd_chunked.cu). kDecode holds kDV
// vectors a thread, and with kLateS stores s in pass 2 beside y instead of in pass 1 (the
// same values; see add_held_shape).
template <class T, class W, class R, Convention C, class Y, int NT, Path kPath = Path::kL1, int kDV = kBlockVecs,
          bool kLateS = false>
__global__ void __launch_bounds__(NT, (chunked_min_blocks<T, W, R, NT, kPath, kDV>())) add_chunked_kernel(AddArgs a, bool pdl) {
  if (pdl) pdl_begin();
  constexpr bool kShared = kPath == Path::kShared;
  constexpr bool kUnrolled2 = NT <= 256;
  constexpr int V = kVec<T>;
  constexpr int RV = kResVecs<T, R>;
  // Vector steps a round (each step one vector of x with its columns of r, and of w in pass
  // 2): as many as keep about 4 (pass 1) or 6 (pass 2) 16-byte loads in flight a thread, as
  // the forward's 4 vectors of x do; more cost resident blocks (registers).
  constexpr int kWVecs = V * static_cast<int>(sizeof(W)) / 16;
  constexpr int U1 = kLoads1 / (1 + RV);
  constexpr int U2 = kUnrolled2 ? kLoads2 / (1 + RV + kWVecs) : 1;
  __shared__ float scratch[32];
  const int tid = static_cast<int>(threadIdx.x);
  const std::int64_t row = blockIdx.x;
  const AddRow<T, W, R, Y> io(a, row);
  Epilogue<C, T, W, Y> epi(a.scale);
  const std::int64_t H = a.H;
  const std::int64_t head = head_elems(io.x, H);
  const std::int64_t nvec = (H - head) / V;
  const std::int64_t body_end = head + nvec * V;
  // Rows whose r, s and y share x's 16-byte phase run the unrolled loops with plain vector
  // access; others go one vector at a time and test each access (their element-wise loads
  // would otherwise hold a register per element, and ptxas sizes the kernel for them).
  const bool aligned = streams_aligned(io.r, io.s, io.y, head);
  // kShared: the body's vectors of x, then r's in kResVecs planes of nvec vectors each
  // (consecutive threads read consecutive 16 bytes of a plane: no bank conflicts).
  extern __shared__ uint4 image[];
  const bool imaged = kShared && aligned;
  const auto image_add = [&](std::int64_t i, float* f) {  // s over body vector i, from the image
    uint4 rv[RV];
#pragma unroll
    for (int q = 0; q < RV; ++q) rv[q] = image[(1 + q) * nvec + i];
    add_vec<T, R>(epi, image[i], rv, f);
  };

  // kDecode: the row's vectors, kDV a thread NT apart, held from pass 1 to pass 2 (rows whose
  // r, s and y are aligned where x's body starts and that fit: others take the L1 passes).
  constexpr int UD = kPath == Path::kDecode ? kDV : 1;
  const bool decoded = kPath == Path::kDecode && aligned && nvec <= static_cast<std::int64_t>(UD) * NT;
  uint4 dx[UD], dr[UD][RV];
  alignas(16) W dw[UD][V];
  const auto held_sums = [&](auto&& g) {  // g(u, i, s) for each held vector u (body vector i)
#pragma unroll
    for (int u = 0; u < UD; ++u) {
      const std::int64_t i = tid + static_cast<std::int64_t>(u) * NT;
      if (i < nvec) {
        float f[V];
        add_vec<T, R>(epi, dx[u], dr[u], f);
        g(u, i, f);
      }
    }
  };

  // Pass 1: s = x + r, stored, squares summed. A round is U vectors a thread, NT vectors
  // apart (compile-time offsets from the round's first column), all loads issued first.
  float sumsq = 0.f;
  const auto sum_sq = [](const float* f, float& acc) {  // s over one vector, squared into acc
#pragma unroll
    for (int k = 0; k < V; ++k) acc += f[k] * f[k];
  };
  const auto sum_store = [&](float* f, R* sp, float& acc) {  // and stored
    sum_sq(f, acc);
    store_residual<T, R>(sp, f);
  };
  const auto pass1 = [&](auto kAligned, auto kU) {
    constexpr int U = decltype(kU)::value;
    for (std::int64_t base = tid; base < nvec; base += static_cast<std::int64_t>(U) * NT) {
      const std::int64_t left = nvec - base;  // vectors from this thread's first one on
      const std::int64_t c = head + base * V;
      const T* xc = io.x + c;
      const R* rc = io.r + c;
      R* sc = io.s + c;
      uint4 xv[U], rv[U][RV];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (u * NT < left) {
          xv[u] = *reinterpret_cast<const uint4*>(xc + u * NT * V);
          load_residual<T, R, false>(assume16<kAligned>(rc + u * NT * V), rv[u]);
        }
      }
      float part = 0.f;  // the round's squares on their own (strided_sum: long rows' drift)
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (u * NT < left) {
          float f[V];
          add_vec<T, R>(epi, xv[u], rv[u], f);
          sum_store(f, assume16<kAligned>(sc + u * NT * V), part);
        }
      }
      sumsq += part;
    }
  };
  if (imaged) {
    // Each thread copies, then reads back, only its own vectors: no barrier needed.
    const uint4* xg = reinterpret_cast<const uint4*>(io.x + head);
    const uint4* rg = reinterpret_cast<const uint4*>(io.r + head);
    for (std::int64_t i = tid; i < nvec; i += NT) {
      cp_async16(image + i, xg + i);
#pragma unroll
      for (int q = 0; q < RV; ++q) cp_async16(image + (1 + q) * nvec + i, rg + i * RV + q);
    }
    cp_async_commit();
    cp_async_wait(0);
    for (std::int64_t i = tid; i < nvec; i += NT) {
      float f[V];
      image_add(i, f);
      sum_store(f, assume16<true>(io.s + head + i * V), sumsq);
    }
  } else if (decoded) {
    const uint4* xg = reinterpret_cast<const uint4*>(io.x + head);
#pragma unroll
    for (int u = 0; u < UD; ++u) {
      const std::int64_t i = tid + static_cast<std::int64_t>(u) * NT;
      if (i < nvec) {
        dx[u] = xg[i];
        load_residual<T, R, false>(assume16<true>(io.r + head + i * V), dr[u]);
        load_weights_raw_any<W, V>(io.w + head + i * V, io.w, io.w + H, dw[u]);
      }
    }
    held_sums([&](int, std::int64_t i, float* f) {
      if constexpr (kLateS)
        sum_sq(f, sumsq);  // s stored in pass 2
      else
        sum_store(f, assume16<true>(io.s + head + i * V), sumsq);
    });
  } else if (aligned) {
    pass1(std::true_type{}, std::integral_constant<int, U1>{});
  } else {
    pass1(std::false_type{}, std::integral_constant<int, 1>{});
  }
  for (std::int64_t j = tid; j < head; j += NT) {
    const float v = add_store_elem(epi, io.x, io.r, io.s, j);
    sumsq += v * v;
  }
  for (std::int64_t j = body_end + tid; j < H; j += NT) {
    const float v = add_store_elem(epi, io.x, io.r, io.s, j);
    sumsq += v * v;
  }

  const float rr = rsqrtf(block_sum(sumsq, scratch) / static_cast<float>(H) + a.eps);
  if (a.rrms != nullptr && tid == 0) a.rrms[row] = rr;

  // Pass 2: y = (x + r) * rrms * w, U vectors' loads (x, r re-read; w) issued before any
  // store. U = U2 where it pays (blocks of <= 256 threads, see the launcher; rows whose w is
  // aligned too: element-wise weight loads times four rounds measured slower in the forward),
  // else 1: fewer registers, more resident 512-thread blocks.
  const auto put_y = [&](float* f, const W* wr, Y* yp) {  // y over one vector of s, from raw w
#pragma unroll
    for (int k = 0; k < V; ++k) f[k] = epi.value(f[k], rr, to_f32(wr[k]));
    epi.store_vec(yp, f);
  };
  const auto pass2 = [&](auto kAligned, auto kU) {
    constexpr int U = decltype(kU)::value;
    for (std::int64_t base = tid; base < nvec; base += static_cast<std::int64_t>(U) * NT) {
      const std::int64_t left = nvec - base;
      const std::int64_t c = head + base * V;
      const T* xc = io.x + c;
      const R* rc = io.r + c;
      const W* wc = io.w + c;
      Y* yc = io.y + c;
      uint4 xv[U], rv[U][RV];
      alignas(16) W wraw[U][V];  // raw: half the registers of fp32 for 16-bit weights
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (u * NT < left) {
          xv[u] = *reinterpret_cast<const uint4*>(xc + u * NT * V);
          load_residual<T, R, false>(assume16<kAligned>(rc + u * NT * V), rv[u]);
          load_weights_raw<W, V>(assume16<kAligned>(wc + u * NT * V), wraw[u]);
        }
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if (u * NT < left) {
          float f[V];
          add_vec<T, R>(epi, xv[u], rv[u], f);
          put_y(f, wraw[u], assume16_y<kAligned>(yc + u * NT * V));
        }
      }
    }
  };
  // The row's scalar edges before the body, as in the forward: their loads then overlap the
  // body's instead of closing the row with a round trip (bf16 M=16384 H=2049 83.9 -> 85.2%
  // of copy, fp32 2049 88.7 -> 92.2; 4097 and 8193 -0.4 to -0.7, where auto takes row-vector:
  // docs/perf-notes.md run 41).
  for (std::int64_t j = tid; j < head; j += NT)
    normalize_elem(epi, add_elem(epi, io.x, io.r, j), rr, io.w, io.y, j);
  for (std::int64_t j = body_end + tid; j < H; j += NT)
    normalize_elem(epi, add_elem(epi, io.x, io.r, j), rr, io.w, io.y, j);
  if (imaged) {
    // In blocks of <= 256 threads a round's weights (UI vectors a thread) load before its
    // first store, as the L1 pass's unrolled rounds do; one vector at a time left the
    // weights' trips in series (bf16 M=16384 H=2048 91.8 -> 93.2% of copy, decode M=1 H=4096
    // 2.47 -> 2.07 us, docs/perf-notes.md run 41). 512-thread rows keep one vector a step.
    constexpr int UI = NT <= 256 ? 4 : 1;
    for (std::int64_t base = tid; base < nvec; base += static_cast<std::int64_t>(UI) * NT) {
      alignas(16) W wraw[UI][V];
#pragma unroll
      for (int u = 0; u < UI; ++u) {
        const std::int64_t i = base + static_cast<std::int64_t>(u) * NT;
        if (i < nvec) load_weights_raw_any<W, V>(io.w + head + i * V, io.w, io.w + H, wraw[u]);
      }
#pragma unroll
      for (int u = 0; u < UI; ++u) {
        const std::int64_t i = base + static_cast<std::int64_t>(u) * NT;
        if (i < nvec) {
          float f[V];
          image_add(i, f);
          put_y(f, wraw[u], assume16_y<true>(io.y + head + i * V));
        }
      }
    }
  } else if (decoded) {
    held_sums([&](int u, std::int64_t i, float* f) {
      if constexpr (kLateS) store_residual<T, R>(assume16<true>(io.s + head + i * V), f);
      put_y(f, dw[u], assume16_y<true>(io.y + head + i * V));
    });
  } else if (kUnrolled2 && aligned && aligned16(io.w + head)) {
    pass2(std::true_type{}, std::integral_constant<int, U2>{});
  } else {
    pass2(std::false_type{}, std::integral_constant<int, 1>{});
  }
  epi.flush(a.amax);
}

}  // namespace

std::int64_t add_chunked_threads(DType x, DType w, DType r, std::int64_t H) {
  // kBlockVecs vectors a thread where the block size allows (the forward's sizing), but
  // 512-thread blocks from 2 vectors a thread when x, r and w are all 16-bit: bf16 M=16384
  // H=8192 ran at 95.3-95.6% of copy in 512 threads (2 vectors each, the plain second pass)
  // against 88.8-88.9 in 256 (4 each, unrolled); at H=4096, 256 threads lost to 128 (92.0
  // against 93.2): docs/perf-notes.md runs 29-30.
  const std::int64_t nv = row_vectors(H, dtype_size(x));
  std::int64_t threads = ((nv + kBlockVecs - 1) / kBlockVecs + 31) / 32 * 32;
  if (narrow(x, w, r) && nv >= 2 * kMaxThreads) threads = kMaxThreads;
  return threads < 64 ? 64 : (threads > kMaxThreads ? kMaxThreads : threads);
}

std::size_t add_chunked_image_bytes(DType x, DType w, DType r, std::int64_t H) {
  // x's and r's row bodies, at most.
  const auto image = static_cast<std::size_t>(row_vectors(H, dtype_size(x))) * 16 *
                     (1 + dtype_size(r) / dtype_size(x));
  const std::int64_t block = launched_block(add_chunked_threads(x, w, r, H));
  if (block <= 256)  // 16-bit x, r and w with kImageMinVectors and more a thread of the block
    return narrow(x, w, r) && row_vectors(H, dtype_size(x)) >= kImageMinVectors * block ? image : 0;
  return image >= kSharedRowMin ? image : 0;
}

bool add_chunked_holds(DType x, DType w, DType r, std::int64_t M, std::int64_t H) {
  // auto, M=16384, % of copy, main's passes (the image or the L1 passes, fp32 row-vector) ->
  // kDecode (docs/perf-notes.md run 53, the mean of two rounds): bf16 H=2048 93.6 -> 95.1,
  // 4096 95.0 -> 96.0, 8192 96.6 -> 97.7; fp32 H=1024 94.2 -> 95.5, 2048 95.4 -> 95.7, 4096 97.0 -> 97.4,
  // 8192 95.6 -> 96.9. Run 51 (chunked's own passes): lost at bf16 H=1024 (-1.8) and 16384
  // (-1.3), so those keep their passes. Whole vectors only: odd rows are not measured (they keep
  // the passes they had). From 4096 rows only: at M=1024 bf16 H=4096 lost 68.3 -> 63.9 (run
  // 51); at M=4096 level (run 53: within 0.3 points at every H).
  if (M < 4096 || w != x || r != x || H * static_cast<std::int64_t>(dtype_size(x)) % 16 != 0) return false;
  const std::int64_t nv = row_vectors(H, dtype_size(x));
  return nv >= 256 && nv <= (dtype_size(x) == 4 ? 2048 : 1024);
}

AddHeld add_held_shape(DType x, std::int64_t H) {
  // bf16 and fp16, fp32 convention, y in x's dtype, H 2048-8192, NVIDIA H100 80GB HBM3, % of
  // copy, main (4 vectors, s in pass 1) -> 2 vectors with s late at H <= 4096 (docs/perf-notes.md
  // run 65, two calls, ABBA): M=4096-8192 H=2048 99.7-101.1 -> 101.2-103.9, H=4096 99.0-100.3
  // -> 99.6-101.3; M=16384-32768 H=2048-4096 98.8-99.7 -> 99.4-100.2. At H=8192 s late gave
  // back what 2 vectors gained (bf16 M=4096: 98.7, 2 vectors 99.2, with s late 98.7), so 2
  // vectors with s early there. fp32 keeps 4: 2 was level and 1 lost 6-14% (spills).
  if (dtype_size(x) != 2) return {kBlockVecs, false};
  return {2, row_vectors(H, dtype_size(x)) <= 512};
}

cudaError_t launch_add_chunked(const AddArgs& a, cudaStream_t s) {
  if (const cudaError_t e = begin_output(a, s); e != cudaSuccess) return e;
  if (a.M == 0) return cudaSuccess;
  return dispatch_add(a, [&](auto t, auto w, auto r, auto c, auto y) -> cudaError_t {
    using T = decltype(t);
    using W = decltype(w);
    using R = decltype(r);
    constexpr Convention C = decltype(c)::value;
    using Y = decltype(y);
    const std::int64_t block = launched_block(add_chunked_threads(a.xdtype, a.wdtype, a.rdtype, a.H));
    const std::size_t image = add_chunked_image_bytes(a.xdtype, a.wdtype, a.rdtype, a.H);
    const unsigned grid = static_cast<unsigned>(a.M);
    // The kernel of a path (kDecode: kDV vectors a thread, s stored late or not) for a block of
    // nt threads (64, 128, 256 or 512).
    const auto by_block_as = [&](auto path, auto vecs, auto late, std::int64_t nt,
                                 std::size_t smem) -> cudaError_t {
      constexpr Path P = decltype(path)::value;
      constexpr int DV = decltype(vecs)::value;
      constexpr bool L = decltype(late)::value;
      if (nt == 64)
        return launch_per_rows(add_chunked_kernel<T, W, R, C, Y, 64, P, DV, L>, grid, 64, smem, s, a);
      if (nt == 128)
        return launch_per_rows(add_chunked_kernel<T, W, R, C, Y, 128, P, DV, L>, grid, 128, smem, s, a);
      if (nt == 256)
        return launch_per_rows(add_chunked_kernel<T, W, R, C, Y, 256, P, DV, L>, grid, 256, smem, s, a);
      return launch_per_rows(add_chunked_kernel<T, W, R, C, Y, 512, P, DV, L>, grid, 512, smem, s, a);
    };
    const auto by_block = [&](auto path, std::int64_t nt, std::size_t smem) -> cudaError_t {
      return by_block_as(path, std::integral_constant<int, kBlockVecs>{}, std::false_type{}, nt, smem);
    };
    // A decode launch of one dtype whose row fits one round of kBlockVecs vectors a thread
    // (bf16 H <= 16384, fp32 8192), in a block of its own size: kDecode, docs/perf-notes.md
    // run 50; and many rows of 4-16 KB (16-bit) or 4-32 KB (fp32), run 53. (Mixed dtypes keep
    // the passes below: not instantiated, to bound the build.)
    if constexpr (std::is_same_v<W, T> && std::is_same_v<R, T>) {
      if (one_wave(a.M) || add_chunked_holds(a.xdtype, a.wdtype, a.rdtype, a.M, a.H)) {
        // The many 16-bit rows under the fp32 convention with y in x's dtype: add_held_shape's
        // (measured there only; other conventions and fp8 y keep kBlockVecs).
        if constexpr (sizeof(T) == 2 && C == Convention::fp32 && std::is_same_v<Y, T>) {
          const AddHeld h = add_held_shape(a.xdtype, a.H);
          if (!one_wave(a.M) && h.vecs == 2) {
            if (const int t = decode_threads(row_vectors(a.H, sizeof(T)), 2, kMaxThreads); t > 0) {
              const PathTag<Path::kDecode> held{};
              const std::integral_constant<int, 2> two{};
              return h.late_s ? by_block_as(held, two, std::true_type{}, launched_block(t), 0)
                              : by_block_as(held, two, std::false_type{}, launched_block(t), 0);
            }
          }
        }
        if (const int t = decode_threads(row_vectors(a.H, sizeof(T)), kBlockVecs, kMaxThreads); t > 0)
          return by_block(PathTag<Path::kDecode>{}, launched_block(t), 0);
      }
    }
    // Blocks of <= 256 threads: the unrolled L1 passes, or the image in shared memory.
    // As in the forward's chunked (docs/perf-notes.md): the unrolled second pass in blocks of
    // <= 256 threads, the plain one in larger blocks, where its smaller register footprint
    // keeps more blocks resident.
    if (block <= 256) {
      // The image for these blocks is built for 16-bit x, r and w only (add_chunked_image_bytes):
      // at most 256 x 4 vectors of x and r, 32 KB, under a block's default dynamic limit.
      if constexpr (sizeof(T) == 2 && sizeof(W) == 2 && sizeof(R) == 2) {
        if (image > 0) return by_block(PathTag<Path::kShared>{}, block, image);
      }
      return by_block(PathTag<Path::kL1>{}, block, 0);
    }
    // Rows through shared memory (add_chunked_image_bytes), as long as the image fits a
    // block's.
    if (image > 0) {
      const auto kernel = add_chunked_kernel<T, W, R, C, Y, 512, Path::kShared>;
      if (allow_max_dynamic_smem(reinterpret_cast<const void*>(kernel)) >= image)
        return launch_per_rows(kernel, grid, 512, image, s, a);
    }
    return launch_per_rows(add_chunked_kernel<T, W, R, C, Y, 512>, grid, 512, 0, s, a);
  });
}

}  // namespace rb::kern

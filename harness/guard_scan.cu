// Device-side scan of a guarded tensor: unwritten (still poisoned) and non-finite elements
// inside the tensor, changed bytes outside it (guard bands and row padding). Runs over the
// whole allocation, so a large output is checked completely without copying it back. Also
// the allocation's hash, by which the runner sees a kernel write into an input.
#include <cstdint>

#include "harness/cuda_check.h"
#include "harness/device_buffer.h"
#include "harness/tensor_hash.h"

namespace rb {
namespace {

struct ScanCounters {
  unsigned long long unwritten, nonfinite, guard_writes;
  unsigned long long first_unwritten, first_nonfinite, first_guard_write;
};

constexpr unsigned long long kNone = ~0ull;

template <class U>
__device__ bool is_nonfinite(U bits, DType kind) {
  if (kind == DType::f32) return (static_cast<std::uint32_t>(bits) & 0x7f800000u) == 0x7f800000u;
  if (kind == DType::f16) return (static_cast<std::uint32_t>(bits) & 0x7c00u) == 0x7c00u;
  // e4m3 (no inf): NaN is S.1111.111; e5m2: exponent all ones is inf or NaN.
  if (kind == DType::e4m3) return (static_cast<std::uint32_t>(bits) & 0x7fu) == 0x7fu;
  if (kind == DType::e5m2) return (static_cast<std::uint32_t>(bits) & 0x7cu) == 0x7cu;
  return (static_cast<std::uint32_t>(bits) & 0x7f80u) == 0x7f80u;
}

template <class U>
__global__ void scan_kernel(const U* base, std::int64_t n, std::int64_t origin, TensorShape s, DType kind,
                            ScanCounters* out) {
  const U poison = static_cast<U>(~U{0});
  unsigned long long unwritten = 0, nonfinite = 0, guard = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const U v = base[i];
    const std::int64_t li = i - origin;
    const std::int64_t row = li >= 0 ? li / s.stride : -1;
    const std::int64_t col = li >= 0 ? li % s.stride : -1;
    const bool logical = li >= 0 && row < s.rows && col < s.cols;
    if (logical) {
      const unsigned long long idx = static_cast<unsigned long long>(row * s.cols + col);
      if (v == poison) {
        ++unwritten;
        atomicMin(&out->first_unwritten, idx);
      } else if (is_nonfinite(v, kind)) {
        ++nonfinite;
        atomicMin(&out->first_nonfinite, idx);
      }
    } else if (v != poison) {
      ++guard;
      atomicMin(&out->first_guard_write, static_cast<unsigned long long>(i * sizeof(U)));
    }
  }
  if (unwritten) atomicAdd(&out->unwritten, unwritten);
  if (nonfinite) atomicAdd(&out->nonfinite, nonfinite);
  if (guard) atomicAdd(&out->guard_writes, guard);
}

std::int64_t as_index(unsigned long long v) { return v == kNone ? -1 : static_cast<std::int64_t>(v); }

// The sum of hash_term over the allocation's elements, mod 2^64 (atomicAdd of unsigned 64-bit
// integers: exact, so the same in any order).
template <class U>
__global__ void hash_kernel(const U* base, std::int64_t n, unsigned long long* out) {
  unsigned long long h = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    h += hash_term(static_cast<std::uint64_t>(i), base[i]);
  atomicAdd(out, h);
}

// Grid-stride blocks of 256 threads for n elements: one an element up to 4096 blocks.
unsigned scan_blocks(std::int64_t n, int threads) {
  const std::int64_t want = (n + threads - 1) / threads;
  return static_cast<unsigned>(want < 4096 ? (want > 0 ? want : 1) : 4096);
}

}  // namespace

std::uint64_t hash_guarded(const GuardedTensor& t, cudaStream_t s) {
  const TensorShape& sh = t.shape();
  DeviceBuffer acc(sizeof(unsigned long long));
  auto* d = static_cast<unsigned long long*>(acc.get());
  RB_CUDA_CHECK(cudaMemsetAsync(d, 0, sizeof(unsigned long long), s));
  const std::int64_t n = static_cast<std::int64_t>(t.buffer().bytes() / sh.elem_size);
  const int threads = 256;
  const unsigned blocks = scan_blocks(n, threads);
  const void* base = t.buffer().get();
  if (sh.elem_size == 4)
    hash_kernel<<<blocks, threads, 0, s>>>(static_cast<const std::uint32_t*>(base), n, d);
  else if (sh.elem_size == 1)
    hash_kernel<<<blocks, threads, 0, s>>>(static_cast<const std::uint8_t*>(base), n, d);
  else
    hash_kernel<<<blocks, threads, 0, s>>>(static_cast<const std::uint16_t*>(base), n, d);
  RB_CUDA_CHECK(cudaGetLastError());
  unsigned long long h = 0;
  RB_CUDA_CHECK(cudaMemcpyAsync(&h, d, sizeof h, cudaMemcpyDeviceToHost, s));
  RB_CUDA_CHECK(cudaStreamSynchronize(s));
  return h;
}

GuardScan scan_guarded(const GuardedTensor& t, DType kind, cudaStream_t s) {
  const TensorShape& sh = t.shape();
  const ScanCounters init{0, 0, 0, kNone, kNone, kNone};
  DeviceBuffer counters(sizeof(ScanCounters));
  auto* dc = static_cast<ScanCounters*>(counters.get());
  RB_CUDA_CHECK(cudaMemcpyAsync(dc, &init, sizeof init, cudaMemcpyHostToDevice, s));
  const std::int64_t n = static_cast<std::int64_t>(t.buffer().bytes() / sh.elem_size);
  const std::int64_t origin = static_cast<std::int64_t>(kGuardBytes / sh.elem_size) + sh.offset_elems;
  const int threads = 256;
  const unsigned blocks = scan_blocks(n, threads);
  if (sh.elem_size == 4)
    scan_kernel<std::uint32_t><<<blocks, threads, 0, s>>>(static_cast<const std::uint32_t*>(t.buffer().get()), n,
                                                          origin, sh, kind, dc);
  else if (sh.elem_size == 1)
    scan_kernel<std::uint8_t><<<blocks, threads, 0, s>>>(static_cast<const std::uint8_t*>(t.buffer().get()), n,
                                                         origin, sh, kind, dc);
  else
    scan_kernel<std::uint16_t><<<blocks, threads, 0, s>>>(static_cast<const std::uint16_t*>(t.buffer().get()), n,
                                                           origin, sh, kind, dc);
  RB_CUDA_CHECK(cudaGetLastError());
  ScanCounters c{};
  RB_CUDA_CHECK(cudaMemcpyAsync(&c, dc, sizeof c, cudaMemcpyDeviceToHost, s));
  RB_CUDA_CHECK(cudaStreamSynchronize(s));
  GuardScan g;
  g.unwritten = static_cast<std::int64_t>(c.unwritten);
  g.nonfinite = static_cast<std::int64_t>(c.nonfinite);
  g.guard_writes = static_cast<std::int64_t>(c.guard_writes);
  g.first_unwritten = as_index(c.first_unwritten);
  g.first_nonfinite = as_index(c.first_nonfinite);
  g.first_guard_write = as_index(c.first_guard_write);
  return g;
}

}  // namespace rb

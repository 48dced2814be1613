// RAII owners of device memory, streams and events, and the guarded tensor every kernel
// reads and writes: an allocation with a poisoned guard band before and after, the tensor's
// rows at a chosen stride and element offset inside, everything else poisoned too.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "core/names.h"

namespace rb {

// Byte value every poisoned byte holds: 0xFF.. is a NaN in fp32, fp16 and bf16, and not
// the canonical NaN any arithmetic produces.
inline constexpr unsigned char kPoisonByte = 0xFF;
inline constexpr std::size_t kGuardBytes = 256;

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

// A rows x cols tensor of elem_size-byte elements, row stride `stride` elements, starting
// `offset_elems` elements after the front guard band.
struct TensorShape {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t stride = 0;
  std::int64_t offset_elems = 0;
  std::size_t elem_size = 4;
};

// Bytes of the allocation a GuardedTensor of shape s takes (guards and row padding included).
std::size_t tensor_bytes(const TensorShape& s);

class GuardedTensor {
 public:
  GuardedTensor() = default;
  explicit GuardedTensor(const TensorShape& s);

  const TensorShape& shape() const { return shape_; }
  void* data() const;  // first element of row 0
  const DeviceBuffer& buffer() const { return buf_; }

  void poison(cudaStream_t s);  // the whole allocation, guards included
  // Copies rows x cols packed host elements into the tensor's rows (async on s).
  void upload(const void* host, cudaStream_t s);
  // Copies row r to host (cols elements), synchronously.
  void download_row(std::int64_t r, void* host) const;
  // Copies all rows, packed, to host, synchronously.
  void download(void* host) const;

 private:
  TensorShape shape_;
  DeviceBuffer buf_;
};

// Result of scanning a guarded tensor on the device.
struct GuardScan {
  std::int64_t unwritten = 0;   // logical elements still holding the poison pattern
  std::int64_t nonfinite = 0;   // logical elements that are NaN or Inf (poison excluded)
  std::int64_t guard_writes = 0;  // elements outside the tensor (guards, row padding) changed
  std::int64_t first_unwritten = -1;  // logical index row * cols + col
  std::int64_t first_nonfinite = -1;
  std::int64_t first_guard_write = -1;  // byte offset into the allocation
};

// Scans the whole allocation (synchronizes s); dtype (the tensor's, 1, 2 or 4 bytes) gives
// the non-finite test's exponent layout.
GuardScan scan_guarded(const GuardedTensor& t, DType dtype, cudaStream_t s);

// A 64-bit hash of the whole allocation, guards and padding included, element by element
// (harness/tensor_hash.h; synchronizes s): equal contents give equal hashes, so an input
// hashed after its upload and again after a kernel ran shows whether the kernel wrote into it.
std::uint64_t hash_guarded(const GuardedTensor& t, cudaStream_t s);

}  // namespace rb

#include "harness/device_buffer.h"

#include <utility>

#include "harness/cuda_check.h"
#include "harness/wait.h"

namespace rb {

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes > 0) RB_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
}

// cudaFree synchronizes with the device: with a kernel that never finishes still on it
// (device_wedged) the buffer is left to the process's exit instead.
DeviceBuffer::~DeviceBuffer() {
  if (ptr_ && !device_wedged()) RB_CUDA_CHECK_NOTHROW(cudaFree(ptr_));
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_ && !device_wedged()) RB_CUDA_CHECK_NOTHROW(cudaFree(ptr_));
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

Stream::Stream() { RB_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
Stream::~Stream() { RB_CUDA_CHECK_NOTHROW(cudaStreamDestroy(s_)); }
Event::Event() { RB_CUDA_CHECK(cudaEventCreate(&e_)); }
Event::~Event() { RB_CUDA_CHECK_NOTHROW(cudaEventDestroy(e_)); }

std::size_t tensor_bytes(const TensorShape& s) {
  const std::int64_t span = s.rows > 0 ? s.offset_elems + (s.rows - 1) * s.stride + s.cols : s.offset_elems;
  return 2 * kGuardBytes + static_cast<std::size_t>(span) * s.elem_size;
}

GuardedTensor::GuardedTensor(const TensorShape& s) : shape_(s), buf_(tensor_bytes(s)) {}

void* GuardedTensor::data() const {
  return static_cast<char*>(buf_.get()) + kGuardBytes + shape_.offset_elems * shape_.elem_size;
}

void GuardedTensor::poison(cudaStream_t s) { RB_CUDA_CHECK(cudaMemsetAsync(buf_.get(), kPoisonByte, buf_.bytes(), s)); }

void GuardedTensor::upload(const void* host, cudaStream_t s) {
  if (shape_.rows == 0) return;
  const std::size_t w = shape_.cols * shape_.elem_size;
  RB_CUDA_CHECK(cudaMemcpy2DAsync(data(), shape_.stride * shape_.elem_size, host, w, w, shape_.rows,
                                  cudaMemcpyHostToDevice, s));
}

void GuardedTensor::download_row(std::int64_t r, void* host) const {
  const char* src = static_cast<const char*>(data()) + r * shape_.stride * shape_.elem_size;
  RB_CUDA_CHECK(cudaMemcpy(host, src, shape_.cols * shape_.elem_size, cudaMemcpyDeviceToHost));
}

void GuardedTensor::download(void* host) const {
  if (shape_.rows == 0) return;
  const std::size_t w = shape_.cols * shape_.elem_size;
  RB_CUDA_CHECK(cudaMemcpy2D(host, w, data(), shape_.stride * shape_.elem_size, w, shape_.rows,
                             cudaMemcpyDeviceToHost));
}

}  // namespace rb

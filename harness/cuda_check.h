// Error handling for CUDA calls: one throwing macro naming file:line, the call and the
// error, a no-throw twin for destructors, and the error types the CLI maps to exit codes.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace rb {

// A CUDA call failed; the run cannot go on (exit 4).
struct CudaError : std::runtime_error {
  cudaError_t code;
  CudaError(cudaError_t c, const std::string& what) : std::runtime_error(what), code(c) {}
};

// No usable CUDA driver or device (exit 3).
struct NoDeviceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "cudaErrorX: its description", for messages.
std::string cuda_error_text(cudaError_t e);

[[noreturn]] void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line);
void report_cuda_error_nothrow(cudaError_t e, const char* call, const char* file, int line);

}  // namespace rb

#define RB_CUDA_CHECK(call)                                                      \
  do {                                                                           \
    const cudaError_t rb_err_ = (call);                                          \
    if (rb_err_ != cudaSuccess) ::rb::throw_cuda_error(rb_err_, #call, __FILE__, __LINE__); \
  } while (0)

#define RB_CUDA_CHECK_NOTHROW(call)                                              \
  do {                                                                           \
    const cudaError_t rb_err_ = (call);                                          \
    if (rb_err_ != cudaSuccess) ::rb::report_cuda_error_nothrow(rb_err_, #call, __FILE__, __LINE__); \
  } while (0)

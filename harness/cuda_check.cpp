#include "harness/cuda_check.h"

#include <fmt/format.h>

#include <cstdio>

namespace rb {

namespace {
std::string describe(cudaError_t e, const char* call, const char* file, int line) {
  return fmt::format("{}:{}: {} failed: {} ({})", file, line, call, cudaGetErrorName(e), cudaGetErrorString(e));
}
}  // namespace

std::string cuda_error_text(cudaError_t e) {
  return fmt::format("{}: {}", cudaGetErrorName(e), cudaGetErrorString(e));
}

void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line) {
  throw CudaError(e, describe(e, call, file, line));
}

void report_cuda_error_nothrow(cudaError_t e, const char* call, const char* file, int line) {
  std::fprintf(stderr, "rmsnorm-bench: %s\n", describe(e, call, file, line).c_str());
}

}  // namespace rb

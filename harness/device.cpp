#include "harness/device.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "harness/cuda_check.h"

namespace rb {

namespace {
std::string version_string(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }
}  // namespace

bool cuda_device_available(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why) *why = cuda_error_text(e);
    cudaGetLastError();
    return false;
  }
  if (n == 0) {
    if (why) *why = "no CUDA device found";
    return false;
  }
  return true;
}

DeviceInfo open_device(int index) {
  std::string why;
  if (!cuda_device_available(&why)) throw NoDeviceError("no usable CUDA device: " + why);
  int n = 0;
  RB_CUDA_CHECK(cudaGetDeviceCount(&n));
  if (index < 0 || index >= n)
    throw NoDeviceError(fmt::format("--device {} does not exist: {} CUDA device(s) visible", index, n));
  const cudaError_t e = cudaSetDevice(index);
  if (e != cudaSuccess)
    throw NoDeviceError(fmt::format("cannot use device {}: {}", index, cuda_error_text(e)));
  cudaDeviceProp p{};
  RB_CUDA_CHECK(cudaGetDeviceProperties(&p, index));
  DeviceInfo d;
  d.index = index;
  d.name = p.name;
  d.cc = fmt::format("{}.{}", p.major, p.minor);
  d.sms = p.multiProcessorCount;
  d.l2_bytes = p.l2CacheSize;
  d.total_mem = static_cast<std::int64_t>(p.totalGlobalMem);
  int drv = 0, rt = 0;
  RB_CUDA_CHECK(cudaDriverGetVersion(&drv));
  RB_CUDA_CHECK(cudaRuntimeGetVersion(&rt));
  d.driver = version_string(drv);
  d.runtime = version_string(rt);
  return d;
}

}  // namespace rb

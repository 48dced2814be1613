// What the launchers ask the runtime about the device, asked once and remembered (the
// persistent-grid and per-row launchers ask on every launch; the answers cannot change
// within a process): resident blocks per (device, kernel, block size, shared memory), and
// clusters per the same and cluster size, the SM count per device, and each kernel's opt-in
// to the largest dynamic shared memory.
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

#include "kernels/common.cuh"

namespace rb::kern {

std::int64_t resident_blocks(const void* kernel, int threads, std::size_t smem) {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 0;
  using Key = std::tuple<int, const void*, int, std::size_t>;
  static std::mutex mu;
  static std::map<Key, std::int64_t> known;
  const Key key{dev, kernel, threads, smem};
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = known.find(key); it != known.end()) return it->second;
  const int sms = sm_count();
  int per_sm = 0;
  if (sms == 0 || cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem) != cudaSuccess)
    return 0;
  return known[key] = static_cast<std::int64_t>(sms) * per_sm;
}

std::int64_t resident_clusters(const void* kernel, int threads, std::size_t smem, int cluster) {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 0;
  using Key = std::tuple<int, const void*, int, std::size_t, int>;
  static std::mutex mu;
  static std::map<Key, std::int64_t> known;
  const Key key{dev, kernel, threads, smem, cluster};
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = known.find(key); it != known.end()) return it->second;
  cudaFuncAttributes fa{};
  if (cudaFuncGetAttributes(&fa, kernel) != cudaSuccess) {
    (void)cudaGetLastError();
    return known[key] = 0;
  }
  // Code for sm_90+ loads only on an sm_90+ device, so this also answers for the device.
  if (fa.binaryVersion < 90) return known[key] = 0;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(cluster));
  cfg.blockDim = dim3(static_cast<unsigned>(threads));
  cfg.dynamicSmemBytes = smem;
  cudaLaunchAttribute attr = cluster_attribute(static_cast<unsigned>(cluster));
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  int n = 0;
  if (cudaOccupancyMaxActiveClusters(&n, kernel, &cfg) != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky: leave no error for the launch's own check
    n = 0;
  }
  return known[key] = n;
}

int sm_count() {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 0;
  static std::mutex mu;
  static std::map<int, int> known;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = known.find(dev); it != known.end()) return it->second;
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) return 0;
  return known[dev] = sms;
}

std::size_t allow_max_dynamic_smem(const void* kernel) {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 0;
  static std::mutex mu;
  static std::map<std::pair<int, const void*>, std::size_t> done;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = done.find({dev, kernel}); it != done.end()) return it->second;
  int optin = 0, static_smem = 0;
  cudaFuncAttributes fa{};
  if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess ||
      cudaFuncGetAttributes(&fa, kernel) != cudaSuccess)
    return 0;
  static_smem = static_cast<int>(fa.sharedSizeBytes);
  const int dynamic = optin - static_smem;
  if (dynamic <= 0 || cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, dynamic) != cudaSuccess)
    return 0;
  return done[{dev, kernel}] = static_cast<std::size_t>(dynamic);
}

}  // namespace rb::kern

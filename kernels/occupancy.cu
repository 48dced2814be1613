// Resident blocks per device, asked of the runtime once per (device, kernel, block size,
// shared memory) and remembered: the persistent-grid launchers ask on every launch, and the
// answer cannot change within a process.
#include <map>
#include <mutex>
#include <tuple>

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
  int sms = 0, per_sm = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) return 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem) != cudaSuccess) return 0;
  return known[key] = static_cast<std::int64_t>(sms) * per_sm;
}

}  // namespace rb::kern

// Timing: cold samples (L2 flushed before each) measured with CUDA events, a stopping rule,
// CUDA-graph replay for small launches, and the copy ceiling.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "harness/device_buffer.h"

namespace rb {

struct TimingOptions {
  int warmup = 3;
  int min_samples = 10;
  int max_samples = 2000;
  double max_noise_pct = 0.5;  // stop once the samples' relative stdev is below this
  double max_time_s = 0.1;     // per-case budget (after min_samples)
  int graph_launches = 100;    // launches per CUDA graph for the small-launch timing
};

struct SampleStats {
  double median_us = 0, min_us = 0, max_us = 0, noise_pct = 0;
  std::int64_t samples = 0;
};

// Median, min, max and relative stdev (%) of samples in microseconds.
SampleStats summarize(std::vector<double> samples_us);

// The stopping rule: enough samples and quiet enough, or the budget spent (min_samples
// are always taken).
bool should_stop(const std::vector<double>& samples_us, double elapsed_s, const TimingOptions& o);

// Writes a buffer larger than the L2 so every sample starts cold.
class L2Flusher {
 public:
  explicit L2Flusher(std::int64_t l2_bytes);
  void flush(cudaStream_t s);

 private:
  DeviceBuffer buf_;
};

using LaunchFn = std::function<void(cudaStream_t)>;

// Cold samples of one launch until the stopping rule holds.
SampleStats time_cold(const LaunchFn& launch, L2Flusher& flusher, cudaStream_t s, const TimingOptions& o);

// Per-launch time of `o.graph_launches` back-to-back launches captured in a CUDA graph
// (median over replays): what a decode step sees, launch overhead included but host gaps not.
double time_graph(const LaunchFn& launch, cudaStream_t s, const TimingOptions& o);

// Device-to-device copy bandwidth in GB/s, bytes read + written, same stopping rule.
struct CopyCeiling {
  double gbps = 0;
  SampleStats stats;
  std::int64_t bytes = 0;
};
CopyCeiling measure_copy_ceiling(std::int64_t bytes_each_way, L2Flusher& flusher, cudaStream_t s,
                                 const TimingOptions& o);

}  // namespace rb

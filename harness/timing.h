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

// How a cold sample clears the L2 before the timed launch.
//   read  (default): a kernel reads a buffer of twice the L2 size. The L2 ends up holding
//         clean lines, so the timed launch pays nothing for the flush.
//   write: cudaMemsetAsync of that buffer (what nvbench and triton's do_bench do). The L2
//         ends up holding up to an L2 of dirty lines that the timed launch must write back
//         as it evicts them: on the H200 up to 60 MB of extra DRAM writes charged to the
//         kernel, 45% on top of a 134 MB case (bf16, M=16384, H=2048).
enum class FlushMode { read, write };

struct TimingOptions {
  FlushMode flush = FlushMode::read;
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
  L2Flusher(std::int64_t l2_bytes, FlushMode mode);
  void flush(cudaStream_t s);

 private:
  FlushMode mode_;
  DeviceBuffer buf_;
  DeviceBuffer sink_;
};

// The read flush's kernel (harness/l2_flush.cu): reads `bytes` at p (a multiple of 16).
void launch_read_flush(const void* p, std::size_t bytes, unsigned* sink, cudaStream_t s);

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

#include "harness/timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "harness/cuda_check.h"
#include "harness/wait.h"

namespace rb {

namespace {

// Sample standard deviation over the mean, in %. Needs no sorting, so the stopping rule can
// ask it after every sample.
double noise_pct_of(const std::vector<double>& v) {
  const std::size_t n = v.size();
  if (n == 0) return 0.0;
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(n);
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  var = n > 1 ? var / static_cast<double>(n - 1) : 0.0;
  return mean > 0 ? 100.0 * std::sqrt(var) / mean : 0.0;
}

}  // namespace

SampleStats summarize(std::vector<double> v) {
  SampleStats s;
  s.samples = static_cast<std::int64_t>(v.size());
  if (v.empty()) return s;
  s.noise_pct = noise_pct_of(v);
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  s.median_us = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  s.min_us = v.front();
  s.max_us = v.back();
  return s;
}

bool should_stop(const std::vector<double>& samples_us, double elapsed_s, const TimingOptions& o) {
  const auto n = static_cast<int>(samples_us.size());
  if (n < o.min_samples) return false;
  if (n >= o.max_samples || elapsed_s >= o.max_time_s) return true;
  return noise_pct_of(samples_us) < o.max_noise_pct;
}

L2Flusher::L2Flusher(std::int64_t l2_bytes, FlushMode mode)
    : mode_(mode), buf_(static_cast<std::size_t>(std::max<std::int64_t>(2 * l2_bytes, 1 << 20) / 16 * 16)), sink_(4) {
  RB_CUDA_CHECK(cudaMemset(buf_.get(), 0x3c, buf_.bytes()));
  RB_CUDA_CHECK(cudaDeviceSynchronize());
}

void L2Flusher::flush(cudaStream_t s) {
  if (mode_ == FlushMode::write)
    RB_CUDA_CHECK(cudaMemsetAsync(buf_.get(), 0, buf_.bytes(), s));
  else
    launch_read_flush(buf_.get(), buf_.bytes(), static_cast<unsigned*>(sink_.get()), s);
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// One event-timed run of `body` on s, in microseconds.
double timed_us(const LaunchFn& body, cudaStream_t s, const Event& start, const Event& stop) {
  RB_CUDA_CHECK(cudaEventRecord(start.get(), s));
  body(s);
  RB_CUDA_CHECK(cudaEventRecord(stop.get(), s));
  wait_event(stop.get(), "a timed launch");
  float ms = 0;
  RB_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return 1000.0 * ms;
}

}  // namespace

SampleStats time_cold(const LaunchFn& launch, L2Flusher& flusher, cudaStream_t s, const TimingOptions& o) {
  for (int i = 0; i < o.warmup; ++i) launch(s);
  wait_stream(s, "the warm-up launches");
  Event start, stop;
  std::vector<double> samples;
  const auto t0 = std::chrono::steady_clock::now();
  while (!should_stop(samples, seconds_since(t0), o)) {
    flusher.flush(s);
    samples.push_back(timed_us(launch, s, start, stop));
  }
  return summarize(std::move(samples));
}

double time_graph(const LaunchFn& launch, cudaStream_t s, const TimingOptions& o) {
  cudaGraph_t graph = nullptr;
  RB_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  try {
    for (int i = 0; i < o.graph_launches; ++i) launch(s);
  } catch (...) {
    cudaStreamEndCapture(s, &graph);
    if (graph) cudaGraphDestroy(graph);
    throw;
  }
  RB_CUDA_CHECK(cudaStreamEndCapture(s, &graph));
  struct GraphOwner {
    cudaGraph_t g;
    cudaGraphExec_t e = nullptr;
    ~GraphOwner() {
      if (e) RB_CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(e));
      RB_CUDA_CHECK_NOTHROW(cudaGraphDestroy(g));
    }
  } owner{graph};
  RB_CUDA_CHECK(cudaGraphInstantiate(&owner.e, graph, 0));
  const LaunchFn replay = [&](cudaStream_t st) { RB_CUDA_CHECK(cudaGraphLaunch(owner.e, st)); };
  replay(s);  // warm-up
  wait_stream(s, "the CUDA graph's warm-up replay");
  Event start, stop;
  std::vector<double> samples;
  const auto t0 = std::chrono::steady_clock::now();
  while (!should_stop(samples, seconds_since(t0), o)) samples.push_back(timed_us(replay, s, start, stop));
  return summarize(std::move(samples)).median_us / o.graph_launches;
}

CopyCeiling measure_copy_ceiling(std::int64_t bytes_each_way, L2Flusher& flusher, cudaStream_t s,
                                 const TimingOptions& o) {
  DeviceBuffer src(static_cast<std::size_t>(bytes_each_way)), dst(static_cast<std::size_t>(bytes_each_way));
  RB_CUDA_CHECK(cudaMemsetAsync(src.get(), 0x3c, src.bytes(), s));
  const LaunchFn copy = [&](cudaStream_t st) {
    RB_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), src.bytes(), cudaMemcpyDeviceToDevice, st));
  };
  CopyCeiling c;
  c.stats = time_cold(copy, flusher, s, o);
  c.bytes = 2 * bytes_each_way;
  c.gbps = static_cast<double>(c.bytes) / (c.stats.median_us * 1e3);
  return c;
}

}  // namespace rb

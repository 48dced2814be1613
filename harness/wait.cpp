#include "harness/wait.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <utility>

#include "harness/cuda_check.h"

namespace rb {
namespace {

struct Policy {
  double timeout_s = kDefaultKernelTimeoutS;
  std::function<bool()> abandon;
};

Policy& policy() {
  static Policy p;
  return p;
}

std::atomic<bool> g_wedged{false};

void wait_checked(const std::function<cudaError_t()>& query, const char* what) {
  const WaitResult r = poll_until_done(query, policy().timeout_s, policy().abandon, kAbandonGraceS);
  switch (r.end) {
    case WaitEnd::done:
      return;
    case WaitEnd::error:
      throw CudaError(r.error, fmt::format("{} failed: {}", what, cuda_error_text(r.error)));
    case WaitEnd::timed_out:
      g_wedged = true;
      throw CudaError(cudaErrorLaunchTimeout,
                      fmt::format("{} did not finish within {:g} s (--kernel-timeout): a hung kernel? The device "
                                  "still runs it, so the run stops here",
                                  what, policy().timeout_s));
    case WaitEnd::abandoned:
      g_wedged = true;
      throw CudaError(cudaErrorLaunchTimeout,
                      fmt::format("{} had not finished {:.1f} s into the wait, {:g} s after a signal asked the run "
                                  "to stop: it is left running and the run stops here",
                                  what, r.waited_s, kAbandonGraceS));
  }
}

}  // namespace

WaitResult poll_until_done(const std::function<cudaError_t()>& query, double timeout_s,
                           const std::function<bool()>& abandon, double grace_s) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const auto since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  std::optional<Clock::time_point> asked;  // when `abandon` first held
  for (long polls = 0;; ++polls) {
    const cudaError_t e = query();
    if (e == cudaSuccess) return {WaitEnd::done, e, since(t0)};
    if (e != cudaErrorNotReady) return {WaitEnd::error, e, since(t0)};
    if (timeout_s > 0 && since(t0) >= timeout_s) return {WaitEnd::timed_out, e, since(t0)};
    if (!asked && abandon && abandon()) asked = Clock::now();
    if (asked && since(*asked) >= grace_s) return {WaitEnd::abandoned, e, since(t0)};
    // About the first millisecond spins (yielding the core between polls); after it a poll
    // every 50 us costs the host nothing and a long kernel at most 50 us of the wait.
    if (polls < 2000)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void set_wait_policy(double timeout_s, std::function<bool()> abandon) {
  policy() = Policy{timeout_s, std::move(abandon)};
}

void wait_stream(cudaStream_t s, const char* what) {
  wait_checked([s] { return cudaStreamQuery(s); }, what);
}

void wait_event(cudaEvent_t e, const char* what) {
  wait_checked([e] { return cudaEventQuery(e); }, what);
}

bool device_wedged() { return g_wedged; }

}  // namespace rb

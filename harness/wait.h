// Waiting for a kernel without waiting forever. The harness waits for the kernels it runs by
// polling (cudaStreamQuery / cudaEventQuery) instead of a blocking synchronize, so a kernel that
// never finishes (a deadlocked plugin, a spinning barrier) ends the wait after the kernel
// timeout instead of hanging the run, and a SIGINT or SIGTERM that arrives meanwhile is seen.
// A kernel cannot be stopped from the host: once a wait gives up, the device is "wedged" (its
// context still runs the kernel), any call that synchronizes with it would block, and the
// tool writes what it has measured and exits without freeing device memory (main: std::_Exit).
#pragma once

#include <cuda_runtime_api.h>

#include <functional>

namespace rb {

enum class WaitEnd {
  done,       // the work finished (query returned cudaSuccess)
  error,      // the query returned an error (a device fault): WaitResult::error
  timed_out,  // not finished within the timeout
  abandoned   // not finished within the grace after `abandon` turned true (a signal)
};

struct WaitResult {
  WaitEnd end = WaitEnd::done;
  cudaError_t error = cudaSuccess;
  double waited_s = 0;
};

// Polls `query` until it returns anything but cudaErrorNotReady, at most timeout_s seconds (0:
// no limit) and at most grace_s seconds after `abandon` (may be empty) first returns true. The
// first polls spin (the usual kernel of a case ends within microseconds), later ones sleep
// briefly, so a long wait does not hold a core.
WaitResult poll_until_done(const std::function<cudaError_t()>& query, double timeout_s,
                           const std::function<bool()>& abandon, double grace_s);

// The process's waiting rules: the kernel timeout in seconds (0: wait forever; the CLI's
// --kernel-timeout, default kDefaultKernelTimeoutS) and the test for a pending signal (the
// app's interrupt flag; a wait goes on kAbandonGraceS past it, so a kernel that is merely
// running finishes and the run stops between cases as usual).
constexpr double kDefaultKernelTimeoutS = 60;
constexpr double kAbandonGraceS = 2;
void set_wait_policy(double timeout_s, std::function<bool()> abandon);

// Wait for all work queued on s, or for event e, under the policy. Throws CudaError naming
// `what`: the device's error, or cudaErrorLaunchTimeout when the wait gave up, after which
// device_wedged() holds for the rest of the process.
void wait_stream(cudaStream_t s, const char* what);
void wait_event(cudaEvent_t e, const char* what);

// A wait gave up on a kernel still running: make no call that synchronizes with the device.
bool device_wedged();

}  // namespace rb

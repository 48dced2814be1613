// The process exit codes of a sweep (README "Exit codes"), ordered by severity so that
// combining several outcomes (a run's, its workers') is a max.
#pragma once

namespace rb {

constexpr int kExitPass = 0;       // every case passed (or was skipped)
constexpr int kExitFail = 1;       // a case failed validation
constexpr int kExitUsage = 2;      // bad option or input, decided before any GPU work
constexpr int kExitNoDevice = 3;   // no usable CUDA driver or device
constexpr int kExitCudaError = 4;  // a CUDA error aborted the run
constexpr int kExitHostError = 5;  // the host failed the run: out of memory, results not writable
// 128 + the signal (130 SIGINT, 143 SIGTERM): interrupted; what finished is on disk.

inline int worse_exit(int a, int b) { return a > b ? a : b; }

}  // namespace rb

// strided_sum: a thread's fp32 sum over a strided run of terms, in rounds. Host and device
// code (a CPU test checks its error against a single running sum: StridedSum.*).
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define RB_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define RB_HOST_DEVICE inline
#endif

namespace rb::kern {

// The sum over c = first, first + step, ... < n of term(c), in fp32, in rounds of kSumRound
// terms summed on their own before each joins the running total. A single running sum's
// rounding error grows with the square root of its additions: at 256 threads a row of about
// 6.7e7 fp32 columns (262144 terms a thread) drifted past the rrms tolerance (1e-5 + 1e-5
// relative). In rounds the total takes kSumRound times fewer additions and each round its
// own kSumRound: for 262144 squares of normal values the relative error fell from 6.9e-5 to
// 5.9e-7 (host fp32, tests/cpu_sums_test.cpp's data). The naive kernels' loops; chunked's
// unrolled passes sum each round's vectors on their own the same way.
constexpr int kSumRound = 64;
template <class Term>
RB_HOST_DEVICE float strided_sum(std::int64_t first, std::int64_t n, std::int64_t step, Term&& term) {
  float total = 0.f;
  for (std::int64_t c0 = first; c0 < n; c0 += kSumRound * step) {
    const std::int64_t end = c0 + kSumRound * step < n ? c0 + kSumRound * step : n;
    float part = 0.f;
    for (std::int64_t c = c0; c < end; c += step) part += term(c);
    total += part;
  }
  return total;
}

}  // namespace rb::kern

// The bisect tests' case: a bf16 fwd of M x H at eps 1e-5 (CPU and GPU tests alike).
#pragma once

#include <cstdint>

#include "harness/case.h"

namespace rb::testing_support {

inline Case bf16_fwd_case(std::int64_t M, std::int64_t H, Dist d = Dist::normal, std::uint64_t seed = 0x5eed) {
  Case c;
  c.op = Op::fwd;
  c.dtype = c.wdtype = c.rdtype = DType::bf16;
  c.M = M;
  c.H = H;
  c.eps = 1e-5;
  c.dist = d;
  c.seed = seed;
  return c;
}

}  // namespace rb::testing_support

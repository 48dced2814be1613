// The fewest bytes an op must move: each input read once, each output written once. The
// one place the formula lives; the README documents it.
#pragma once

#include <cstdint>

#include "kernels/types.h"

namespace rb {

// fwd: read x (M*H) and w (H), write y (M*H) and rrms (M fp32).
inline std::int64_t fwd_bytes(std::int64_t M, std::int64_t H, DType x, DType w) {
  const auto xs = static_cast<std::int64_t>(dtype_size(x));
  const auto ws = static_cast<std::int64_t>(dtype_size(w));
  return 2 * M * H * xs + H * ws + 4 * M;
}

}  // namespace rb

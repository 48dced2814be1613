// The fewest bytes an op must move: each input read once, each output written once. The
// one place the formula lives; the README documents it. Scratch (the backward's dw
// partials) is not counted: a kernel that needs it pays for it in time.
#pragma once

#include <cstdint>

#include "kernels/types.h"

namespace rb {

// sx, sw, sr: bytes per element of x (and y, dy), w (and dw), the residual stream.
//   fwd      read x, w;              write y, rrms        2*M*H*sx + H*sw + 4*M
//   add      read x, r, w;           write y, s, rrms     2*M*H*(sx + sr) + H*sw + 4*M
//   bwd      read x, dy, w, rrms;    write dx, dw         3*M*H*sx + 2*H*sw + 4*M
//   add-bwd  read s, dy, ds_out, w, rrms; write dx (= dr, residual dtype), dw
//                                                          M*H*(sx + 3*sr) + 2*H*sw + 4*M
inline std::int64_t op_bytes(Op op, std::int64_t M, std::int64_t H, DType x, DType w, DType r) {
  const auto sx = static_cast<std::int64_t>(dtype_size(x));
  const auto sw = static_cast<std::int64_t>(dtype_size(w));
  const auto sr = static_cast<std::int64_t>(dtype_size(r));
  switch (op) {
    case Op::fwd: return 2 * M * H * sx + H * sw + 4 * M;
    case Op::add: return 2 * M * H * (sx + sr) + H * sw + 4 * M;
    case Op::bwd: return 3 * M * H * sx + 2 * H * sw + 4 * M;
    case Op::add_bwd: return M * H * (sx + 3 * sr) + 2 * H * sw + 4 * M;
  }
  return 0;
}

}  // namespace rb

// The host storage type of each dtype, for code that handles host copies of tensors.
#pragma once

#include "kernels/types.h"
#include "reference/host_dtype.h"

namespace rb {

// Calls f(T{}) with the host storage type of a dtype (ref::half, ref::bfloat16, float).
template <class F>
decltype(auto) with_host_type(DType d, F&& f) {
  switch (d) {
    case DType::f16:
      return f(ref::half{});
    case DType::bf16:
      return f(ref::bfloat16{});
    case DType::f32:
      break;
  }
  return f(float{});
}

}  // namespace rb

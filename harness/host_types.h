// The host storage type of each dtype, for code that handles host copies of tensors.
#pragma once

#include <stdexcept>

#include "kernels/types.h"
#include "reference/host_dtype.h"

namespace rb {

// Calls f(T{}) with the host storage type of an input dtype (ref::half, ref::bfloat16,
// float): the types the generators and the reference compute on. fp8 is output-only and
// throws std::logic_error here.
template <class F>
decltype(auto) with_input_host_type(DType d, F&& f) {
  switch (d) {
    case DType::f16:
      return f(ref::half{});
    case DType::bf16:
      return f(ref::bfloat16{});
    case DType::e4m3:
    case DType::e5m2:
      throw std::logic_error("an fp8 dtype is an output dtype only");
    case DType::f32:
      break;
  }
  return f(float{});
}

// The same for any dtype, fp8 included (ref::fp8_e4m3, ref::fp8_e5m2): for outputs.
template <class F>
decltype(auto) with_host_type(DType d, F&& f) {
  switch (d) {
    case DType::e4m3:
      return f(ref::fp8_e4m3{});
    case DType::e5m2:
      return f(ref::fp8_e5m2{});
    default:
      break;
  }
  return with_input_host_type(d, std::forward<F>(f));
}

}  // namespace rb

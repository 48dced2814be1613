// Test helper: iterate over the host storage types (float, half, bfloat16) and name them.
#pragma once

#include <string>
#include <type_traits>

#include "reference/host_dtype.h"

namespace rb::ref::testing_support {

template <class T>
struct Tag {
  using type = T;
};

template <class F>
void for_each_dtype(F&& f) {
  f(Tag<float>{});
  f(Tag<half>{});
  f(Tag<bfloat16>{});
}

template <class F>
void for_each_dtype_pair(F&& f) {
  for_each_dtype([&](auto x_tag) { for_each_dtype([&](auto w_tag) { f(x_tag, w_tag); }); });
}

template <class T>
std::string dtype_name() {
  if constexpr (std::is_same_v<T, float>) return "fp32";
  if constexpr (std::is_same_v<T, half>) return "fp16";
  if constexpr (std::is_same_v<T, bfloat16>) return "bf16";
  if constexpr (std::is_same_v<T, double>) return "fp64";
}

}  // namespace rb::ref::testing_support

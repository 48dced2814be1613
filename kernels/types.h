// Vocabulary shared by the kernels and their callers: element types, ops and the
// launch-argument struct of the forward op. Plain C++ (no CUDA headers) so host-only code
// can include it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rb {

enum class DType { f32, f16, bf16 };

inline constexpr std::size_t dtype_size(DType t) { return t == DType::f32 ? 4 : 2; }

inline constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "fp32";
    case DType::f16: return "fp16";
    case DType::bf16: return "bf16";
  }
  return "?";
}

inline std::optional<DType> parse_dtype(std::string_view s) {
  if (s == "fp32") return DType::f32;
  if (s == "fp16") return DType::f16;
  if (s == "bf16") return DType::bf16;
  return std::nullopt;
}

enum class Op { fwd };

inline constexpr std::string_view op_name(Op op) {
  switch (op) {
    case Op::fwd: return "fwd";
  }
  return "?";
}

// y[r, c] = x[r, c] * rsqrt(mean_c(x[r, :]^2) + eps) * w[c], accumulated in fp32.
// Row r of x starts at x + r * x_stride elements (likewise y). y has x's dtype.
// rrms, when non-null, receives 1 / sqrt(mean(x^2) + eps) in fp32 for each row.
struct FwdArgs {
  const void* x = nullptr;
  const void* w = nullptr;
  void* y = nullptr;
  float* rrms = nullptr;
  std::int64_t M = 0;
  std::int64_t H = 0;
  std::int64_t x_stride = 0;  // elements
  std::int64_t y_stride = 0;  // elements
  float eps = 1e-5f;
  DType xdtype = DType::f32;
  DType wdtype = DType::f32;
};

}  // namespace rb

// The launch-argument structs of each op family, shared by the kernels and their callers
// (the names of dtypes and ops: core/names.h). Plain C++ (no CUDA headers) so host-only code
// can include it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/names.h"

namespace rb {

// y[r, c] = x[r, c] * rsqrt(mean_c(x[r, :]^2) + eps) * w[c], accumulated in fp32.
// Row r of x starts at x + r * x_stride elements (likewise y). y has x's dtype.
// rrms, when non-null, receives 1 / sqrt(mean(x^2) + eps) in fp32 for each row.
//
// conv: where the roundings happen and whether w is an offset from 1 (core/names.h).
// ydtype: y's dtype, xdtype or an fp8 type. With fp8, y8 = saturate(round(y * *scale)) (the
// largest finite fp8 value for anything beyond it, NaN stays NaN) and *amax receives
// max |y| over the whole tensor, before the scale, in fp32 (the launch zeroes it first).
// scale and amax are device pointers to one fp32 each, used only with an fp8 ydtype.
struct FwdArgs {
  const void* x = nullptr;
  const void* w = nullptr;
  void* y = nullptr;
  float* rrms = nullptr;
  const float* scale = nullptr;
  float* amax = nullptr;
  std::int64_t M = 0;
  std::int64_t H = 0;
  std::int64_t x_stride = 0;  // elements
  std::int64_t y_stride = 0;  // elements
  float eps = 1e-5f;
  DType xdtype = DType::f32;
  DType wdtype = DType::f32;
  DType ydtype = DType::f32;
  Convention conv = Convention::fp32;
  void* workspace = nullptr;  // the plan's workspace_bytes() of device scratch (vendor plans)
  std::size_t workspace_bytes = 0;
};

// add: s = x + r added in fp32 (before squaring), y = s * rsqrt(mean(s^2) + eps) * w.
// y has x's dtype; s (residual_out) has the residual dtype, like r; rrms(s) saved as for
// FwdArgs. r and s are distinct buffers. conv, ydtype, scale and amax as for FwdArgs (llama
// rounds s to the residual dtype before squaring it).
struct AddArgs {
  const void* x = nullptr;
  const void* r = nullptr;
  const void* w = nullptr;
  void* y = nullptr;
  void* s = nullptr;
  float* rrms = nullptr;
  const float* scale = nullptr;
  float* amax = nullptr;
  std::int64_t M = 0;
  std::int64_t H = 0;
  std::int64_t x_stride = 0, r_stride = 0, y_stride = 0, s_stride = 0;  // elements
  float eps = 1e-5f;
  DType xdtype = DType::f32;
  DType wdtype = DType::f32;
  DType rdtype = DType::f32;
  DType ydtype = DType::f32;
  Convention conv = Convention::fp32;
  void* workspace = nullptr;  // the plan's workspace_bytes() of device scratch (vendor plans)
  std::size_t workspace_bytes = 0;
};

// bwd and add-bwd. Per row, with g = dy * w and the saved rrms (never recomputed):
//   dx[h] = rrms * g[h] - x[h] * (rrms^3 / H) * sum_j g[j] * x[j]   (+ ds_out[h] for add-bwd)
//   dw[h] = sum over rows of dy[h] * x[h] * rrms
// dw is reduced as fp32 partials (one row of partials per block of a persistent grid, each
// block's rows in a fixed order) followed by a column reduction over the partials in a fixed
// order: bitwise repeatable, no atomics.
//   bwd:     x, dx in xdtype; dy in dydtype == xdtype; ds_out null.
// conv: with a weight offset (gemma, zero-centered) g = dy * w_eff, w_eff = 1 + w rounded as
// the forward rounds it (fp32, or w's dtype); dw is unchanged (d w_eff / d w = 1). fp32
// and llama have the same backward (a forward's intermediate roundings are not
// differentiated).
//   add-bwd: x is the saved residual stream s and dx (= dr) and ds_out are in the residual
//            dtype (xdtype here); dy is in the x dtype of the forward (dydtype).
// workspace: device scratch of workspace_bytes (the plan's workspace_bytes()).
struct BwdArgs {
  const void* x = nullptr;
  const void* w = nullptr;
  const void* dy = nullptr;
  const float* rrms = nullptr;
  const void* ds_out = nullptr;
  void* dx = nullptr;
  void* dw = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  std::int64_t M = 0;
  std::int64_t H = 0;
  std::int64_t x_stride = 0, dy_stride = 0, ds_stride = 0, dx_stride = 0;  // elements
  DType xdtype = DType::f32;
  DType dydtype = DType::f32;
  DType wdtype = DType::f32;
  Convention conv = Convention::fp32;
};

}  // namespace rb

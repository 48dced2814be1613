// Host-side facts of the `cublas` kernel (kernels/vendor/cublas.cu) that callers and tests
// need without a GPU: its limits, its workspace size and the last cuBLAS failure of a launch.
// Plain C++ (no CUDA device code), so host-only sources may include it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "kernels/registry.h"

namespace rb::vendor::cublas {

// cuBLAS's own scratch, carved from the front of the plan's workspace and bound with
// cublasSetWorkspace on every launch: no allocation inside a launch (graph capture safe) and
// one fixed configuration (cuBLAS's bitwise reproducibility holds for a fixed workspace).
// 32 MiB is NVIDIA's recommendation for Hopper.
inline constexpr std::size_t kLibraryWorkspaceBytes = std::size_t{32} << 20;
// The backward materialises dy * x as an M x H fp32 matrix; above this workspace it skips.
inline constexpr std::size_t kMaxWorkspaceBytes = std::size_t{2} << 30;
// Largest M and H: cuBLAS takes dimensions as int. The backward pads P's rows to a
// multiple of kRowPad floats, so its H stops kRowPad - 1 earlier.
inline constexpr std::int64_t kMaxDim = 2147483647;
inline constexpr std::int64_t kRowPad = 32;

// Bytes of device scratch a plan for p needs (Plan::workspace_bytes()), each part aligned
// to 256 bytes:
//   fwd:          kLibraryWorkspaceBytes + M floats (the row sums of squares)
//   bwd, add-bwd: kLibraryWorkspaceBytes + M x ldP floats (P = dy * x, ldP = H rounded up
//                 to kRowPad) + H floats (w in fp32) + M floats (c = P w) + H floats (dw in
//                 fp32)
// SIZE_MAX where the size does not fit a size_t.
std::size_t workspace_bytes(const Problem& p);

// The kernel's own limits (KernelInfo::supports): dimensions cuBLAS cannot take, the
// backward's workspace cap. nullopt = supported.
std::optional<std::string> supports(const Problem& p);

// The last cuBLAS (or CUDA) failure a launch on this thread mapped to a cudaError_t:
// "cuBLAS: <call>: <status name> (<status string>)"; "" if none.
std::string last_error();

}  // namespace rb::vendor::cublas

// Host launchers and capability checks of the forward strategies (internal to kernels/;
// callers go through registry.h).
#pragma once

#include <cuda_runtime_api.h>

#include <optional>
#include <string>

#include "kernels/types.h"

namespace rb::kern {

cudaError_t launch_fwd_naive(const FwdArgs& a, cudaStream_t s);

// Largest H the register-resident strategies hold, per x dtype.
std::int64_t row_vector_max_H(DType x);
cudaError_t launch_fwd_row_vector(const FwdArgs& a, cudaStream_t s);
// vpt in {2, 4, 8} vectors a thread, `rows` rows a block (block = rows * group <= 512).
cudaError_t launch_fwd_row_vector_cfg(const FwdArgs& a, cudaStream_t s, int vpt, int rows);

std::int64_t warp_row_max_H(DType x);
cudaError_t launch_fwd_warp_row(const FwdArgs& a, cudaStream_t s);

cudaError_t launch_fwd_chunked(const FwdArgs& a, cudaStream_t s);

// auto: the strategy it would pick for these arguments.
std::string auto_pick_fwd(const FwdArgs& a);

// Mutants (kernels/mutants/): deliberately wrong forward kernels.
enum class FwdBug { half_accum, eps_outside, weight_row_offset, tail_store, tail_load, mean_sub, pad_denominator };
cudaError_t launch_fwd_mutant(FwdBug bug, const FwdArgs& a, cudaStream_t s);

}  // namespace rb::kern

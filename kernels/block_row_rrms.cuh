// The rrms of one row by one block (naive's forward, and the fp8 mutants built on it): each
// thread's squares summed in rounds (strided_sum), the block's sum, then
// rsqrt(sum / H + eps) in fp32.
#pragma once

#include "kernels/common.cuh"

namespace rb::kern {

// Every thread of the block must call it; `scratch` holds 32 floats of shared memory.
template <class T>
__device__ __forceinline__ float block_row_rrms(const T* x, std::int64_t H, float eps, float* scratch) {
  const float sumsq = strided_sum(threadIdx.x, H, blockDim.x, [&](std::int64_t c) {
    const float v = to_f32(x[c]);
    return v * v;
  });
  return rsqrtf(block_sum(sumsq, scratch) / static_cast<float>(H) + eps);
}

}  // namespace rb::kern

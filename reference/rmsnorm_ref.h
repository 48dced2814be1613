// The fp64 reference, in Eigen: plain and obviously right. It never sees the kernels'
// statistics; it recomputes everything from the stored inputs.
#pragma once

#include <cstdint>

namespace rb::ref {

// y[c] = x[c] * rrms * w[c] with rrms = 1 / sqrt(mean(x^2) + eps), in fp64. Returns rrms.
// T and W are float, half or bfloat16 (host_dtype.h); y receives H doubles.
// Throws std::invalid_argument if H < 1.
template <class T, class W>
double rmsnorm_fwd_row(const T* x, const W* w, std::int64_t H, double eps, double* y);

}  // namespace rb::ref

// The term of one element in the hash of a device allocation (hash_guarded,
// harness/device_buffer.h): a 64-bit mix of the element's index and bits. The hash is the
// sum of the terms mod 2^64, so the order threads add them in does not matter, and changing an
// element's bits, or swapping two unequal elements, changes it but with probability ~2^-64
// (the mix is a bijection of index * golden ratio + bits: splitmix64's finalizer).
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define RB_TENSOR_HASH_FN __host__ __device__ __forceinline__
#else
#define RB_TENSOR_HASH_FN inline
#endif

namespace rb {

RB_TENSOR_HASH_FN std::uint64_t hash_term(std::uint64_t index, std::uint64_t bits) {
  std::uint64_t z = index * 0x9E3779B97F4A7C15ull + bits;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace rb

#undef RB_TENSOR_HASH_FN

// Input generators, deterministic from (seed, distribution, row): the same row always gets
// the same values, whichever thread or order generates it, so a reference can regenerate
// any row on its own and a sweep can reuse inputs across kernels and eps.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/names.h"
#include "reference/host_dtype.h"

namespace rb::ref {

// The distributions and their names live with the rest of a case's vocabulary.
using rb::all_dists;
using rb::Dist;
using rb::dist_name;
using rb::parse_dist;

// Row `row` of x (H values, storage type T). Distributions:
//   normal   N(0, 1)
//   large    N(0, 1) * 300: |x| in the hundreds, so fp16 squares overflow
//   tiny     N(0, 1) * 1e-3: mean square ~1e-6, the size of eps
//   offset   N(3, 1): non-zero mean (a LayerNorm in disguise is caught)
//   outlier  N(0, 1) with a few entries per row scaled by 1000: min(3, H) distinct,
//            row-dependent columns hold 1000 * z with |z| raised to at least 1, so
//            1000 <= |x| < 9000 there (finite in fp16, squares overflow it)
//   zero_row N(0, 1) except rows where is_zero_row(row) holds, which are all zero
// Every distribution transforms the same N(0, 1) draws of the row (splitmix64 keyed by
// seed and row, Box-Muller), so e.g. an outlier row equals the normal row outside its
// outlier columns. Values go double -> float -> T, rounding to nearest even. The generators
// also fill the fp8 types (saturating: e4m3 holds at most 448, so `large` and `outlier`
// saturate there).
// Throws std::invalid_argument if H < 1.
template <class T>
void generate_row(Dist d, std::uint64_t seed, std::int64_t row, std::int64_t H, T* out);

// M rows into out (row r at out + r * stride); elements between H and stride are untouched.
// Spread over the host's cores in contiguous blocks of rows (small inputs stay on the
// calling thread). Throws std::invalid_argument if H < 1, M < 0 or stride < H.
template <class T>
void generate_rows(Dist d, std::uint64_t seed, std::int64_t M, std::int64_t H, std::int64_t stride, T* out);

// The weight: 1 + 0.5 * N(0, 1), never all ones, so wrong weight indexing shows. It draws
// from its own stream, independent of every row of x. With offset (the zero-centred
// parameter of the gemma and zero-centered conventions, whose kernels multiply by 1 + w) the
// stored value is 0.5 * N(0, 1) from the same draws: 1 + w then has the plain weight's
// distribution (not bit for bit the plain weight: the offset is rounded to T on its own).
template <class T>
void generate_weight(std::uint64_t seed, std::int64_t H, T* out, bool offset = false);

// Rows that the zero_row distribution leaves all zero (row 1, then every 5th row):
// row % 5 == 1, i.e. rows 1, 6, 11, ... Row 0 is never zero, so M >= 2 has a zero row.
bool is_zero_row(std::int64_t row);

}  // namespace rb::ref

// Bisecting numerics between two sides of one case: a kernel and another kernel, or a
// kernel and the fp64 reference, each under a convention, on the same inputs. Host-only:
// it works on the outputs' host bytes, so a reproducer replays it without a GPU.
//
// It reports, per output, the ULP distances of A against B and of each against the fp64
// reference (correctly rounded to the output's dtype); the first and the worst divergent
// element with its row's statistics; the stage where the two part; and which convention
// reproduces each side most closely.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/case.h"
#include "harness/ops.h"

namespace rb {

// One side: a kernel (a registry name, plugins and variants included) or "reference", and
// the convention it is asked to follow.
struct BisectSide {
  std::string kernel;
  Convention conv = Convention::fp32;
  bool is_reference() const { return kernel == kReferenceSide; }
  std::string label() const;  // "auto (llama)"
  static constexpr const char* kReferenceSide = "reference";
};

// Tensors by name: packed host bytes (rows x H, no padding) in the tensor's dtype.
using TensorBytes = std::map<Tensor, std::vector<unsigned char>>;

// ULP distances: the number of representable values of the output's dtype between two
// stored values (0: bitwise equal, +0 and -0 equal). Buckets: 0, 1, 2, 3-4, 5-8, 9-16,
// 17-64, 65-256, 257-4096, more; NaN against a number counts in `nan`.
struct UlpHistogram {
  static constexpr std::size_t kBuckets = 10;
  static const std::array<const char*, kBuckets>& labels();
  std::array<std::int64_t, kBuckets> counts{};
  std::int64_t nan = 0;
  std::int64_t total = 0;
  std::uint64_t max = 0;
  void add(std::uint64_t ulps);
  std::int64_t exact() const { return counts[0]; }
};

// ULP distance between two stored values of dtype t (their bits).
std::uint64_t ulp_distance(DType t, std::uint32_t a_bits, std::uint32_t b_bits);

struct BisectElement {
  std::int64_t row = -1, col = -1;  // -1: none (row -1 for a per-column output like dw)
  double a = 0, b = 0, ref = 0;     // the two sides' values and the exact reference
  std::uint64_t ulps = 0;           // A against B
};

struct OutputBisect {
  Tensor tensor = Tensor::y;
  DType dtype = DType::f32;
  UlpHistogram a_vs_b, a_vs_ref, b_vs_ref;
  std::int64_t divergent = 0;  // elements where A is outside the tolerance around B
  BisectElement first, worst;  // worst: the largest |A - B| relative to the tolerance
};

// A row's statistics, from the inputs and both sides' saved rrms.
struct RowStats {
  std::int64_t row = -1;
  double mean_square = 0;  // of x (add: of s = x + r), exact
  double rrms_exact = 0;
  std::optional<double> rrms_a, rrms_b;  // saved by each side (fwd and add)
  double max_abs_x = 0;
  std::int64_t argmax_x = 0;
  std::int64_t divergent = 0;  // elements of the main output diverging in this row
};

// Where two sides part, first stage first.
enum class Stage {
  none,            // they agree within the tolerance
  residual_sum,    // s = x + r, or whether s is rounded before it is squared
  rrms,            // the sum of squares / rrms
  tail,            // the row's tail columns (loaded past H, or stored past it)
  normalised,      // x * rrms rounded (to x's dtype) before the weight, or not
  weight,          // the weight product (which w, and 1 + w)
  final_rounding,  // the last rounding alone (1-2 ulp, scattered)
  dx,              // backward: dx
  dw,              // backward: dw's column reduction
  unattributed,
};
const char* stage_name(Stage s);

// How closely the fp64 reference under a convention reproduces a side's main output.
struct ConventionFit {
  Convention conv = Convention::fp32;
  double exact_fraction = 0;  // elements bitwise equal to the correctly rounded reference
  std::uint64_t max_ulp = 0;
};

struct BisectResult {
  Case a, b;  // the two sides' cases (same data, kernel and convention may differ)
  BisectSide side_a, side_b;
  std::vector<OutputBisect> outputs;
  std::optional<RowStats> first_row, worst_row;
  Stage stage = Stage::none;
  std::string stage_detail;
  std::vector<ConventionFit> fit_a, fit_b;  // best first
  bool diverge = false;
};

// Folds each side's writes outside its outputs (guard bands, row padding; counts by tensor)
// into the result: such writes make the sides diverge and, where the values inside agree or
// part only in the tail, are the tail stage (a store past H).
void add_outside_writes(BisectResult& r, const std::map<Tensor, std::int64_t>& a,
                        const std::map<Tensor, std::int64_t>& b);

// The case of a side: `base` with its kernel and convention.
Case side_case(const Case& base, const BisectSide& side);

// The fp64 reference of every row of the case's outputs (under c.conv) from its inputs.
std::vector<OutputRef> reference_all_rows(const Case& c, const TensorBytes& inputs);
// Each present output's reference values correctly rounded to its dtype (an fp8 y was
// scaled and saturated by the reference), packed.
TensorBytes rounded_outputs(const Case& c, const std::vector<OutputRef>& ref);
// The reference side's outputs: rounded_outputs of reference_all_rows.
TensorBytes reference_outputs(const Case& c, const TensorBytes& inputs);

// The analysis. inputs: every input of a's op (saved_rrms for the backward ops); out_a and
// out_b: every output each side wrote.
BisectResult bisect_outputs(const Case& a, const BisectSide& side_a, const Case& b, const BisectSide& side_b,
                            const TensorBytes& inputs, const TensorBytes& out_a, const TensorBytes& out_b);

}  // namespace rb

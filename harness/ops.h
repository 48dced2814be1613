// The op model: one description per op (fwd, bwd, add, add-bwd) of its tensors (name, role,
// dtype, shape, how inputs are generated), how they bind to the op family's launch arguments,
// its fp64 reference, the tolerance of each output and, derived from the tensors, its byte
// count. The runner is a pipeline over this description: a new op or variant is a new
// description plus kernels, not edits across the runner, reports and CLI.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "harness/case.h"
#include "harness/validate.h"
#include "kernels/registry.h"

namespace rb {

// Every tensor any op reads or writes.
// scale and amax: the fp8 output's per-tensor scale (input) and max |y| (output).
enum class Tensor { x, r, w, dy, ds_out, saved_rrms, y, s, rrms, dx, dw, scale, amax };
inline constexpr std::size_t kTensors = 13;
const char* tensor_name(Tensor t);

enum class Shape {
  matrix,      // M x H at the case's row stride (x, y, dx, ...)
  per_column,  // H values, one row (w, dw)
  per_row,     // one fp32 value per row (rrms)
  scalar,      // one fp32 value (scale, amax)
};

// How an input's values are made (on the host, in its storage dtype).
enum class Source {
  rows,        // the generator's rows: the case's distribution, or `dist` when set
  weight,      // the weight generator
  saved_rrms,  // the fp32 rounding of the exact rrms of x, for the case's eps (bwd ops)
  y_scale,     // the case's fp8 output scale, in fp32
};

// Whether a case has a tensor: null = always; fp8_only = only with an fp8 y.
using PresentFn = bool (*)(const Case&);
bool fp8_only(const Case& c);

struct InputDesc {
  Tensor tensor;
  Shape shape;
  DType (*dtype)(const Case&);
  Source source = Source::rows;
  std::optional<Dist> dist;     // rows: a fixed distribution instead of the case's
  std::uint64_t seed_offset = 0;  // rows: added to the case seed (each input its own stream)
  PresentFn present = nullptr;
};

struct OutputDesc {
  Tensor tensor;
  Shape shape;
  DType (*dtype)(const Case&);
  // The tolerance of one element from its reference value and its error scale (the
  // reference's per-element scale; 0 for outputs without one).
  Tolerance (*tolerance)(const Case&, double want, double scale);
  // The output's base tolerance: relative errors are reported over |ref| >= its atol.
  Tolerance (*base_tolerance)(const Case&);
  bool repeatable = false;  // must be bitwise equal over two launches (dw)
  PresentFn present = nullptr;
};

inline bool present(const InputDesc& d, const Case& c) { return !d.present || d.present(c); }
inline bool present(const OutputDesc& d, const Case& c) { return !d.present || d.present(c); }

// The fp64 reference of one (data, eps) for the checked rows: per output (in the op's output
// order, absent outputs included, left empty) the wanted values and their error scales, laid
// out as the output's checked part (matrix and per_row: one entry per checked row and column;
// per_column: all H; scalar: one). An fp8 y's wanted value is the exact y times the scale,
// saturated to the format's largest finite value.
struct OutputRef {
  std::vector<double> want;
  std::vector<double> scale;  // empty: no scale (tolerance gets 0)
};

// Host copies of the inputs, packed (rows x H, no padding), by tensor.
struct HostInputs {
  std::array<const void*, kTensors> data{};
  template <class T>
  const T* as(Tensor t) const {
    return static_cast<const T*>(data[static_cast<std::size_t>(t)]);
  }
};

// Device pointers of the bound tensors, by tensor (null where the op has none).
using DevicePointers = std::array<void*, kTensors>;

struct OpDesc {
  Op op;
  std::vector<InputDesc> inputs;
  std::vector<OutputDesc> outputs;  // outputs[0] is the main output (the CSV's metrics)
  // The launch arguments of a case with its tensors at `p` (row stride: the case's).
  LaunchArgs (*bind)(const Case&, const DevicePointers& p, std::size_t workspace_bytes, void* workspace);
  // Fills one OutputRef per output for the rows `rows`; saved_rrms (M values) is given for
  // the backward ops, empty otherwise.
  void (*reference)(const Case&, const HostInputs&, const std::vector<double>& saved_rrms,
                    const std::vector<std::int64_t>& rows, std::vector<OutputRef>& out);
  // The CSV's atol/rtol columns: the main output's tolerance (bwd: atol is the coefficient
  // of the element's error scale, validate.h).
  Tolerance (*csv_tolerance)(const Case&);
};

const OpDesc& op_desc(Op op);

// The dtype of x as the op's kernel reads it: the residual stream's for add-bwd.
DType x_read_dtype(const Case& c);

// The fewest bytes an op must move: each input read once, each output written once, summed
// over the description's tensors (README, "Bytes").
std::int64_t op_bytes(const Case& c);
std::int64_t op_bytes(Op op, std::int64_t M, std::int64_t H, DType x, DType w, DType r,
                      std::optional<DType> y8 = std::nullopt);

// The problem a kernel sees for a case.
Problem problem_of(const Case& c);

// Whether two problems are the same in every field a plan may depend on.
bool same_problem(const Problem& a, const Problem& b);

// Elements of a tensor of the given shape in a case (packed: M x H for a matrix).
std::int64_t elements_of(Shape s, const Case& c);

// An input's host values, packed, in its storage dtype, as the generators make them for the
// case (a saved_rrms input: see saved_rrms_of).
std::vector<unsigned char> generate_input(const Case& c, const InputDesc& d);

// The saved rrms a backward kernel reads: per row of x (packed, x_read_dtype(c)), the fp32
// rounding of the exact rrms for eps. The reference uses that value as it is.
std::vector<float> saved_rrms_of(const Case& c, const void* x, double eps);

// The fp64 reference of every row of a case's outputs (OpDesc::reference over all M rows)
// from packed host inputs by tensor; saved_rrms for the backward ops.
std::vector<OutputRef> reference_all_rows(const Case& c, const HostInputs& in, const std::vector<float>& saved_rrms);

}  // namespace rb

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
enum class Tensor { x, r, w, dy, ds_out, saved_rrms, y, s, rrms, dx, dw };
inline constexpr std::size_t kTensors = 11;
const char* tensor_name(Tensor t);

enum class Shape {
  matrix,      // M x H at the case's row stride (x, y, dx, ...)
  per_column,  // H values, one row (w, dw)
  per_row,     // one fp32 value per row (rrms)
};

// How an input's values are made (on the host, in its storage dtype).
enum class Source {
  rows,        // the generator's rows: the case's distribution, or `dist` when set
  weight,      // the weight generator
  saved_rrms,  // the fp32 rounding of the exact rrms of x, for the case's eps (bwd ops)
};

struct InputDesc {
  Tensor tensor;
  Shape shape;
  DType (*dtype)(const Case&);
  Source source = Source::rows;
  std::optional<Dist> dist;     // rows: a fixed distribution instead of the case's
  std::uint64_t seed_offset = 0;  // rows: added to the case seed (each input its own stream)
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
};

// The fp64 reference of one (data, eps) for the checked rows: per output (in the op's output
// order) the wanted values and their error scales, laid out as the output's checked part
// (matrix and per_row: one entry per checked row and column; per_column: all H).
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
std::int64_t op_bytes(Op op, std::int64_t M, std::int64_t H, DType x, DType w, DType r);

// The problem a kernel sees for a case.
Problem problem_of(const Case& c);

}  // namespace rb

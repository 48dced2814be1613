// Running a bisect on the GPU: both sides on the same inputs (the reference side on the
// host), the analysis (harness/bisect.h), and the shrink to a minimal reproducer.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "harness/bisect.h"
#include "harness/device.h"
#include "harness/runner.h"

namespace rb {

// Every input of the case's op, generated as a sweep would (the weight an offset under
// gemma and zero-centered), plus the backward ops' saved rrms for the case's eps.
TensorBytes generate_inputs(const Case& c);

// Thrown when a side cannot run the case (check_common's reason, the provider's refusal, a
// launch error): the bisect is a usage problem then, not a divergence.
class SideError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Each side's outputs on `inputs`: kernels launched once each on the device, the reference
// side computed on the host.
struct SideOutputs {
  TensorBytes a, b;
  // Elements each side wrote outside each output (guard bands, row padding).
  std::map<Tensor, std::int64_t> outside_a, outside_b;
};

// Runs the sides of a bisect on one device, every trial through one Runner: its stream and
// L2 flush buffer are set up once, not per launch.
class SideRunner {
 public:
  explicit SideRunner(const DeviceInfo& dev);
  ~SideRunner();
  SideOutputs run(const Case& a, const BisectSide& side_a, const Case& b, const BisectSide& side_b,
                  const TensorBytes& inputs);

 private:
  RunConfig config();
  TensorBytes run_kernel(const Case& c, const TensorBytes& inputs, std::map<Tensor, std::int64_t>& outside);
  // What the runner's input source and capture read and fill during one run_kernel.
  const TensorBytes* inputs_ = nullptr;
  TensorBytes* out_ = nullptr;
  std::map<Tensor, std::int64_t>* outside_ = nullptr;
  Runner runner_;
};

// Rows [first, first + count) of every input (per-column and scalar inputs whole): the
// inputs of the same case with M = count.
TensorBytes slice_rows(const Case& c, const TensorBytes& inputs, std::int64_t first, std::int64_t count);

struct BisectRun {
  BisectResult full;        // the case as asked
  BisectResult minimal;     // the smallest case found that still diverges at the same stage
  TensorBytes inputs;       // the minimal case's inputs
  SideOutputs outputs;      // and both sides' outputs on them
  std::string shrink_note;  // what the shrink did
  int trials = 0;
};

// The whole bisect of `base` (its kernel and convention are replaced by each side's). With
// shrink, and where they diverge: the simplest distribution (normal), then the smallest H
// (ascending candidates), then the fewest rows (the first divergent row alone, or with the
// row before it), each kept only while the two sides still part at the same stage.
BisectRun run_bisect(const DeviceInfo& dev, const Case& base, const BisectSide& side_a, const BisectSide& side_b,
                     bool shrink);

}  // namespace rb

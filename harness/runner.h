// The runner: for each case, generate inputs (shared by adjacent cases with the same data),
// launch through the registry, check against the fp64 reference, time, and hand a Record
// to the sink as soon as the case is done.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/case.h"
#include "harness/device.h"
#include "harness/ops.h"
#include "harness/timing.h"
#include "reports/record.h"

namespace rb {

struct KernelInfo;  // kernels/registry.h
struct Problem;

// Inputs from elsewhere than the generators (a bisect reproducer's .npy files): the packed
// host bytes of one input tensor of a case (Tensor::saved_rrms: M fp32 values), or nullopt
// to generate it.
using InputSource = std::function<std::optional<std::vector<unsigned char>>(const Case&, Tensor)>;
// Receives each output of a launched case after the first launch: packed host bytes in its
// dtype, and how many elements the kernel wrote outside it (guard bands, row padding; the
// device scan runs for a capture whether or not the run checks).
using OutputCapture =
    std::function<void(const Case&, Tensor, const std::vector<unsigned char>&, std::int64_t outside_writes)>;

struct RunConfig {
  bool check = true;
  bool time = true;
  TimingOptions timing;
  // fp64 reference budget per case: all rows when M * H is below it, else a row sample.
  std::int64_t max_check_elems = std::int64_t{1} << 23;
  // Launches of at most this many rows are also timed as CUDA-graph replays.
  std::int64_t graph_max_rows = 256;
  // Copy-ceiling buffer, each way.
  std::int64_t copy_bytes = std::int64_t{1} << 30;
  // Device memory a case may take (inputs, outputs, guards, workspace); 0 = what the device
  // has free when the run starts. A case that needs more is recorded as skip with the reason.
  std::int64_t max_device_bytes = 0;
  InputSource inputs;     // null: every input generated
  OutputCapture capture;  // null: outputs stay on the device
};

using RecordSink = std::function<void(const Record&)>;

class Runner {
 public:
  Runner(DeviceInfo dev, RunConfig cfg);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Measures the copy ceiling (once; later calls return the first measurement).
  const CopyCeiling& copy_ceiling();

  // Runs every case (each variant of its kernel) in order. A case that fails validation or cannot launch is recorded and
  // the run goes on; a CUDA error that leaves the device unusable is recorded for its case,
  // then thrown as CudaError.
  void run(const std::vector<Case>& cases, const RecordSink& sink);

  // The cases a case runs as: one per variant of its kernel where the kernel offers several
  // (cuDNN engine configurations with --cudnn-engines all), else the case itself. `list`
  // names the variants of a kernel for a problem: the kernel's own variants() when empty;
  // run() passes its own, which keeps them per problem like the plans.
  using VariantsLister = std::function<std::vector<std::string>(const KernelInfo&, const Problem&)>;
  static std::vector<Case> variants_of(const Case& c, const VariantsLister& list = {});

  // One case on its own (inputs are generated for it unless the previous case shares them).
  Record run_case(const Case& c);

  const DeviceInfo& device() const { return dev_; }

  // Drops the cached inputs, so the next case reads its inputs afresh (from
  // RunConfig::inputs, whose answer may have changed).
  void forget_data();

  // Calls to a kernel's prepare so far, plans made or refused (Unsupported): one per kernel
  // variant and problem while consecutive cases share the problem.
  std::int64_t prepare_calls() const;
  // Calls to a kernel's variants() so far: one per kernel and problem, the same way.
  std::int64_t variants_calls() const;

  struct Impl;

 private:
  DeviceInfo dev_;
  RunConfig cfg_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rb

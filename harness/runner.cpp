#include "harness/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "harness/cuda_check.h"
#include "harness/device_buffer.h"
#include "harness/host_types.h"
#include "harness/nvtx.h"
#include "harness/ops.h"
#include "harness/validate.h"
#include "harness/wait.h"
#include "kernels/registry.h"
#include "reference/generate.h"
#include "reference/rmsnorm_ref.h"
#include "reports/record.h"

namespace rb {

namespace {

// A tensor generated on the host in its storage dtype (packed) and its guarded device copy.
struct Input {
  DType dtype = DType::f32;
  std::vector<unsigned char> host;
  GuardedTensor dev;
  std::uint64_t hash = 0;  // of dev as uploaded (hash_guarded): a kernel must leave it so
};

// The fp64 reference of one (data, eps): the checked rows and one OutputRef per output.
struct Reference {
  double eps = 0;
  std::vector<std::int64_t> rows;
  std::vector<OutputRef> outs;
};

// The backward ops' saved rrms for one eps: M fp32 values, the kernel's input.
struct SavedRrms {
  double eps = 0;
  std::vector<float> rrms;
};

// Inputs and outputs of one (op, data) configuration, shared by the cases that read it.
struct DataSet {
  Case key;
  std::array<Input, kTensors> in;
  std::array<GuardedTensor, kTensors> out;
  std::vector<SavedRrms> saved;  // bwd ops, per eps
  std::vector<Reference> refs;   // per eps, built only when a case is checked

  Input& input(Tensor t) { return in[static_cast<std::size_t>(t)]; }
  GuardedTensor& output(Tensor t) { return out[static_cast<std::size_t>(t)]; }
};

// A tensor's rows, columns and row stride for a case.
TensorShape shape_of(Shape sh, const Case& c, DType dt) {
  const std::size_t es = dtype_size(dt);
  switch (sh) {
    case Shape::matrix:
      return {c.M, c.H, c.stride(), layout_offset(c.layout), es};
    case Shape::per_column:
      return {1, c.H, c.H, layout_offset(c.layout), es};
    case Shape::per_row:
      return {c.M, 1, 1, 0, es};
    case Shape::scalar:
      break;
  }
  return {1, 1, 1, 0, es};
}

// Kernel k's variants of problem p. A refusal (Unsupported) lists none: the case runs as the
// kernel's own choice, and run_case records the refusal.
std::vector<std::string> list_variants(const KernelInfo& k, const Problem& p) {
  try {
    return k.variants(p);
  } catch (const Unsupported&) {
    return {};
  }
}

}  // namespace

// Device bytes the tensors of a case take (inputs and outputs, guards and padding included).
std::int64_t case_device_bytes(const Case& c) {
  const OpDesc& d = op_desc(c.op);
  std::size_t bytes = 0;
  for (const InputDesc& in : d.inputs)
    if (present(in, c)) bytes += tensor_bytes(shape_of(in.shape, c, in.dtype(c)));
  for (const OutputDesc& out : d.outputs)
    if (present(out, c)) bytes += tensor_bytes(shape_of(out.shape, c, out.dtype(c)));
  return static_cast<std::int64_t>(bytes);
}

std::string mib(std::int64_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20)); }

struct Runner::Impl {
  Stream stream;
  L2Flusher flusher;
  std::optional<CopyCeiling> copy;
  std::unique_ptr<DataSet> data;
  DeviceBuffer workspace;
  std::int64_t device_budget = 0;  // bytes a case's tensors and workspace may take
  // The plans of one problem, by kernel (variant) name. A plan depends on the problem alone,
  // so the cases of consecutive data sets that pose it (another distribution, seed or eps)
  // share them: cuDNN's graph, heuristics query and plan build cost far more than a launch.
  // The next problem frees them.
  // A refusal (Unsupported's message, plan null) is kept the same way: a provider refuses a
  // problem whatever its inputs, so it is asked once per problem too.
  struct Prepared {
    std::unique_ptr<Plan> plan;
    std::string refusal;
  };
  std::optional<Problem> plans_problem;
  std::map<std::string, Prepared> plans;
  std::int64_t prepare_calls = 0;
  // The variants of the problem, by kernel name (cuDNN's engine configurations with
  // --cudnn-engines all: a graph built and its engines listed), kept and freed with the plans;
  // a refusal is an empty list, as variants_of reads it.
  std::map<std::string, std::vector<std::string>> variants;
  std::int64_t variants_calls = 0;

  InputSource inputs;

  Impl(const DeviceInfo& d, FlushMode mode, std::int64_t max_device_bytes, InputSource in)
      : flusher(d.l2_bytes, mode), inputs(std::move(in)) {
    device_budget = max_device_bytes;
    if (device_budget <= 0) {
      std::size_t free = 0, total = 0;
      RB_CUDA_CHECK(cudaMemGetInfo(&free, &total));
      device_budget = static_cast<std::int64_t>(free);
    }
  }

  // Why a case cannot run within the device budget (its tensors, and a workspace beyond the
  // one already held), or nothing.
  std::optional<std::string> over_budget(const Case& c, std::size_t workspace_bytes) const {
    const std::int64_t tensors = case_device_bytes(c);
    const std::int64_t ws = static_cast<std::int64_t>(std::max(workspace_bytes, workspace.bytes()));
    if (tensors + ws <= device_budget) return std::nullopt;
    return fmt::format("needs {} of device memory ({} of tensors, {} of workspace); the budget is {} "
                       "(--max-device-mem, default: what the device had free at the start)",
                       mib(tensors + ws), mib(tensors), mib(ws), mib(device_budget));
  }

  DataSet& data_for(const Case& c) {
    if (data && data->key.same_data(c)) return *data;
    data.reset();  // free the previous buffers before allocating the next
    auto ds = std::make_unique<DataSet>();
    ds->key = c;
    for (const InputDesc& d : op_desc(c.op).inputs) {
      if (!present(d, c)) continue;
      Input& in = ds->input(d.tensor);
      in.dtype = d.dtype(c);
      const TensorShape sh = shape_of(d.shape, c, in.dtype);
      in.dev = GuardedTensor(sh);
      in.dev.poison(stream.get());
      if (d.source == Source::saved_rrms) continue;  // per eps, uploaded when a case binds it
      std::optional<std::vector<unsigned char>> given = inputs ? inputs(c, d.tensor) : std::nullopt;
      in.host = given ? std::move(*given) : generate_input(c, d);
      if (in.host.size() != static_cast<std::size_t>(sh.rows * sh.cols) * sh.elem_size)
        throw std::invalid_argument(fmt::format("input {} has {} bytes, the case needs {}", tensor_name(d.tensor),
                                                in.host.size(), static_cast<std::size_t>(sh.rows * sh.cols) * sh.elem_size));
      in.dev.upload(in.host.data(), stream.get());
    }
    for (const OutputDesc& d : op_desc(c.op).outputs)
      if (present(d, c)) ds->output(d.tensor) = GuardedTensor(shape_of(d.shape, c, d.dtype(c)));
    for (Input& in : ds->in)
      if (!in.host.empty()) in.hash = hash_guarded(in.dev, stream.get());  // synchronizes the uploads
    RB_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    data = std::move(ds);
    return *data;
  }

  // The inputs of case c the kernel changed (a kernel's inputs are read-only), each named
  // with where it first differs from its upload, restored to that upload so the cases after
  // it on this data read what the reference reads; empty when none changed.
  std::string restore_changed_inputs(DataSet& ds, const Case& c) {
    const cudaStream_t s = stream.get();
    std::string changed;
    for (const InputDesc& d : op_desc(c.op).inputs) {
      if (!present(d, c)) continue;
      Input& in = ds.input(d.tensor);
      if (hash_guarded(in.dev, s) == in.hash) continue;
      const std::vector<float>* saved = d.source == Source::saved_rrms ? &saved_rrms_for(ds, c.eps) : nullptr;
      const auto* want = saved ? reinterpret_cast<const unsigned char*>(saved->data()) : in.host.data();
      const TensorShape& sh = in.dev.shape();
      const std::size_t row_bytes = static_cast<std::size_t>(sh.cols) * sh.elem_size;
      std::vector<unsigned char> got(static_cast<std::size_t>(sh.rows) * row_bytes);
      in.dev.download(got.data());
      std::string where = "outside its rows: a guard band or row padding";
      for (std::size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i]) {
          const std::size_t e = i / sh.elem_size;
          where = fmt::format("first at row {}, col {}", e / static_cast<std::size_t>(sh.cols),
                              e % static_cast<std::size_t>(sh.cols));
          break;
        }
      changed += fmt::format("{}{} ({})", changed.empty() ? "" : ", ", tensor_name(d.tensor), where);
      in.dev.poison(s);
      in.dev.upload(want, s);
    }
    RB_CUDA_CHECK(cudaStreamSynchronize(s));
    return changed;
  }

  HostInputs host_inputs(const DataSet& ds) const {
    HostInputs h;
    for (std::size_t i = 0; i < kTensors; ++i) h.data[i] = ds.in[i].host.empty() ? nullptr : ds.in[i].host.data();
    return h;
  }

  // The saved rrms a backward kernel reads: the fp32 rounding of the exact value. The
  // reference uses that value (upcast) as it is, so it adds no error term.
  const std::vector<float>& saved_rrms_for(DataSet& ds, double eps) {
    for (const SavedRrms& sr : ds.saved)
      if (sr.eps == eps) return sr.rrms;
    const Case& c = ds.key;
    SavedRrms sr;
    sr.eps = eps;
    std::optional<std::vector<unsigned char>> given = inputs ? inputs(c, Tensor::saved_rrms) : std::nullopt;
    if (given) {
      sr.rrms.resize(given->size() / sizeof(float));
      std::memcpy(sr.rrms.data(), given->data(), sr.rrms.size() * sizeof(float));
    } else {
      sr.rrms = saved_rrms_of(c, ds.input(Tensor::x).host.data(), eps);
    }
    ds.saved.push_back(std::move(sr));
    return ds.saved.back().rrms;
  }

  const Reference& reference_for(DataSet& ds, double eps, std::int64_t max_elems) {
    for (const Reference& r : ds.refs)
      if (r.eps == eps) return r;
    Case c = ds.key;
    c.eps = eps;
    const OpDesc& d = op_desc(c.op);
    Reference r;
    r.eps = eps;
    r.rows = rows_to_check(c.M, c.H, max_elems);
    std::vector<double> saved;
    for (const InputDesc& in : d.inputs)
      if (in.source == Source::saved_rrms) {
        const std::vector<float>& s = saved_rrms_for(ds, eps);
        saved.assign(s.begin(), s.end());
      }
    d.reference(c, host_inputs(ds), saved, r.rows, r.outs);
    ds.refs.push_back(std::move(r));
    return ds.refs.back();
  }

  // Frees the plans and variant lists unless they are problem p's.
  void keep_plans_for(const Problem& p) {
    if (plans_problem && same_problem(*plans_problem, p)) return;
    plans.clear();
    variants.clear();
    plans_problem = p;
  }

  // Kernel k's variants of problem p, listed once per problem while consecutive cases pose it
  // (another exception than a refusal keeps nothing).
  const std::vector<std::string>& variants_for(const KernelInfo& k, const Problem& p) {
    keep_plans_for(p);
    auto it = variants.find(k.name);
    if (it == variants.end()) {
      ++variants_calls;
      it = variants.emplace(k.name, list_variants(k, p)).first;
    }
    return it->second;
  }

  // The plan of kernel k (variant v) for the case, prepared once per problem while
  // consecutive cases pose it. run_case keeps only this case's problem's plans
  // (keep_plans_for) whenever its data changes, and cases on the same data pose the same
  // problem (every field of problem_of is fixed by the data key).
  Plan& plan_for(const KernelInfo& k, const std::string& variant, const Case& c) {
    const std::string name = k.variant_name(variant);
    auto it = plans.find(name);
    if (it == plans.end()) {
      ++prepare_calls;
      Prepared made;  // another exception (an error, not a refusal) keeps nothing
      try {
        made.plan = k.prepare(problem_of(c), variant);
      } catch (const Unsupported& e) {
        made.refusal = e.what();
      }
      it = plans.emplace(name, std::move(made)).first;
    }
    if (!it->second.plan) throw Unsupported(it->second.refusal);
    return *it->second.plan;
  }
};

Runner::Runner(DeviceInfo dev, RunConfig cfg)
    : dev_(std::move(dev)),
      cfg_(cfg),
      impl_(std::make_unique<Impl>(dev_, cfg_.timing.flush, cfg_.max_device_bytes, cfg_.inputs)) {}

void Runner::forget_data() { impl_->data.reset(); }
std::int64_t Runner::prepare_calls() const { return impl_->prepare_calls; }
std::int64_t Runner::variants_calls() const { return impl_->variants_calls; }
Runner::~Runner() {
  // A kernel still running (a wait gave up on it): freeing buffers, plans and the stream
  // would synchronize with it and block for good. They are left to the process's exit.
  if (device_wedged()) (void)impl_.release();
}

const CopyCeiling& Runner::copy_ceiling() {
  if (!impl_->copy) {
    NvtxRange range("copy ceiling");
    impl_->copy = measure_copy_ceiling(cfg_.copy_bytes, impl_->flusher, impl_->stream.get(), cfg_.timing);
  }
  return *impl_->copy;
}

namespace {

Record base_record(const DeviceInfo& dev, const Case& c) {
  Record r;
  r.gpu = dev.name;
  r.cc = dev.cc;
  r.kernel = c.kernel;
  r.picked = c.kernel;
  r.op = std::string(op_name(c.op));
  r.dtype = std::string(dtype_name(c.dtype));
  r.wdtype = std::string(dtype_name(c.wdtype));
  if (has_residual(c.op)) r.rdtype = std::string(dtype_name(c.rdtype));
  r.convention = std::string(convention_name(c.conv));
  if (c.y8) {
    r.ydtype = std::string(dtype_name(*c.y8));
    r.y_scale = c.y_scale;
  }
  r.M = c.M;
  r.H = c.H;
  r.stride = c.stride();
  r.layout = std::string(layout_name(c.layout));
  r.eps = c.eps;
  r.dist = std::string(ref::dist_name(c.dist));
  r.seed = c.seed;
  if (!too_large(c.M, c.H)) r.bytes = op_bytes(c);  // else its sum would wrap: left 0
  const Tolerance t = op_desc(c.op).csv_tolerance(c);
  r.atol = t.atol;
  r.rtol = t.rtol;
  return r;
}

void append(std::string& s, const std::string& part) {
  if (!s.empty()) s += "; ";
  s += part;
}

// Folds a device scan into the record's failure reason.
void add_scan(const char* what, const GuardScan& g, std::int64_t H, std::string& reason) {
  if (g.unwritten)
    append(reason, fmt::format("{}: {} element(s) never written, first at (row {}, col {})", what,
                               g.unwritten, g.first_unwritten / H, g.first_unwritten % H));
  if (g.nonfinite)
    append(reason, fmt::format("{}: {} NaN/Inf element(s), first at (row {}, col {})", what, g.nonfinite,
                               g.first_nonfinite / H, g.first_nonfinite % H));
  if (g.guard_writes)
    append(reason, fmt::format("{}: {} element(s) written outside the tensor (guard band or row padding), "
                               "first at allocation byte {}",
                               what, g.guard_writes, g.first_guard_write));
}

// One output's comparison against the reference.
struct OutputCheck {
  std::string name;
  ErrorStats stats;
  Shape shape = Shape::matrix;
};

std::string mismatch_text(const OutputCheck& o, std::int64_t rows_checked) {
  const ErrorStats& s = o.stats;
  std::string m = o.shape == Shape::matrix ? fmt::format("{}: {} mismatch(es) in {} checked rows:", o.name,
                                                         s.mismatches, rows_checked)
                                           : fmt::format("{}: {} mismatch(es):", o.name, s.mismatches);
  for (const Mismatch& mm : s.first) {
    switch (o.shape) {
      case Shape::matrix:
        m += fmt::format(" ({}, {}) got {:.6g} want {:.6g}", mm.row, mm.col, mm.got, mm.ref);
        break;
      case Shape::per_column:
        m += fmt::format(" col {} got {:.8g} want {:.8g}", mm.col, mm.got, mm.ref);
        break;
      case Shape::per_row:
        m += fmt::format(" row {} got {:.8g} want {:.8g}", mm.row, mm.got, mm.ref);
        break;
      case Shape::scalar:
        m += fmt::format(" got {:.8g} want {:.8g}", mm.got, mm.ref);
        break;
    }
  }
  return m;
}

// Compares the checked part of an output with its reference: the rows `rows` of the device
// tensor (storage type T), all its columns, in the order of `ref.want`.
template <class T>
void compare_output(const Case& c, const OutputDesc& d, const GuardedTensor& dev, const std::vector<std::int64_t>& rows,
                    const OutputRef& ref, ErrorStats& st) {
  const TensorShape& sh = dev.shape();
  const std::vector<std::int64_t> all{0};
  const bool one_row = d.shape == Shape::per_column || d.shape == Shape::scalar;
  const std::vector<std::int64_t>& tensor_rows = one_row ? all : rows;
  std::vector<T> host;
  const bool whole = static_cast<std::int64_t>(tensor_rows.size()) == sh.rows;
  if (whole) {
    host.resize(static_cast<std::size_t>(sh.rows * sh.cols));
    dev.download(host.data());
  } else {
    host.resize(static_cast<std::size_t>(sh.cols));
  }
  for (std::size_t i = 0; i < tensor_rows.size(); ++i) {
    const T* row = host.data() + (whole ? static_cast<std::size_t>(tensor_rows[i] * sh.cols) : 0);
    if (!whole) dev.download_row(tensor_rows[i], host.data());
    for (std::int64_t col = 0; col < sh.cols; ++col) {
      const std::size_t k = i * static_cast<std::size_t>(sh.cols) + static_cast<std::size_t>(col);
      const double want = ref.want[k];
      st.add_output(one_row ? -1 : tensor_rows[i], col, ref::to_double(row[col]), want,
                    ref::round_overflow<T>(want), ref::ulp_at<T>(want),
                    d.tolerance(c, want, ref.scale.empty() ? 0.0 : ref.scale[k]));
    }
  }
}

// How many elements of a repeatable output differ in any bit between two downloads, and the
// first of them.
std::string repeatability(const char* name, const std::vector<unsigned char>& a, const std::vector<unsigned char>& b,
                          DType dt) {
  const std::size_t es = dtype_size(dt);
  std::int64_t differ = 0, first = -1;
  for (std::size_t i = 0; i * es < a.size(); ++i)
    if (std::memcmp(&a[i * es], &b[i * es], es) != 0 && differ++ == 0) first = static_cast<std::int64_t>(i);
  if (!differ) return {};
  double v1 = 0, v2 = 0;
  with_host_type(dt, [&](auto t) {
    using T = decltype(t);
    v1 = ref::to_double(reinterpret_cast<const T*>(a.data())[first]);
    v2 = ref::to_double(reinterpret_cast<const T*>(b.data())[first]);
  });
  return fmt::format("{} not bitwise repeatable: {} column(s) differ between two launches, first col {} ({:.9g} then {:.9g})",
                     name, differ, first, v1, v2);
}

}  // namespace

Record Runner::run_case(const Case& c) {
  Record rec = base_record(dev_, c);
  std::string variant;
  const KernelInfo* k = find_kernel(c.kernel, &variant);
  if (!k) {
    rec.status = Status::error;
    rec.reason = "unknown kernel " + c.kernel;
    return rec;
  }
  rec.provider = k->provider;
  rec.provider_version = k->version;
  // Before any size arithmetic: a case past 2^56 elements would wrap its byte counts.
  std::optional<std::string> why = too_large(c.M, c.H);
  if (!why) why = check_common(*k, problem_of(c));
  if (why) {
    rec.status = Status::skip;
    rec.reason = *why;
    return rec;
  }

  const std::string label = case_label(rec);
  NvtxRange case_range(label);
  const OpDesc& desc = op_desc(c.op);
  const bool new_data = !impl_->data || !impl_->data->key.same_data(c);
  if (new_data) {
    impl_->data.reset();  // the budget counts this case's tensors alone
    impl_->keep_plans_for(problem_of(c));  // and another problem's plans are gone first
    if (auto why = impl_->over_budget(c, 0)) {
      rec.status = Status::skip;
      rec.reason = *why;
      return rec;
    }
  }
  DataSet* data = nullptr;
  try {
    data = &impl_->data_for(c);
  } catch (const CudaError& e) {
    if (e.code != cudaErrorMemoryAllocation) throw;
    cudaGetLastError();  // an allocation failure is not sticky: the run goes on
    impl_->data.reset();
    rec.status = Status::skip;
    rec.reason = fmt::format("out of device memory for the case's tensors ({}): {}", mib(case_device_bytes(c)), e.what());
    return rec;
  }
  DataSet& ds = *data;
  const cudaStream_t s = impl_->stream.get();

  Plan* plan = nullptr;
  try {
    plan = &impl_->plan_for(*k, variant, c);
  } catch (const Unsupported& e) {
    rec.status = Status::skip;
    rec.reason = e.what();
    return rec;
  } catch (const CudaError&) {
    throw;
  } catch (const std::exception& e) {
    rec.status = Status::error;
    rec.reason = fmt::format("{} could not prepare the case: {}", k->name, e.what());
    return rec;
  }
  rec.picked = plan->picked().empty() ? c.kernel : plan->picked();
  if (auto why = impl_->over_budget(c, plan->workspace_bytes())) {
    rec.status = Status::skip;
    rec.reason = *why;
    return rec;
  }

  // Bind the op's tensors. The saved rrms (an input of the backward ops) is the fp32 value
  // for this eps; the fp64 reference is built only if the case is checked.
  DevicePointers ptr{};
  for (const InputDesc& d : desc.inputs) {
    if (!present(d, c)) continue;
    Input& in = ds.input(d.tensor);
    if (d.source == Source::saved_rrms) {
      in.dev.upload(impl_->saved_rrms_for(ds, c.eps).data(), s);
      in.hash = hash_guarded(in.dev, s);
    }
    ptr[static_cast<std::size_t>(d.tensor)] = in.dev.data();
  }
  // The op's outputs this case has (an fp8 y adds amax), in the description's order; the
  // reference's outputs are indexed by the description.
  std::vector<std::size_t> live;
  for (std::size_t i = 0; i < desc.outputs.size(); ++i)
    if (present(desc.outputs[i], c)) live.push_back(i);
  for (std::size_t i : live) ptr[static_cast<std::size_t>(desc.outputs[i].tensor)] = ds.output(desc.outputs[i].tensor).data();
  const std::size_t need = plan->workspace_bytes();
  if (need > impl_->workspace.bytes()) impl_->workspace = DeviceBuffer(need);
  const LaunchArgs args = desc.bind(c, ptr, impl_->workspace.bytes(), need ? impl_->workspace.get() : nullptr);

  // Poisons every output, launches once and waits. Returns the launch error (not sticky,
  // cleared) or throws on an execution error, which may leave the device unusable.
  const auto launch_checked = [&]() -> cudaError_t {
    for (std::size_t i : live) ds.output(desc.outputs[i].tensor).poison(s);
    cudaError_t e;
    {
      NvtxRange launch_range("launch " + label);
      e = plan->launch(args, s);  // a vendor plan may throw with its library's message
    }
    if (e != cudaSuccess) {
      cudaGetLastError();
      return e;
    }
    wait_stream(s, "the kernel");  // throws CudaError: "the kernel failed: ..." or did not finish
    return cudaSuccess;
  };

  cudaError_t le = cudaSuccess;
  try {
    le = launch_checked();
  } catch (const CudaError&) {
    throw;
  } catch (const std::exception& e) {
    rec.status = Status::error;
    rec.reason = fmt::format("launch failed: {}", e.what());
    return rec;
  }
  if (le != cudaSuccess) {
    rec.status = Status::error;
    rec.reason = "launch failed: " + cuda_error_text(le);
    return rec;
  }

  rec.status = Status::pass;
  // The device scans of every output: for the check, and for a capture (its count of writes
  // outside each output).
  std::vector<GuardScan> scans;
  if (cfg_.check || cfg_.capture)
    for (std::size_t i : live)
      scans.push_back(scan_guarded(ds.output(desc.outputs[i].tensor), desc.outputs[i].dtype(c), s));
  if (cfg_.capture)
    for (std::size_t j = 0; j < live.size(); ++j) {
      const GuardedTensor& t = ds.output(desc.outputs[live[j]].tensor);
      std::vector<unsigned char> host(static_cast<std::size_t>(t.shape().rows * t.shape().cols) * t.shape().elem_size);
      t.download(host.data());
      cfg_.capture(c, desc.outputs[live[j]].tensor, host, scans[j].guard_writes);
    }
  if (cfg_.check) {
    std::string reason, notes;

    const Reference& ref = impl_->reference_for(ds, c.eps, cfg_.max_check_elems);
    std::vector<OutputCheck> outs;  // per live output
    std::vector<std::vector<unsigned char>> first_launch(live.size());
    for (std::size_t j = 0; j < live.size(); ++j) {
      const std::size_t i = live[j];
      const OutputDesc& d = desc.outputs[i];
      outs.push_back({tensor_name(d.tensor), ErrorStats(d.base_tolerance(c)), d.shape});
      with_host_type(d.dtype(c), [&](auto t) {
        compare_output<decltype(t)>(c, d, ds.output(d.tensor), ref.rows, ref.outs[i], outs.back().stats);
      });
      if (d.repeatable) {
        const TensorShape& sh = ds.output(d.tensor).shape();
        first_launch[j].resize(static_cast<std::size_t>(sh.rows * sh.cols) * sh.elem_size);
        ds.output(d.tensor).download(first_launch[j].data());
      }
    }
    // The scans fail any NaN/Inf, except the +-inf that a reference beyond the output dtype's
    // range rounds to: explained when every non-finite element found is such a match.
    for (std::size_t j = 0; j < live.size(); ++j) {
      const OutputDesc& d = desc.outputs[live[j]];
      const ErrorStats& st = outs[j].stats;
      if (st.unrepresentable) {
        const Mismatch& u = st.first_unrepresentable;
        append(notes, fmt::format("{}: {} reference value(s) beyond {}'s largest finite value, judged as the "
                                  "correctly rounded +-inf (first at (row {}, col {}), exact {:.6g})",
                                  tensor_name(d.tensor), st.unrepresentable, dtype_name(d.dtype(c)), u.row, u.col, u.ref));
        if (scans[j].nonfinite == st.matched_inf) scans[j].nonfinite = 0;
      }
      add_scan(tensor_name(d.tensor), scans[j], d.shape == Shape::per_row || d.shape == Shape::scalar ? 1 : c.H,
               reason);
    }
    // Outputs that must be bitwise repeatable (dw): a second launch, compared bit for bit.
    for (std::size_t j = 0; j < live.size(); ++j) {
      const OutputDesc& d = desc.outputs[live[j]];
      if (!d.repeatable) continue;
      if (launch_checked() != cudaSuccess) {
        append(reason, fmt::format("{} determinism: the second launch failed", tensor_name(d.tensor)));
        break;
      }
      std::vector<unsigned char> second(first_launch[j].size());
      ds.output(d.tensor).download(second.data());
      const std::string diff = repeatability(tensor_name(d.tensor), first_launch[j], second, d.dtype(c));
      if (!diff.empty()) append(reason, diff);
    }
    rec.rows_checked = static_cast<std::int64_t>(ref.rows.size());
    // The metrics columns: the main output's, unless only another output mismatched.
    const OutputCheck* shown = &outs[0];
    std::int64_t mismatches = 0;
    for (const OutputCheck& o : outs) {
      mismatches += o.stats.mismatches;
      if (o.stats.mismatches) append(reason, mismatch_text(o, rec.rows_checked));
      if (o.stats.mismatches && !shown->stats.mismatches) shown = &o;
    }
    rec.max_abs_err = shown->stats.max_abs;
    rec.max_rel_err = shown->stats.max_rel;
    rec.max_ulp = shown->stats.max_ulp;
    rec.worst_row = shown->stats.worst_row;
    rec.worst_col = shown->shape == Shape::per_row || shown->shape == Shape::scalar ? -1 : shown->stats.worst_col;
    rec.mismatches = mismatches;
    if (!reason.empty()) {
      rec.status = Status::fail;
      if (!notes.empty()) append(reason, notes);
      rec.reason = reason;
    } else {
      rec.reason = notes;
    }
  } else {
    rec.reason = "not checked (--no-check)";
  }

  if (cfg_.time) {
    const CopyCeiling& cc = copy_ceiling();
    const LaunchFn timed = [&](cudaStream_t st) {
      const cudaError_t e = plan->launch(args, st);
      if (e != cudaSuccess) throw_cuda_error(e, "launch", __FILE__, __LINE__);
    };
    const SampleStats st = time_cold(timed, impl_->flusher, s, cfg_.timing);
    rec.median_us = st.median_us;
    rec.min_us = st.min_us;
    rec.max_us = st.max_us;
    rec.noise_pct = st.noise_pct;
    rec.samples = st.samples;
    if (c.M <= cfg_.graph_max_rows) rec.graph_us = time_graph(timed, s, cfg_.timing);
    rec.gbps = static_cast<double>(rec.bytes) / (st.median_us * 1e3);
    rec.copy_gbps = cc.gbps;
    rec.pct_of_copy = 100.0 * *rec.gbps / cc.gbps;
  }
  // After every launch of the case (checked and timed): a kernel that wrote into an input (an
  // in-place update, scratch space) fails it, and the input is restored for the next kernel.
  if (const std::string changed = impl_->restore_changed_inputs(ds, c); !changed.empty()) {
    const std::string what = "wrote into its read-only input " + changed + "; restored for the cases after it";
    if (cfg_.check) {
      rec.status = Status::fail;
      rec.reason = rec.reason.empty() ? what : what + "; " + rec.reason;
    } else {
      append(rec.reason, what);
    }
  }
  return rec;
}

std::vector<Case> Runner::variants_of(const Case& c, const VariantsLister& list) {
  std::string variant;
  const KernelInfo* k = find_kernel(c.kernel, &variant);
  const Problem p = problem_of(c);
  if (!k || !k->variants || !variant.empty() || check_common(*k, p)) return {c};
  const std::vector<std::string> names = list ? list(*k, p) : list_variants(*k, p);
  if (names.empty()) return {c};
  std::vector<Case> out;
  for (const std::string& v : names) {
    Case cv = c;
    cv.kernel = k->variant_name(v);
    out.push_back(cv);
  }
  return out;
}

void Runner::run(const std::vector<Case>& cases, const RecordSink& sink) {
  // The variants of each kernel, listed once per problem like its plans.
  const VariantsLister list = [this](const KernelInfo& k, const Problem& p) {
    return impl_->variants_for(k, p);
  };
  for (const Case& kc : cases)
    for (const Case& c : variants_of(kc, list)) {
      Record r;
      try {
        r = run_case(c);
      } catch (const CudaError& e) {
        // The device may be unusable now: record the case as an error, then stop the run.
        Record err = base_record(dev_, c);
        err.status = Status::error;
        err.reason = e.what();
        try {
          sink(err);
        } catch (...) {
          // The CUDA error outranks what the sink threw (an interruption that arrived just
          // now): the run ends as aborted by it.
        }
        throw;
      }
      sink(r);
    }
}

}  // namespace rb

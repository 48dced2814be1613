// cudnn: cuDNN's RMSNorm (norm mode RMS_NORM) through the cuDNN frontend graph API.
//   fwd  training phase: y = x * inv_variance * scale with inv_variance = 1/sqrt(mean(x^2) + eps)
//        saved per row in fp32 (our rrms). eps is a pass-by-value scalar bound at each launch,
//        so one graph serves every eps.
//   bwd  dx and dscale (our dw) from x, dy, scale and the saved inv_variance (no eps).
// Rows are a {M, H, 1, 1} tensor with the case's row stride; scale is {1, H, 1, 1}; compute fp32.
// Limits are cuDNN's own: what its validation, heuristics or plan build refuses becomes a skip
// whose reason is cuDNN's message (cuDNN 9.14 and 9.19 on sm_90: every dtype combo listed,
// H 1..262144, but fully packed rows only, so strided rows skip). Base pointers must be 16-byte
// aligned: cuDNN accepts a lower tensor alignment attribute at build and then fails execute with
// BAD_PARAM_MISALIGNED_POINTER, so supports() refuses misaligned cases up front. The
// accumulation order is cuDNN's: an independent witness, not one of our strategies.
// add/add-bwd are not offered: the residual add and its written-back sum s do not fit cuDNN's
// norm operation graph as one fused node.
// Conventions: fp32 (the norm node alone), gemma and zero-centered: a pointwise ADD of the
// scalar 1 to the scale before the norm node, into a virtual tensor of fp32 (gemma: 1 + w
// in fp32) or of w's dtype (zero-centered: 1 + w rounded to w's dtype); bwd feeds the same
// w_eff to the backward node, whose dscale is dw (d w_eff / d w = 1). Whether an engine
// fuses the ADD is cuDNN's to say: a refusal is a skip with its message. llama (intermediate
// roundings inside the norm) and an fp8 y (scale and amax) are not offered.
// libcudnn.so.9 is dlopen'ed at run time (the frontend's dynamic-loading mode; --cudnn-lib
// names the file), so one binary runs where cuDNN is missing and these cases skip, saying why.
// Built without the frontend headers (RB_HAVE_CUDNN unset) the kernel is listed unavailable.
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/vendor/vendor.h"

#if RB_HAVE_CUDNN
#include <cuda_runtime_api.h>
#include <cudnn_frontend.h>
#include <dlfcn.h>

#include <algorithm>
#include <map>
#include <mutex>

// The frontend's dynamic-loading mode resolves every cuDNN symbol from this handle, which the
// embedding program sets (load_library below).
namespace cudnn_frontend {
void* cudnn_dlhandle = nullptr;
}
#endif

namespace rb::vendor {
namespace {

const std::vector<DtypeCombo> kCudnnCombos = {{DType::f32, DType::f32},
                                              {DType::f16, DType::f16},
                                              {DType::f16, DType::f32},
                                              {DType::bf16, DType::bf16},
                                              {DType::bf16, DType::f32}};
// cuDNN states no H ceiling up front; a hidden size it cannot hold is refused by it, by name.
constexpr std::int64_t kAnyH = std::int64_t{1} << 40;

KernelInfo base_info() {
  KernelInfo k;
  k.name = "cudnn";
  k.provider = "cudnn";
  k.ops = {Op::fwd, Op::bwd};
  k.dtypes = kCudnnCombos;
  k.min_H = 1;
  k.max_H = [](const Problem&) { return kAnyH; };
  k.alignment = "16 B base pointers (cuDNN's norm engines refuse less at execute)";
  // The weight offset is a pointwise ADD before the norm node (make_graph); llama and an fp8 y
  // are refused by check_common.
  k.conventions = {Convention::fp32, Convention::gemma, Convention::zero_centered};
  return k;
}

#if RB_HAVE_CUDNN

namespace fe = cudnn_frontend;

std::string version_string(std::size_t v) {
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
}

const std::string kFrontendVersion = std::to_string(CUDNN_FRONTEND_MAJOR_VERSION) + "." +
                                     std::to_string(CUDNN_FRONTEND_MINOR_VERSION) + "." +
                                     std::to_string(CUDNN_FRONTEND_PATCH_VERSION);

// ---- libcudnn, loaded once per process ---------------------------------------------------
//
// The library named by options().cudnn_lib ("" = libcudnn.so.9 through the loader's search).
// Until a cuDNN case is prepared the choice may still change (the registry probes the version
// before the CLI has set --cudnn-lib); from then on it is fixed, because the frontend caches
// every symbol it resolves.
struct Library {
  std::mutex mu;
  void* handle = nullptr;
  std::string requested;  // the cudnn_lib `handle` (or `error`) is for
  std::string error;      // why loading `requested` failed
  bool tried = false;
  bool committed = false;
  std::size_t version = 0;
};

Library& library() {
  static Library* lib = new Library;  // never destroyed: thread-exit handle cleanup may use it
  return *lib;
}

std::string describe_lib(const std::string& requested) {
  return requested.empty() ? std::string("libcudnn.so.9") : requested;
}

// Loads the requested library if it is not loaded yet. commit: the caller is about to use
// the frontend, so the library becomes the one for the rest of the process. Returns why it
// cannot be used.
std::optional<std::string> load_library(bool commit) {
  Library& l = library();
  std::lock_guard<std::mutex> lock(l.mu);
  const std::string want = options().cudnn_lib;
  if (!(l.tried && want == l.requested)) {
    if (l.committed)
      return "cuDNN is already in use from " + describe_lib(l.requested) + "; --cudnn-lib " +
             (want.empty() ? std::string("(none)") : want) +
             " must be given before the first cuDNN case runs";
    if (l.handle) dlclose(l.handle);
    l.handle = nullptr;
    l.version = 0;
    l.error.clear();
    l.tried = true;
    l.requested = want;
    dlerror();
    void* h = dlopen(describe_lib(want).c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* e = dlerror();
      const std::string why = e ? e : "unknown error";
      l.error = want.empty() ? "libcudnn.so.9 not found (dlopen: " + why +
                                   "): install cuDNN 9 or pass --cudnn-lib PATH"
                             : "cannot load --cudnn-lib " + want + " (dlopen: " + why + ")";
      return l.error;
    }
    using GetVersionFn = std::size_t (*)();
    auto get_version = reinterpret_cast<GetVersionFn>(dlsym(h, "cudnnGetVersion"));
    if (!get_version) {
      dlclose(h);
      l.error = describe_lib(want) +
                " has no cudnnGetVersion: not a cuDNN library (pass --cudnn-lib PATH of libcudnn.so.9)";
      return l.error;
    }
    const std::size_t v = get_version();
    if (v / 10000 != CUDNN_MAJOR) {
      dlclose(h);
      l.error = describe_lib(want) + " is cuDNN " + version_string(v) + "; this build needs cuDNN " +
                std::to_string(CUDNN_MAJOR) + " (install it or pass --cudnn-lib PATH)";
      return l.error;
    }
    l.handle = h;
    l.version = v;
  }
  if (!l.handle) return l.error;
  if (commit && !l.committed) {
    fe::cudnn_dlhandle = l.handle;
    l.committed = true;
  }
  return std::nullopt;
}

// The loaded cuDNN's version ("9.14.0"), or "" when it cannot be loaded.
std::string loaded_version() {
  if (load_library(false)) return "";
  Library& l = library();
  std::lock_guard<std::mutex> lock(l.mu);
  return version_string(l.version);
}

// ---- errors -----------------------------------------------------------------------------

std::string status_text(cudnnStatus_t s) {
  std::string m = fe::detail::get_error_string(s);
  const std::string last = fe::detail::get_last_error_string_();
  if (!last.empty()) m += ": " + last;
  return m;
}

std::string cuda_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

// cuDNN's message on one line. A refusal of every engine comes as a headline, then per engine
// its JSON configuration and the chain of checks that failed, outermost last; keep the
// headline and, per engine, the innermost (most specific) failed check.
std::string one_line(const std::string& message) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= message.size()) {
    const std::size_t end = std::min(message.find('\n', start), message.size());
    std::string line = message.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) lines.push_back(line);
    start = end + 1;
  }
  if (lines.empty()) return "(no message)";
  std::string out = lines[0];
  bool take_next_warning = false;
  std::string engine;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const std::size_t id = line.find("\"engineId\":");
    if (id != std::string::npos) {
      const std::size_t digits = id + 11;
      engine = "eng" + line.substr(digits, line.find_first_not_of("0123456789", digits) - digits);
      take_next_warning = true;
    } else if (take_next_warning && line.rfind("Warning: ", 0) == 0) {
      out += "; " + engine + ": " + line.substr(9);
      take_next_warning = false;
    } else if (engine.empty()) {
      out += " " + line;
    }
  }
  constexpr std::size_t kMax = 800;
  if (out.size() > kMax) out = out.substr(0, kMax) + "...";
  return out;
}

// A refusal by the frontend or cuDNN while building: the case is skipped with its message.
void refuse_if_bad(fe::error_t e, const char* step) {
  if (e.is_bad()) throw Unsupported("cuDNN " + std::string(step) + ": " + one_line(e.get_message()));
}

// ---- handles: one per (thread, device), created on first use -----------------------------

class Handles {
 public:
  Handles() = default;
  Handles(const Handles&) = delete;
  Handles& operator=(const Handles&) = delete;
  ~Handles() {
    for (auto& [device, h] : by_device_) {
      (void)device;
      try {
        fe::detail::destroy_handle(h);  // thread exit: nothing to report to
      } catch (...) {
      }
    }
  }
  // The handle of the calling thread for `device` (the current one). Throws with the reason.
  cudnnHandle_t get(int device) {
    auto it = by_device_.find(device);
    if (it != by_device_.end()) return it->second;
    // cuDNN binds the handle to the thread's current context: make the device's primary
    // context current first (this runtime's, which cuDNN's shares through the driver).
    const cudaError_t ce = cudaFree(nullptr);
    if (ce != cudaSuccess)
      throw std::runtime_error("cudaFree(0) on device " + std::to_string(device) + ": " + cuda_text(ce));
    cudnnHandle_t h = nullptr;
    const cudnnStatus_t s = fe::detail::create_handle(&h);
    if (s != CUDNN_STATUS_SUCCESS)
      throw std::runtime_error("cudnnCreate on device " + std::to_string(device) + ": " + status_text(s));
    by_device_.emplace(device, h);
    return h;
  }

 private:
  std::map<int, cudnnHandle_t> by_device_;
};

int current_device() {
  int device = 0;
  const cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess) throw std::runtime_error("cudaGetDevice: " + cuda_text(e));
  return device;
}

cudnnHandle_t thread_handle(int device) {
  thread_local Handles handles;
  return handles.get(device);
}

// ---- graphs -----------------------------------------------------------------------------

// Tensor ids in the variant pack. kOne: the scalar 1 of the weight offset (its value is in the
// graph; the launch gives its address too, in case a cuDNN version asks for it).
enum Uid : std::int64_t { kX = 1, kW, kY, kRrms, kEps, kDy, kDx, kDw, kOne, kUidEnd };

const float kOneValue = 1.0f;

fe::DataType_t fe_type(DType t) {
  switch (t) {
    case DType::f32:
      return fe::DataType_t::FLOAT;
    case DType::f16:
      return fe::DataType_t::HALF;
    case DType::bf16:
      return fe::DataType_t::BFLOAT16;
    case DType::e4m3:
      return fe::DataType_t::FP8_E4M3;
    case DType::e5m2:
      return fe::DataType_t::FP8_E5M2;
  }
  throw std::invalid_argument("cudnn: unknown dtype");
}

// A graph for one problem with its execution plans listed (heuristics A, then fallback) and
// none built yet. Throws Unsupported with cuDNN's message.
struct Graph {
  std::shared_ptr<fe::graph::Graph> graph;
  int device = 0;
  cudnnHandle_t handle = nullptr;
};

Graph make_graph(const Problem& p) {
  if (auto why = load_library(true)) throw Unsupported(*why);
  Graph g;
  int sm_major = 0, sm_minor = 0;
  try {
    g.device = current_device();
    g.handle = thread_handle(g.device);
  } catch (const std::exception& e) {
    throw Unsupported(std::string("no usable CUDA device for cuDNN: ") + e.what());
  }
  cudaError_t ce = cudaDeviceGetAttribute(&sm_major, cudaDevAttrComputeCapabilityMajor, g.device);
  if (ce == cudaSuccess) ce = cudaDeviceGetAttribute(&sm_minor, cudaDevAttrComputeCapabilityMinor, g.device);
  if (ce != cudaSuccess) throw Unsupported("cudaDeviceGetAttribute (compute capability): " + cuda_text(ce));

  g.graph = std::make_shared<fe::graph::Graph>();
  fe::graph::Graph& graph = *g.graph;
  graph.set_io_data_type(fe_type(p.x))
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  // Given here, the frontend needs no CUDA runtime call of its own to learn it.
  graph.set_sm_version(sm_major * 10 + sm_minor);

  const std::int64_t M = p.M, H = p.H, S = p.stride;
  auto rows = [&](const char* name, Uid uid, DType t) {
    return fe::graph::Tensor_attributes()
        .set_name(name)
        .set_uid(uid)
        .set_dim({M, H, 1, 1})
        .set_stride({S, 1, S, S})
        .set_data_type(fe_type(t));
  };
  auto per_column = [&](const char* name, Uid uid, DType t) {
    return fe::graph::Tensor_attributes()
        .set_name(name)
        .set_uid(uid)
        .set_dim({1, H, 1, 1})
        .set_stride({H, 1, H, H})
        .set_data_type(fe_type(t));
  };
  // The scale the norm node multiplies by: w, or 1 + w (gemma, zero-centered) from a
  // pointwise ADD into a virtual tensor of fp32 (gemma) or of w's dtype (zero-centered).
  auto effective_scale = [&](std::shared_ptr<fe::graph::Tensor_attributes> w) {
    switch (p.conv) {
      case Convention::fp32:
        return w;
      case Convention::gemma:
      case Convention::zero_centered:
        break;
      case Convention::llama:
        throw Unsupported(
            "cudnn: no llama convention (x * rrms rounded to x's dtype inside the norm node is not "
            "expressible in its graph)");
    }
    auto one = graph.tensor(fe::graph::Tensor_attributes(kOneValue)
                                .set_name("one")
                                .set_uid(kOne)
                                .set_dim({1, 1, 1, 1})
                                .set_stride({1, 1, 1, 1}));
    auto w_eff = graph.pointwise(w, one,
                                 fe::graph::Pointwise_attributes()
                                     .set_name("weight_offset")
                                     .set_mode(fe::PointwiseMode_t::ADD)
                                     .set_compute_data_type(fe::DataType_t::FLOAT));
    w_eff->set_data_type(p.conv == Convention::gemma ? fe::DataType_t::FLOAT : fe_type(p.w));
    return w_eff;
  };
  auto per_row = [&](const char* name, Uid uid) {
    return fe::graph::Tensor_attributes()
        .set_name(name)
        .set_uid(uid)
        .set_dim({M, 1, 1, 1})
        .set_stride({1, 1, 1, 1})
        .set_data_type(fe::DataType_t::FLOAT);
  };

  if (is_fp8(p.y)) throw Unsupported("cudnn: no fp8 y (its norm graph here has no scale and amax)");
  if (p.op == Op::fwd) {
    auto x = graph.tensor(rows("x", kX, p.x));
    auto w = effective_scale(graph.tensor(per_column("w", kW, p.w)));
    auto eps = graph.tensor(fe::graph::Tensor_attributes()
                                .set_name("eps")
                                .set_uid(kEps)
                                .set_dim({1, 1, 1, 1})
                                .set_stride({1, 1, 1, 1})
                                .set_data_type(fe::DataType_t::FLOAT)
                                .set_is_pass_by_value(true));
    auto attrs = fe::graph::Rmsnorm_attributes()
                     .set_name("rmsnorm")
                     .set_forward_phase(fe::NormFwdPhase_t::TRAINING)
                     .set_epsilon(eps)
                     .set_compute_data_type(fe::DataType_t::FLOAT);
    auto [y, rrms] = graph.rmsnorm(x, w, attrs);
    y->set_output(true)
        .set_uid(kY)
        .set_dim({M, H, 1, 1})
        .set_stride({S, 1, S, S})
        .set_data_type(fe_type(p.x));
    rrms->set_output(true)
        .set_uid(kRrms)
        .set_dim({M, 1, 1, 1})
        .set_stride({1, 1, 1, 1})
        .set_data_type(fe::DataType_t::FLOAT);
  } else if (p.op == Op::bwd) {
    auto x = graph.tensor(rows("x", kX, p.x));
    auto dy = graph.tensor(rows("dy", kDy, p.x));
    auto w = effective_scale(graph.tensor(per_column("w", kW, p.w)));
    auto rrms = graph.tensor(per_row("rrms", kRrms));
    auto attrs = fe::graph::Rmsnorm_backward_attributes()
                     .set_name("rmsnorm_bwd")
                     .has_dbias(false)
                     .set_compute_data_type(fe::DataType_t::FLOAT);
    auto [dx, dw, dbias] = graph.rmsnorm_backward(dy, x, w, rrms, attrs);
    (void)dbias;  // null: no bias
    dx->set_output(true)
        .set_uid(kDx)
        .set_dim({M, H, 1, 1})
        .set_stride({S, 1, S, S})
        .set_data_type(fe_type(p.x));
    dw->set_output(true)
        .set_uid(kDw)
        .set_dim({1, H, 1, 1})
        .set_stride({H, 1, H, H})
        .set_data_type(fe_type(p.w));
  } else {
    throw Unsupported("cudnn implements fwd and bwd only, not " + std::string(op_name(p.op)));
  }

  try {
    refuse_if_bad(graph.validate(), "graph validate");
    refuse_if_bad(graph.build_operation_graph(g.handle), "build_operation_graph");
    refuse_if_bad(graph.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}),
                  "create_execution_plans");
  } catch (const Unsupported&) {
    throw;
  } catch (const std::exception& e) {  // the dynamic loader's missing symbol, for one
    throw Unsupported(std::string("cuDNN frontend: ") + e.what());
  }
  return g;
}

// The engine configurations the plans list, in heuristics order, without duplicates.
std::vector<std::string> plan_names(const fe::graph::Graph& graph) {
  std::vector<std::string> names;
  const std::int64_t n = graph.get_execution_plan_count();
  for (std::int64_t i = 0; i < n; ++i) {
    std::string name;
    if (graph.get_plan_name_at_index(i, name).is_bad()) continue;
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

class CudnnPlan final : public Plan {
 public:
  // variant "": the first engine configuration cuDNN's heuristics offer that builds; else the
  // named configuration alone.
  CudnnPlan(const Problem& p, const std::string& variant) : problem_(p) {
    Graph g = make_graph(p);
    graph_ = g.graph;
    device_ = g.device;
    try {
      if (variant.empty()) {
        refuse_if_bad(graph_->check_support(), "check_support");
        refuse_if_bad(graph_->build_plans(fe::BuildPlanPolicy_t::HEURISTICS_CHOICE), "build_plans");
        refuse_if_bad(graph_->get_plan_name(engine_), "get_plan_name");
        std::int64_t ws = 0;
        refuse_if_bad(graph_->get_workspace_size(ws), "get_workspace_size");
        workspace_ = static_cast<std::size_t>(ws);
      } else {
        const std::int64_t n = graph_->get_execution_plan_count();
        for (std::int64_t i = 0; i < n && index_ < 0; ++i) {
          std::string name;
          if (graph_->get_plan_name_at_index(i, name).is_good() && name == variant) index_ = i;
        }
        if (index_ < 0) {
          std::string offered;
          for (const std::string& name : plan_names(*graph_)) offered += (offered.empty() ? "" : ", ") + name;
          throw Unsupported("cuDNN offers no engine configuration " + variant +
                            " for this case (it offers: " + (offered.empty() ? "none" : offered) + ")");
        }
        refuse_if_bad(graph_->build_plan_at_index(index_), ("build_plan_at_index " + variant).c_str());
        engine_ = variant;
        std::int64_t ws = 0;
        refuse_if_bad(graph_->get_workspace_size_plan_at_index(index_, ws),
                      "get_workspace_size_plan_at_index");
        workspace_ = static_cast<std::size_t>(ws);
      }
      refuse_if_bad(graph_->prepare_variant_pack_template(), "prepare_variant_pack_template");
      uids_ = graph_->get_variant_pack_uids_sorted();
      for (std::int64_t uid : uids_)
        if (uid <= 0 || uid >= kUidEnd)
          throw Unsupported("cuDNN frontend: the variant pack asks for tensor uid " + std::to_string(uid) +
                            ", which this graph never declared");
    } catch (const Unsupported&) {
      throw;
    } catch (const std::exception& e) {
      throw Unsupported(std::string("cuDNN frontend: ") + e.what());
    }
  }

  std::size_t workspace_bytes() const override { return workspace_; }
  std::string picked() const override { return "cudnn:" + engine_; }

  cudaError_t launch(const LaunchArgs& args, cudaStream_t s) override {
    void* by_uid[kUidEnd] = {};
    float eps = 0.0f;  // read by cuDNN during execute, from this frame
    void* workspace = nullptr;
    std::size_t workspace_given = 0;
    if (problem_.op == Op::fwd) {
      const FwdArgs* a = std::get_if<FwdArgs>(&args);
      if (!a) throw std::invalid_argument("cudnn fwd plan launched without FwdArgs");
      expect_shape(a->M, a->H, {a->x_stride, a->y_stride}, a->xdtype, a->wdtype, a->conv);
      if (is_fp8(a->ydtype)) throw std::invalid_argument("cudnn fwd writes y in x's dtype, not fp8");
      if (!a->rrms)
        throw std::invalid_argument("cudnn fwd writes rrms (cuDNN's inv_variance): FwdArgs::rrms is null");
      eps = a->eps;
      by_uid[kX] = const_cast<void*>(a->x);
      by_uid[kW] = const_cast<void*>(a->w);
      by_uid[kY] = a->y;
      by_uid[kRrms] = a->rrms;
      by_uid[kEps] = &eps;
      workspace = a->workspace;
      workspace_given = a->workspace_bytes;
    } else {
      const BwdArgs* a = std::get_if<BwdArgs>(&args);
      if (!a) throw std::invalid_argument("cudnn bwd plan launched without BwdArgs");
      expect_shape(a->M, a->H, {a->x_stride, a->dy_stride, a->dx_stride}, a->xdtype, a->wdtype, a->conv);
      if (a->dydtype != a->xdtype) throw std::invalid_argument("cudnn bwd: dy must have x's dtype");
      by_uid[kX] = const_cast<void*>(a->x);
      by_uid[kDy] = const_cast<void*>(a->dy);
      by_uid[kW] = const_cast<void*>(a->w);
      by_uid[kRrms] = const_cast<float*>(a->rrms);
      by_uid[kDx] = a->dx;
      by_uid[kDw] = a->dw;
      workspace = a->workspace;
      workspace_given = a->workspace_bytes;
    }
    by_uid[kOne] = const_cast<float*>(&kOneValue);
    if (workspace_ > 0 && (!workspace || workspace_given < workspace_))
      throw std::invalid_argument("cudnn plan (" + engine_ + ") needs " + std::to_string(workspace_) +
                                  " bytes of workspace; the launch gave " +
                                  std::to_string(workspace ? workspace_given : 0));

    const int device = current_device();
    if (device != device_)
      throw std::invalid_argument("cudnn plan built on device " + std::to_string(device_) +
                                  " launched on device " + std::to_string(device));
    cudnnHandle_t h = thread_handle(device);
    const cudnnStatus_t st = fe::detail::set_stream(h, s);
    if (st != CUDNN_STATUS_SUCCESS) throw std::runtime_error("cudnnSetStream: " + status_text(st));

    // The variant pack in the graph's sorted-uid order (no per-launch map).
    void* ptrs[kUidEnd];
    const int n = static_cast<int>(uids_.size());
    for (int i = 0; i < n; ++i) ptrs[i] = by_uid[uids_[i]];
    fe::error_t e = index_ < 0 ? graph_->execute(h, ptrs, n, workspace)
                               : graph_->execute_plan_at_index(h, ptrs, n, workspace, index_);
    if (e.is_bad()) {
      // A sticky CUDA error (an earlier fault) surfaces as cuDNN's execution failure: report it
      // as the CUDA error it is. Querying the stream is not allowed while it is being captured.
      cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
      if (cudaStreamIsCapturing(s, &capture) == cudaSuccess && capture == cudaStreamCaptureStatusNone) {
        const cudaError_t ce = cudaStreamQuery(s);
        if (ce != cudaSuccess && ce != cudaErrorNotReady) return ce;
      }
      throw std::runtime_error("cuDNN execute (" + engine_ + "): " + one_line(e.get_message()));
    }
    return cudaSuccess;
  }

 private:
  void expect_shape(std::int64_t M, std::int64_t H, std::initializer_list<std::int64_t> strides, DType x,
                    DType w, Convention conv) const {
    if (M != problem_.M || H != problem_.H || x != problem_.x || w != problem_.w || conv != problem_.conv)
      throw std::invalid_argument(
          "cudnn plan launched with arguments of another problem (M, H, dtypes or convention differ)");
    for (std::int64_t s : strides)
      if (s != problem_.stride)
        throw std::invalid_argument("cudnn plan built for row stride " + std::to_string(problem_.stride) +
                                    " launched with a row stride of " + std::to_string(s));
  }

  Problem problem_;
  std::shared_ptr<fe::graph::Graph> graph_;
  int device_ = 0;
  std::int64_t index_ = -1;         // the plan's index for a named variant, -1 = heuristics' choice
  std::vector<std::int64_t> uids_;  // the variant pack's tensors, in the order execute takes them
  std::string engine_;
  std::size_t workspace_ = 0;
};

std::vector<std::string> cudnn_variants(const Problem& p) {
  if (!options().cudnn_all_engines) return {};
  try {
    Graph g = make_graph(p);
    return plan_names(*g.graph);
  } catch (const std::exception&) {
    return {};  // one row, whose prepare() reports why
  }
}

#endif  // RB_HAVE_CUDNN

}  // namespace

std::vector<KernelInfo> cudnn_kernels() {
  KernelInfo k = base_info();
#if RB_HAVE_CUDNN
  const std::string cudnn_version = loaded_version();
  k.version = cudnn_version.empty() ? "frontend " + kFrontendVersion : cudnn_version;
  k.description = "cuDNN RMSNorm through the cuDNN frontend " + kFrontendVersion +
                  " graph API (fwd training phase saves inv_variance = rrms; bwd gives dx and dscale = dw), "
                  "libcudnn.so.9 loaded at run time; picked names the engine configuration that ran";
  k.supports = [](const Problem& p) -> std::optional<std::string> {
    if (p.base_align < 16)
      return "cuDNN's norm engines need 16-byte aligned base pointers (execute fails with "
             "CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER); this case's are aligned to " +
             std::to_string(p.base_align) + " bytes";
    return load_library(false);
  };
  k.variants = cudnn_variants;
  k.prepare = [](const Problem& p, const std::string& variant) -> std::unique_ptr<Plan> {
    return std::make_unique<CudnnPlan>(p, variant);
  };
#else
#ifndef RB_CUDNN_MISSING_REASON
#define RB_CUDNN_MISSING_REASON \
  "built without cuDNN: frontend headers not found (scripts/fetch-cudnn-frontend.sh)"
#endif
  const std::string why = RB_CUDNN_MISSING_REASON;
  k.description = "cuDNN RMSNorm through the cuDNN frontend graph API (not in this build)";
  k.unavailable = why;
  k.supports = [why](const Problem&) -> std::optional<std::string> { return why; };
  k.prepare = [why](const Problem&, const std::string&) -> std::unique_ptr<Plan> { throw Unsupported(why); };
#endif
  return {k};
}

}  // namespace rb::vendor

#include "harness/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

#include "harness/bytes.h"
#include "harness/cuda_check.h"
#include "harness/device_buffer.h"
#include "harness/nvtx.h"
#include "harness/validate.h"
#include "kernels/registry.h"
#include "reference/generate.h"
#include "reference/rmsnorm_ref.h"

namespace rb {

namespace {

// Calls f(T{}) with the host storage type of a dtype.
template <class F>
decltype(auto) with_host_type(DType d, F&& f) {
  switch (d) {
    case DType::f16:
      return f(ref::half{});
    case DType::bf16:
      return f(ref::bfloat16{});
    case DType::f32:
      break;
  }
  return f(float{});
}

// Calls f(T{}, W{}, R{}) with the host storage types of a case's x, w and residual dtypes.
template <class F>
decltype(auto) with_case_types(const Case& c, F&& f) {
  return with_host_type(c.dtype, [&](auto t) {
    return with_host_type(
        c.wdtype, [&](auto w) { return with_host_type(c.rdtype, [&](auto r) { return f(t, w, r); }); });
  });
}

ElemKind elem_kind(DType d) {
  switch (d) {
    case DType::f16:
      return ElemKind::f16;
    case DType::bf16:
      return ElemKind::bf16;
    case DType::f32:
      break;
  }
  return ElemKind::f32;
}

// Seeds of the op's other inputs, derived from the case seed so each draws its own stream.
constexpr std::uint64_t kResidualSeed = 0x7e51d;
constexpr std::uint64_t kDySeed = 0xd7;
constexpr std::uint64_t kDsSeed = 0xd5;

// A rows x H tensor generated on the host in its storage dtype (packed) and its guarded
// device copy.
struct Input {
  DType dtype = DType::f32;
  std::vector<unsigned char> host;
  GuardedTensor dev;

  template <class T>
  const T* as() const {
    return reinterpret_cast<const T*>(host.data());
  }
};

// The fp64 reference of one (data, eps), for the checked rows (all H columns of dw).
struct Reference {
  double eps = 0;
  std::vector<std::int64_t> rows;
  std::vector<double> out;         // rows.size() x H: y (fwd, add) or dx (bwd ops)
  std::vector<double> scale;       // rows.size() x H: dx_scale (bwd ops)
  std::vector<double> s;           // rows.size() x H: residual_out (add)
  std::vector<double> rrms;        // rows.size(): rrms (fwd, add)
  std::vector<double> dw, dw_abs;  // H (bwd ops)
};

// The backward ops' saved rrms for one eps: M fp32 values, the kernel's input.
struct SavedRrms {
  double eps = 0;
  std::vector<float> rrms;
};

// Inputs and outputs of one (op, data) configuration, shared by the cases that read it.
//   fwd      x, w                 -> y (main), rrms
//   add      x, r, w              -> y (main), s, rrms
//   bwd      x, w, dy, rrms       -> dx (main), dw
//   add-bwd  x (= s, residual dtype), w, dy, ds_out, rrms -> dx (main, residual dtype), dw
struct DataSet {
  Case key;
  Input x, w, r, dy, ds;
  GuardedTensor main, s, rrms, dw;
  std::vector<SavedRrms> saved;  // bwd ops, per eps
  std::vector<Reference> refs;   // per eps, built only when a case is checked
};

std::string cuda_error_text(cudaError_t e) {
  return fmt::format("{}: {}", cudaGetErrorName(e), cudaGetErrorString(e));
}

// dw and dw_abs (H each) summed over M rows: rows_fn(first_row, rows, out) writes the sums
// over its rows into out.dw / out.dw_abs. Blocks of rows run on their own threads; their
// sums are added in block order, so the result does not depend on the machine.
template <class RowsFn>
void parallel_row_sums(std::int64_t M, std::int64_t H, std::vector<double>& dw, std::vector<double>& dw_abs,
                       RowsFn rows_fn) {
  constexpr std::int64_t kBlocks = 16;
  const std::int64_t blocks = std::max<std::int64_t>(1, std::min(kBlocks, M));
  const auto h = static_cast<std::size_t>(H);
  std::vector<std::vector<double>> part(static_cast<std::size_t>(2 * blocks), std::vector<double>(h));
  std::vector<std::thread> threads;
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t r0 = M * b / blocks, r1 = M * (b + 1) / blocks;
    auto& pw = part[static_cast<std::size_t>(2 * b)];
    auto& pa = part[static_cast<std::size_t>(2 * b + 1)];
    threads.emplace_back([&, r0, r1] {
      rows_fn(r0, r1 - r0, ref::BwdOut{nullptr, pw.data(), nullptr, pa.data()});
    });
  }
  for (std::thread& t : threads) t.join();
  dw.assign(h, 0.0);
  dw_abs.assign(h, 0.0);
  for (std::int64_t b = 0; b < blocks; ++b)
    for (std::size_t i = 0; i < h; ++i) {
      dw[i] += part[static_cast<std::size_t>(2 * b)][i];
      dw_abs[i] += part[static_cast<std::size_t>(2 * b + 1)][i];
    }
}

// The dtype of x as the kernel reads it, and of the main output.
DType x_dtype(const Case& c) { return c.op == Op::add_bwd ? c.rdtype : c.dtype; }

}  // namespace

struct Runner::Impl {
  Stream stream;
  L2Flusher flusher;
  std::optional<CopyCeiling> copy;
  std::unique_ptr<DataSet> data;
  DeviceBuffer workspace;

  Impl(const DeviceInfo& d, FlushMode mode) : flusher(d.l2_bytes, mode) {}

  // rows x H of dtype dt, generated packed by gen, uploaded at the given row stride after
  // the case layout's base offset.
  void make_input(Input& in, DType dt, const Case& c, std::int64_t rows, std::int64_t stride,
                  const std::function<void(void*)>& gen) {
    const std::size_t es = dtype_size(dt);
    in.dtype = dt;
    in.host.resize(static_cast<std::size_t>(rows * c.H) * es);
    gen(in.host.data());
    in.dev = GuardedTensor({rows, c.H, stride, layout_offset(c.layout), es});
    in.dev.poison(stream.get());
    in.dev.upload(in.host.data(), stream.get());
  }

  void make_rows(Input& in, DType dt, const Case& c, Dist d, std::uint64_t seed) {
    make_input(in, dt, c, c.M, c.stride(), [&](void* p) {
      with_host_type(dt, [&](auto t) {
        using T = decltype(t);
        ref::generate_rows<T>(d, seed, c.M, c.H, c.H, static_cast<T*>(p));
      });
    });
  }

  DataSet& data_for(const Case& c) {
    if (data && data->key.same_data(c)) return *data;
    data.reset();  // free the previous buffers before allocating the next
    auto ds = std::make_unique<DataSet>();
    ds->key = c;
    const std::int64_t stride = c.stride(), off = layout_offset(c.layout);
    make_rows(ds->x, x_dtype(c), c, c.dist, c.seed);
    make_input(ds->w, c.wdtype, c, 1, c.H, [&](void* p) {
      with_host_type(c.wdtype, [&](auto t) {
        using W = decltype(t);
        ref::generate_weight<W>(c.seed, c.H, static_cast<W*>(p));
      });
    });
    // The residual stream follows x's distribution (zero rows stay zero in s = x + r).
    if (c.op == Op::add) make_rows(ds->r, c.rdtype, c, c.dist, c.seed + kResidualSeed);
    // dy has a non-zero mean (N(3, 1)): over offset inputs sum(dy * w * x) ~ H, so a missing
    // correction term is as large as dx itself (reference/rmsnorm_ref.h).
    if (is_backward(c.op)) make_rows(ds->dy, c.dtype, c, Dist::offset, c.seed + kDySeed);
    if (c.op == Op::add_bwd) make_rows(ds->ds, c.rdtype, c, Dist::normal, c.seed + kDsSeed);

    const DType main_dt = x_dtype(c);
    ds->main = GuardedTensor({c.M, c.H, stride, off, dtype_size(main_dt)});
    ds->rrms = GuardedTensor({c.M, 1, 1, 0, 4});
    if (c.op == Op::add) ds->s = GuardedTensor({c.M, c.H, stride, off, dtype_size(c.rdtype)});
    if (is_backward(c.op)) ds->dw = GuardedTensor({1, c.H, c.H, off, dtype_size(c.wdtype)});
    RB_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    data = std::move(ds);
    return *data;
  }

  // The saved rrms a backward kernel reads: the fp32 rounding of the exact value. The
  // reference uses that value (upcast) as it is, so it adds no error term.
  const std::vector<float>& saved_rrms_for(DataSet& ds, double eps) {
    for (const SavedRrms& sr : ds.saved)
      if (sr.eps == eps) return sr.rrms;
    const Case& c = ds.key;
    SavedRrms sr;
    sr.eps = eps;
    sr.rrms.resize(static_cast<std::size_t>(c.M));
    with_host_type(x_dtype(c), [&](auto t) {
      using X = decltype(t);
      for (std::int64_t i = 0; i < c.M; ++i)
        sr.rrms[static_cast<std::size_t>(i)] =
            static_cast<float>(ref::rrms_row<X>(ds.x.as<X>() + i * c.H, c.H, eps));
    });
    ds.saved.push_back(std::move(sr));
    return ds.saved.back().rrms;
  }

  const Reference& reference_for(DataSet& ds, double eps, std::int64_t max_elems) {
    for (const Reference& r : ds.refs)
      if (r.eps == eps) return r;
    const Case& c = ds.key;
    const std::int64_t H = c.H;
    Reference r;
    r.eps = eps;
    r.rows = rows_to_check(c.M, H, max_elems);
    const std::size_t n = r.rows.size() * static_cast<std::size_t>(H);
    r.out.resize(n);
    with_case_types(c, [&](auto tt, auto wt, auto rt) {
      using T = decltype(tt);
      using W = decltype(wt);
      using R = decltype(rt);
      const W* w = ds.w.as<W>();
      switch (c.op) {
        case Op::fwd: {
          r.rrms.resize(r.rows.size());
          for (std::size_t i = 0; i < r.rows.size(); ++i)
            r.rrms[i] =
                ref::rmsnorm_fwd_row<T, W>(ds.x.as<T>() + r.rows[i] * H, w, H, eps, r.out.data() + i * H);
          break;
        }
        case Op::add: {
          r.rrms.resize(r.rows.size());
          r.s.resize(n);
          for (std::size_t i = 0; i < r.rows.size(); ++i)
            r.rrms[i] =
                ref::rmsnorm_add_fwd_row<T, R, W>(ds.x.as<T>() + r.rows[i] * H, ds.r.as<R>() + r.rows[i] * H,
                                                  w, H, eps, r.out.data() + i * H, r.s.data() + i * H);
          break;
        }
        case Op::bwd:
        case Op::add_bwd: {
          const std::vector<float>& saved = saved_rrms_for(ds, eps);
          const std::vector<double> rrms(saved.begin(), saved.end());
          r.scale.resize(n);
          for (std::size_t i = 0; i < r.rows.size(); ++i) {
            const std::int64_t row = r.rows[i];
            const ref::BwdOut dx_out{r.out.data() + i * H, nullptr, r.scale.data() + i * H, nullptr};
            if (c.op == Op::bwd)
              ref::rmsnorm_bwd_row<T, W>(ds.x.as<T>() + row * H, w, ds.dy.as<T>() + row * H, H,
                                         rrms[static_cast<std::size_t>(row)], dx_out);
            else
              ref::rmsnorm_add_bwd_row<T, R, W>(ds.x.as<R>() + row * H, w, ds.dy.as<T>() + row * H,
                                                ds.ds.as<R>() + row * H, H,
                                                rrms[static_cast<std::size_t>(row)], dx_out);
          }
          // dw needs every row: fp64 sums over fixed blocks of rows on their own threads,
          // then added in block order (the same result on any machine).
          parallel_row_sums(
              c.M, H, r.dw, r.dw_abs, [&](std::int64_t r0, std::int64_t n, const ref::BwdOut& part) {
                if (c.op == Op::bwd)
                  ref::rmsnorm_bwd_rows<T, W>(ds.x.as<T>() + r0 * H, w, ds.dy.as<T>() + r0 * H,
                                              rrms.data() + r0, n, H, H, part);
                else
                  ref::rmsnorm_add_bwd_rows<T, R, W>(ds.x.as<R>() + r0 * H, w, ds.dy.as<T>() + r0 * H,
                                                     ds.ds.as<R>() + r0 * H, rrms.data() + r0, n, H, H, part);
              });
          break;
        }
      }
    });
    ds.refs.push_back(std::move(r));
    return ds.refs.back();
  }
};

Runner::Runner(DeviceInfo dev, RunConfig cfg)
    : dev_(std::move(dev)), cfg_(cfg), impl_(std::make_unique<Impl>(dev_, cfg_.timing.flush)) {}
Runner::~Runner() = default;

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
  r.M = c.M;
  r.H = c.H;
  r.stride = c.stride();
  r.layout = std::string(layout_name(c.layout));
  r.eps = c.eps;
  r.dist = std::string(ref::dist_name(c.dist));
  r.seed = c.seed;
  r.bytes = op_bytes(c.op, c.M, c.H, c.dtype, c.wdtype, c.rdtype);
  // The main output's tolerance. For the backward ops atol is the coefficient of the
  // element's error scale (validate.h): |err| <= rtol * |dx| + atol * dx_scale.
  if (is_backward(c.op)) {
    const ScaledTolerance t = dx_tolerance(x_dtype(c), c.H);
    r.atol = t.scale_coef;
    r.rtol = t.rtol;
  } else {
    const Tolerance t = fwd_tolerance(c.dtype);
    r.atol = t.atol;
    r.rtol = t.rtol;
  }
  return r;
}

std::string case_label(const Case& c) {
  return fmt::format("{}/{}/{}/{}{}/M={}/H={}/{}/{}/eps={}", op_name(c.op), c.kernel, dtype_name(c.dtype),
                     dtype_name(c.wdtype),
                     has_residual(c.op) ? fmt::format("/r={}", dtype_name(c.rdtype)) : "", c.M, c.H,
                     layout_name(c.layout), ref::dist_name(c.dist), c.eps);
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

// One output's comparison against the reference, and the shape of that output.
enum class Shape {
  matrix,      // checked rows x H (y, dx, residual_out)
  per_column,  // H values, one row (dw)
  per_row,     // one value per checked row (rrms)
};

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
    }
  }
  return m;
}

// Compares the checked rows of a device tensor (storage type T) with reference rows; tol
// gives each element's tolerance from its index into ref.
template <class T, class TolFn>
void compare_rows(const GuardedTensor& dev, const std::vector<std::int64_t>& rows, std::int64_t H,
                  const std::vector<double>& want, ErrorStats& st, TolFn tol) {
  std::vector<T> row(static_cast<std::size_t>(H));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    dev.download_row(rows[i], row.data());
    for (std::int64_t col = 0; col < H; ++col) {
      const std::size_t k = i * static_cast<std::size_t>(H) + static_cast<std::size_t>(col);
      st.add(rows[i], col, ref::to_double(row[static_cast<std::size_t>(col)]), want[k],
             ref::ulp_at<T>(want[k]), tol(k));
    }
  }
}

// A launch of the case's op with the arguments bound.
using BoundLaunch = std::function<cudaError_t(cudaStream_t, LaunchInfo*)>;

}  // namespace

Record Runner::run_case(const Case& c) {
  Record rec = base_record(dev_, c);
  const KernelInfo* k = find_kernel(c.kernel);
  if (!k) {
    rec.status = Status::error;
    rec.reason = "unknown kernel " + c.kernel;
    return rec;
  }
  Problem p;
  p.op = c.op;
  p.M = c.M;
  p.H = c.H;
  p.stride = c.stride();
  p.x = c.dtype;
  p.w = c.wdtype;
  p.r = c.rdtype;
  if (auto why = check_common(*k, p)) {
    rec.status = Status::skip;
    rec.reason = *why;
    return rec;
  }

  NvtxRange case_range(case_label(c));
  DataSet& ds = impl_->data_for(c);
  const cudaStream_t s = impl_->stream.get();
  const std::int64_t stride = c.stride();

  // Bind the op's arguments.
  BoundLaunch launch;
  switch (c.op) {
    case Op::fwd: {
      FwdArgs a;
      a.x = ds.x.dev.data();
      a.w = ds.w.dev.data();
      a.y = ds.main.data();
      a.rrms = static_cast<float*>(ds.rrms.data());
      a.M = c.M;
      a.H = c.H;
      a.x_stride = a.y_stride = stride;
      a.eps = static_cast<float>(c.eps);
      a.xdtype = c.dtype;
      a.wdtype = c.wdtype;
      launch = [k, a](cudaStream_t st, LaunchInfo* info) { return k->launch_fwd(a, st, info); };
      break;
    }
    case Op::add: {
      AddArgs a;
      a.x = ds.x.dev.data();
      a.r = ds.r.dev.data();
      a.w = ds.w.dev.data();
      a.y = ds.main.data();
      a.s = ds.s.data();
      a.rrms = static_cast<float*>(ds.rrms.data());
      a.M = c.M;
      a.H = c.H;
      a.x_stride = a.r_stride = a.y_stride = a.s_stride = stride;
      a.eps = static_cast<float>(c.eps);
      a.xdtype = c.dtype;
      a.wdtype = c.wdtype;
      a.rdtype = c.rdtype;
      launch = [k, a](cudaStream_t st, LaunchInfo* info) { return k->launch_add(a, st, info); };
      break;
    }
    case Op::bwd:
    case Op::add_bwd: {
      // The saved rrms is an input here (fp32 values for this eps); the fp64 reference is
      // built only if the case is checked.
      ds.rrms.upload(impl_->saved_rrms_for(ds, c.eps).data(), s);
      BwdArgs a;
      a.x = ds.x.dev.data();
      a.w = ds.w.dev.data();
      a.dy = ds.dy.dev.data();
      a.rrms = static_cast<const float*>(ds.rrms.data());
      a.ds_out = c.op == Op::add_bwd ? ds.ds.dev.data() : nullptr;
      a.dx = ds.main.data();
      a.dw = ds.dw.data();
      a.M = c.M;
      a.H = c.H;
      a.x_stride = a.dy_stride = a.ds_stride = a.dx_stride = stride;
      a.xdtype = x_dtype(c);
      a.dydtype = c.dtype;
      a.wdtype = c.wdtype;
      const std::size_t need = k->bwd_workspace ? k->bwd_workspace(a) : 0;
      if (need > impl_->workspace.bytes()) impl_->workspace = DeviceBuffer(need);
      a.workspace = need ? impl_->workspace.get() : nullptr;
      a.workspace_bytes = impl_->workspace.bytes();
      launch = [k, a](cudaStream_t st, LaunchInfo* info) { return k->launch_bwd(a, st, info); };
      break;
    }
  }

  // Poisons every output, launches once and waits. Returns the launch error (not sticky,
  // cleared) or throws on an execution error, which may leave the device unusable.
  const auto launch_checked = [&](LaunchInfo* info) -> cudaError_t {
    ds.main.poison(s);
    if (c.op == Op::add) ds.s.poison(s);
    if (is_backward(c.op))
      ds.dw.poison(s);
    else
      ds.rrms.poison(s);
    cudaError_t e;
    {
      NvtxRange launch_range("launch " + case_label(c));
      e = launch(s, info);
    }
    if (e != cudaSuccess) {
      cudaGetLastError();
      return e;
    }
    e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) throw CudaError(e, "kernel failed: " + cuda_error_text(e));
    return cudaSuccess;
  };

  LaunchInfo info;
  const cudaError_t le = launch_checked(&info);
  rec.picked = info.picked.empty() ? c.kernel : info.picked;
  if (le != cudaSuccess) {
    rec.status = Status::error;
    rec.reason = "launch failed: " + cuda_error_text(le);
    return rec;
  }

  rec.status = Status::pass;
  if (cfg_.check) {
    std::string reason;
    const DType main_dt = x_dtype(c);
    const char* main_name = is_backward(c.op) ? "dx" : "y";
    add_scan(main_name, scan_guarded(ds.main, elem_kind(main_dt), s), c.H, reason);
    if (c.op == Op::add) add_scan("residual_out", scan_guarded(ds.s, elem_kind(c.rdtype), s), c.H, reason);
    if (is_backward(c.op))
      add_scan("dw", scan_guarded(ds.dw, elem_kind(c.wdtype), s), c.H, reason);
    else
      add_scan("rrms", scan_guarded(ds.rrms, ElemKind::f32, s), 1, reason);

    const Reference* ref = &impl_->reference_for(ds, c.eps, cfg_.max_check_elems);
    std::vector<OutputCheck> outs;
    const Tolerance main_tol = fwd_tolerance(main_dt);
    outs.push_back({main_name, ErrorStats(main_tol)});
    with_case_types(c, [&](auto tt, auto wt, auto rt) {
      using T = decltype(tt);
      using W = decltype(wt);
      using R = decltype(rt);
      if (is_backward(c.op)) {
        const ScaledTolerance dxt = dx_tolerance(main_dt, c.H);
        const auto dx_tol = [&](std::size_t i) { return dxt.at(ref->scale[i]); };
        if (c.op == Op::bwd)
          compare_rows<T>(ds.main, ref->rows, c.H, ref->out, outs[0].stats, dx_tol);
        else
          compare_rows<R>(ds.main, ref->rows, c.H, ref->out, outs[0].stats, dx_tol);
        // dw: every column, then the determinism check (a second launch, bitwise equal).
        const ScaledTolerance dwt = dw_tolerance(c.wdtype, c.M);
        outs.push_back({"dw", ErrorStats({dwt.atol, dwt.rtol}), Shape::per_column});
        std::vector<W> dw1(static_cast<std::size_t>(c.H)), dw2(dw1.size());
        ds.dw.download(dw1.data());
        for (std::int64_t col = 0; col < c.H; ++col) {
          const auto i = static_cast<std::size_t>(col);
          outs.back().stats.add(-1, col, ref::to_double(dw1[i]), ref->dw[i], ref::ulp_at<W>(ref->dw[i]),
                                dwt.at(ref->dw_abs[i]));
        }
        if (launch_checked(nullptr) == cudaSuccess) {
          ds.dw.download(dw2.data());
          std::int64_t differ = 0, first = -1;
          for (std::size_t i = 0; i < dw1.size(); ++i)
            if (std::memcmp(&dw1[i], &dw2[i], sizeof(W)) != 0 && differ++ == 0)
              first = static_cast<std::int64_t>(i);
          if (differ)
            append(reason,
                   fmt::format("dw not bitwise repeatable: {} column(s) differ between two launches, first "
                               "col {} ({:.9g} then {:.9g})",
                               differ, first, ref::to_double(dw1[static_cast<std::size_t>(first)]),
                               ref::to_double(dw2[static_cast<std::size_t>(first)])));
        } else {
          append(reason, "dw determinism: the second launch failed");
        }
      } else {
        compare_rows<T>(ds.main, ref->rows, c.H, ref->out, outs[0].stats,
                        [&](std::size_t) { return main_tol; });
        if (c.op == Op::add) {
          outs.push_back({"residual_out", ErrorStats({0, 0})});
          compare_rows<R>(ds.s, ref->rows, c.H, ref->s, outs.back().stats, [&](std::size_t i) {
            return Tolerance{ref::ulp_at<R>(ref->s[i]), 0};
          });
        }
        outs.push_back({"rrms", ErrorStats(rrms_tolerance()), Shape::per_row});
        std::vector<float> rrms_dev(static_cast<std::size_t>(c.M));
        ds.rrms.download(rrms_dev.data());
        for (std::size_t i = 0; i < ref->rows.size(); ++i) {
          const std::int64_t r = ref->rows[i];
          outs.back().stats.add(r, 0, rrms_dev[static_cast<std::size_t>(r)], ref->rrms[i],
                                ref::ulp_at<float>(ref->rrms[i]));
        }
      }
    });
    rec.rows_checked = static_cast<std::int64_t>(ref->rows.size());
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
    rec.worst_col = shown->shape == Shape::per_row ? -1 : shown->stats.worst_col;
    rec.mismatches = mismatches;
    if (!reason.empty()) {
      rec.status = Status::fail;
      rec.reason = reason;
    }
  } else {
    rec.reason = "not checked (--no-check)";
  }

  if (cfg_.time) {
    const CopyCeiling& cc = copy_ceiling();
    const LaunchFn timed = [&](cudaStream_t st) {
      const cudaError_t e = launch(st, nullptr);
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
  return rec;
}

void Runner::run(const std::vector<Case>& cases, const RecordSink& sink) {
  for (const Case& c : cases) {
    Record r;
    try {
      r = run_case(c);
    } catch (const CudaError& e) {
      // The device may be unusable now: record the case as an error, then stop the run.
      Record err = base_record(dev_, c);
      err.status = Status::error;
      err.reason = e.what();
      sink(err);
      throw;
    }
    sink(r);
  }
}

}  // namespace rb

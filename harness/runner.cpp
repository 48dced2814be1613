#include "harness/runner.h"

#include <fmt/format.h>

#include <cstring>
#include <map>

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
    case DType::f16: return f(ref::half{});
    case DType::bf16: return f(ref::bfloat16{});
    case DType::f32: break;
  }
  return f(float{});
}

ElemKind elem_kind(DType d) {
  switch (d) {
    case DType::f16: return ElemKind::f16;
    case DType::bf16: return ElemKind::bf16;
    case DType::f32: break;
  }
  return ElemKind::f32;
}

// The fp64 reference for the checked rows of one (data, eps).
struct Reference {
  double eps = 0;
  std::vector<std::int64_t> rows;
  std::vector<double> y;     // rows.size() x H
  std::vector<double> rrms;  // rows.size()
};

// Inputs and outputs of one data configuration, shared by the cases that read it.
struct DataSet {
  Case key;
  std::vector<unsigned char> x_host;  // M x H packed, storage dtype
  std::vector<unsigned char> w_host;  // H, storage dtype
  GuardedTensor x, w, y, rrms;
  std::vector<Reference> refs;
};

std::string cuda_error_text(cudaError_t e) {
  return fmt::format("{}: {}", cudaGetErrorName(e), cudaGetErrorString(e));
}

}  // namespace

struct Runner::Impl {
  Stream stream;
  L2Flusher flusher;
  std::optional<CopyCeiling> copy;
  std::unique_ptr<DataSet> data;

  Impl(const DeviceInfo& d, FlushMode mode) : flusher(d.l2_bytes, mode) {}

  DataSet& data_for(const Case& c) {
    if (data && data->key.same_data(c)) return *data;
    data.reset();  // free the previous buffers before allocating the next
    auto ds = std::make_unique<DataSet>();
    ds->key = c;
    const std::int64_t stride = c.stride();
    const std::size_t xs = dtype_size(c.dtype), ws = dtype_size(c.wdtype);
    ds->x_host.resize(static_cast<std::size_t>(c.M * c.H) * xs);
    ds->w_host.resize(static_cast<std::size_t>(c.H) * ws);
    with_host_type(c.dtype, [&](auto t) {
      using T = decltype(t);
      ref::generate_rows<T>(c.dist, c.seed, c.M, c.H, c.H, reinterpret_cast<T*>(ds->x_host.data()));
    });
    with_host_type(c.wdtype, [&](auto t) {
      using W = decltype(t);
      ref::generate_weight<W>(c.seed, c.H, reinterpret_cast<W*>(ds->w_host.data()));
    });
    const std::int64_t off = layout_offset(c.layout);
    ds->x = GuardedTensor({c.M, c.H, stride, off, xs});
    ds->w = GuardedTensor({1, c.H, c.H, off, ws});
    ds->y = GuardedTensor({c.M, c.H, stride, off, xs});
    ds->rrms = GuardedTensor({c.M, 1, 1, 0, 4});
    ds->x.poison(stream.get());
    ds->w.poison(stream.get());
    ds->x.upload(ds->x_host.data(), stream.get());
    ds->w.upload(ds->w_host.data(), stream.get());
    RB_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    data = std::move(ds);
    return *data;
  }

  const Reference& reference_for(DataSet& ds, double eps, std::int64_t max_elems) {
    for (const Reference& r : ds.refs)
      if (r.eps == eps) return r;
    const Case& c = ds.key;
    Reference r;
    r.eps = eps;
    r.rows = rows_to_check(c.M, c.H, max_elems);
    r.y.resize(r.rows.size() * static_cast<std::size_t>(c.H));
    r.rrms.resize(r.rows.size());
    with_host_type(c.dtype, [&](auto t) {
      using T = decltype(t);
      with_host_type(c.wdtype, [&](auto wt) {
        using W = decltype(wt);
        const T* x = reinterpret_cast<const T*>(ds.x_host.data());
        const W* w = reinterpret_cast<const W*>(ds.w_host.data());
        for (std::size_t i = 0; i < r.rows.size(); ++i)
          r.rrms[i] = ref::rmsnorm_fwd_row<T, W>(x + r.rows[i] * c.H, w, c.H, eps, r.y.data() + i * c.H);
      });
    });
    ds.refs.push_back(std::move(r));
    return ds.refs.back();
  }
};

Runner::Runner(DeviceInfo dev, RunConfig cfg) : dev_(std::move(dev)), cfg_(cfg), impl_(std::make_unique<Impl>(dev_, cfg_.timing.flush)) {}
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
  r.M = c.M;
  r.H = c.H;
  r.stride = c.stride();
  r.layout = std::string(layout_name(c.layout));
  r.eps = c.eps;
  r.dist = std::string(ref::dist_name(c.dist));
  r.seed = c.seed;
  r.bytes = fwd_bytes(c.M, c.H, c.dtype, c.wdtype);
  const Tolerance t = fwd_tolerance(c.dtype);
  r.atol = t.atol;
  r.rtol = t.rtol;
  return r;
}

std::string case_label(const Case& c) {
  return fmt::format("{}/{}/{}/{}/M={}/H={}/{}/{}/eps={}", op_name(c.op), c.kernel, dtype_name(c.dtype),
                     dtype_name(c.wdtype), c.M, c.H, layout_name(c.layout), ref::dist_name(c.dist), c.eps);
}

void append(std::string& s, const std::string& part) {
  if (!s.empty()) s += "; ";
  s += part;
}

// Folds a device scan into the record's failure reason.
void add_scan(const char* what, const GuardScan& g, std::int64_t H, std::string& reason) {
  if (g.unwritten)
    append(reason, fmt::format("{}: {} element(s) never written, first at (row {}, col {})", what, g.unwritten,
                               g.first_unwritten / H, g.first_unwritten % H));
  if (g.nonfinite)
    append(reason, fmt::format("{}: {} NaN/Inf element(s), first at (row {}, col {})", what, g.nonfinite,
                               g.first_nonfinite / H, g.first_nonfinite % H));
  if (g.guard_writes)
    append(reason, fmt::format("{}: {} element(s) written outside the tensor (guard band or row padding), "
                               "first at allocation byte {}",
                               what, g.guard_writes, g.first_guard_write));
}

}  // namespace

Record Runner::run_case(const Case& c) {
  Record rec = base_record(dev_, c);
  const KernelInfo* k = find_kernel(c.kernel);
  if (!k) {
    rec.status = Status::error;
    rec.reason = "unknown kernel " + c.kernel;
    return rec;
  }
  NvtxRange case_range(case_label(c));
  DataSet& ds = impl_->data_for(c);
  const cudaStream_t s = impl_->stream.get();

  FwdArgs a;
  a.x = ds.x.data();
  a.w = ds.w.data();
  a.y = ds.y.data();
  a.rrms = static_cast<float*>(ds.rrms.data());
  a.M = c.M;
  a.H = c.H;
  a.x_stride = c.stride();
  a.y_stride = c.stride();
  a.eps = static_cast<float>(c.eps);
  a.xdtype = c.dtype;
  a.wdtype = c.wdtype;

  if (auto why = check_common(*k, a)) {
    rec.status = Status::skip;
    rec.reason = *why;
    return rec;
  }

  ds.y.poison(s);
  ds.rrms.poison(s);
  LaunchInfo info;
  cudaError_t e;
  {
    NvtxRange launch_range("launch " + case_label(c));
    e = k->launch_fwd(a, s, &info);
  }
  rec.picked = info.picked.empty() ? c.kernel : info.picked;
  if (e != cudaSuccess) {
    cudaGetLastError();  // a launch-configuration error is not sticky: clear it and go on
    rec.status = Status::error;
    rec.reason = "launch failed: " + cuda_error_text(e);
    return rec;
  }
  e = cudaStreamSynchronize(s);
  if (e != cudaSuccess) {
    throw CudaError(e, "kernel failed: " + cuda_error_text(e));
  }

  rec.status = Status::pass;
  if (cfg_.check) {
    std::string reason;
    add_scan("y", scan_guarded(ds.y, elem_kind(c.dtype), s), c.H, reason);
    add_scan("rrms", scan_guarded(ds.rrms, ElemKind::f32, s), 1, reason);

    const Reference& ref = impl_->reference_for(ds, c.eps, cfg_.max_check_elems);
    ErrorStats ys(fwd_tolerance(c.dtype)), rs(rrms_tolerance());
    std::vector<float> rrms_dev(static_cast<std::size_t>(c.M));
    ds.rrms.download(rrms_dev.data());
    with_host_type(c.dtype, [&](auto t) {
      using T = decltype(t);
      std::vector<T> row(static_cast<std::size_t>(c.H));
      for (std::size_t i = 0; i < ref.rows.size(); ++i) {
        const std::int64_t r = ref.rows[i];
        ds.y.download_row(r, row.data());
        const double* yr = ref.y.data() + i * c.H;
        for (std::int64_t col = 0; col < c.H; ++col)
          ys.add(r, col, ref::to_double(row[static_cast<std::size_t>(col)]), yr[col], ref::ulp_at<T>(yr[col]));
        rs.add(r, 0, rrms_dev[static_cast<std::size_t>(r)], ref.rrms[i], ref::ulp_at<float>(ref.rrms[i]));
      }
    });
    rec.rows_checked = static_cast<std::int64_t>(ref.rows.size());
    rec.max_abs_err = ys.max_abs;
    rec.max_rel_err = ys.max_rel;
    rec.max_ulp = ys.max_ulp;
    rec.mismatches = ys.mismatches + rs.mismatches;
    rec.worst_row = ys.worst_row;
    rec.worst_col = ys.worst_col;
    if (ys.mismatches) {
      std::string m = fmt::format("y: {} mismatch(es) in {} checked rows:", ys.mismatches, rec.rows_checked);
      for (const Mismatch& mm : ys.first)
        m += fmt::format(" ({}, {}) got {:.6g} want {:.6g}", mm.row, mm.col, mm.got, mm.ref);
      append(reason, m);
    }
    if (rs.mismatches) {
      std::string m = fmt::format("rrms: {} mismatch(es):", rs.mismatches);
      for (const Mismatch& mm : rs.first) m += fmt::format(" row {} got {:.8g} want {:.8g}", mm.row, mm.got, mm.ref);
      append(reason, m);
      if (ys.mismatches == 0) {
        rec.worst_row = rs.worst_row;
        rec.worst_col = -1;
      }
    }
    if (!reason.empty()) {
      rec.status = Status::fail;
      rec.reason = reason;
    }
  } else {
    rec.reason = "not checked (--no-check)";
  }

  if (cfg_.time) {
    const CopyCeiling& cc = copy_ceiling();
    const LaunchFn launch = [&](cudaStream_t st) {
      const cudaError_t le = k->launch_fwd(a, st, nullptr);
      if (le != cudaSuccess) throw_cuda_error(le, "launch_fwd", __FILE__, __LINE__);
    };
    const SampleStats st = time_cold(launch, impl_->flusher, s, cfg_.timing);
    rec.median_us = st.median_us;
    rec.min_us = st.min_us;
    rec.max_us = st.max_us;
    rec.noise_pct = st.noise_pct;
    rec.samples = st.samples;
    if (c.M <= cfg_.graph_max_rows) rec.graph_us = time_graph(launch, s, cfg_.timing);
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

#include "harness/ops.h"

#include <algorithm>
#include <thread>

#include "harness/host_types.h"
#include "reference/host_dtype.h"
#include "reference/rmsnorm_ref.h"

namespace rb {

namespace {

// Seeds of the op's other inputs, derived from the case seed so each draws its own stream.
constexpr std::uint64_t kResidualSeed = 0x7e51d;
constexpr std::uint64_t kDySeed = 0xd7;
constexpr std::uint64_t kDsSeed = 0xd5;

DType x_of(const Case& c) { return c.dtype; }
DType w_of(const Case& c) { return c.wdtype; }
DType r_of(const Case& c) { return c.rdtype; }
DType f32_of(const Case&) { return DType::f32; }

// Calls f(T{}, W{}, R{}) with the host storage types of a case's x, w and residual dtypes.
template <class F>
void with_case_types(const Case& c, F&& f) {
  with_host_type(c.dtype, [&](auto t) {
    with_host_type(c.wdtype, [&](auto w) { with_host_type(c.rdtype, [&](auto r) { f(t, w, r); }); });
  });
}

// ---- tolerances ----------------------------------------------------------------------------

Tolerance y_tol(const Case& c, double, double) { return fwd_tolerance(c.dtype); }
Tolerance y_base(const Case& c) { return fwd_tolerance(c.dtype); }
Tolerance rrms_tol(const Case&, double, double) { return rrms_tolerance(); }
Tolerance rrms_base(const Case&) { return rrms_tolerance(); }
// residual_out: one fp32 addition and one rounding to the residual dtype.
Tolerance s_tol(const Case& c, double want, double) {
  double ulp = 0;
  with_host_type(c.rdtype, [&](auto t) { ulp = ref::ulp_at<decltype(t)>(want); });
  return {ulp, 0};
}
Tolerance zero_base(const Case&) { return {0, 0}; }
Tolerance dx_tol(const Case& c, double, double scale) { return dx_tolerance(x_read_dtype(c), c.H).at(scale); }
Tolerance dx_base(const Case& c) { return fwd_tolerance(x_read_dtype(c)); }
Tolerance dw_tol(const Case& c, double, double scale) { return dw_tolerance(c.wdtype, c.M).at(scale); }
Tolerance dw_base(const Case& c) {
  const ScaledTolerance t = dw_tolerance(c.wdtype, c.M);
  return {t.atol, t.rtol};
}
Tolerance fwd_csv(const Case& c) { return fwd_tolerance(c.dtype); }
Tolerance bwd_csv(const Case& c) {
  const ScaledTolerance t = dx_tolerance(x_read_dtype(c), c.H);
  return {t.scale_coef, t.rtol};
}

// ---- launch arguments ---------------------------------------------------------------------

void* at(const DevicePointers& p, Tensor t) { return p[static_cast<std::size_t>(t)]; }

LaunchArgs bind_fwd(const Case& c, const DevicePointers& p, std::size_t ws_bytes, void* ws) {
  FwdArgs a = fwd_args_for(problem_of(c));
  a.x = at(p, Tensor::x);
  a.w = at(p, Tensor::w);
  a.y = at(p, Tensor::y);
  a.rrms = static_cast<float*>(at(p, Tensor::rrms));
  a.eps = static_cast<float>(c.eps);
  a.workspace = ws;
  a.workspace_bytes = ws_bytes;
  return a;
}

LaunchArgs bind_add(const Case& c, const DevicePointers& p, std::size_t ws_bytes, void* ws) {
  AddArgs a = add_args_for(problem_of(c));
  a.x = at(p, Tensor::x);
  a.r = at(p, Tensor::r);
  a.w = at(p, Tensor::w);
  a.y = at(p, Tensor::y);
  a.s = at(p, Tensor::s);
  a.rrms = static_cast<float*>(at(p, Tensor::rrms));
  a.eps = static_cast<float>(c.eps);
  a.workspace = ws;
  a.workspace_bytes = ws_bytes;
  return a;
}

LaunchArgs bind_bwd(const Case& c, const DevicePointers& p, std::size_t ws_bytes, void* ws) {
  BwdArgs a = bwd_args_for(problem_of(c));
  a.x = at(p, Tensor::x);
  a.w = at(p, Tensor::w);
  a.dy = at(p, Tensor::dy);
  a.rrms = static_cast<const float*>(at(p, Tensor::saved_rrms));
  a.ds_out = at(p, Tensor::ds_out);  // null for bwd
  a.dx = at(p, Tensor::dx);
  a.dw = at(p, Tensor::dw);
  a.workspace = ws;
  a.workspace_bytes = ws_bytes;
  return a;
}

// ---- fp64 references ----------------------------------------------------------------------

void sized(std::vector<OutputRef>& out, std::size_t n_outputs) { out.assign(n_outputs, OutputRef{}); }

void ref_fwd(const Case& c, const HostInputs& in, const std::vector<double>&, const std::vector<std::int64_t>& rows,
             std::vector<OutputRef>& out) {
  const std::int64_t H = c.H;
  sized(out, 2);
  out[0].want.resize(rows.size() * static_cast<std::size_t>(H));
  out[1].want.resize(rows.size());
  with_case_types(c, [&](auto tt, auto wt, auto) {
    using T = decltype(tt);
    using W = decltype(wt);
    for (std::size_t i = 0; i < rows.size(); ++i)
      out[1].want[i] = ref::rmsnorm_fwd_row<T, W>(in.as<T>(Tensor::x) + rows[i] * H, in.as<W>(Tensor::w), H, c.eps,
                                                  out[0].want.data() + i * H);
  });
}

void ref_add(const Case& c, const HostInputs& in, const std::vector<double>&, const std::vector<std::int64_t>& rows,
             std::vector<OutputRef>& out) {
  const std::int64_t H = c.H;
  const std::size_t n = rows.size() * static_cast<std::size_t>(H);
  sized(out, 3);
  out[0].want.resize(n);
  out[1].want.resize(n);
  out[2].want.resize(rows.size());
  with_case_types(c, [&](auto tt, auto wt, auto rt) {
    using T = decltype(tt);
    using W = decltype(wt);
    using R = decltype(rt);
    for (std::size_t i = 0; i < rows.size(); ++i)
      out[2].want[i] = ref::rmsnorm_add_fwd_row<T, R, W>(
          in.as<T>(Tensor::x) + rows[i] * H, in.as<R>(Tensor::r) + rows[i] * H, in.as<W>(Tensor::w), H, c.eps,
          out[0].want.data() + i * H, out[1].want.data() + i * H);
  });
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
    threads.emplace_back([&, r0, r1] { rows_fn(r0, r1 - r0, ref::BwdOut{nullptr, pw.data(), nullptr, pa.data()}); });
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

// bwd and add-bwd: dx on the checked rows (with its error scale), dw over every row.
void ref_bwd(const Case& c, const HostInputs& in, const std::vector<double>& rrms,
             const std::vector<std::int64_t>& rows, std::vector<OutputRef>& out) {
  const std::int64_t H = c.H;
  const std::size_t n = rows.size() * static_cast<std::size_t>(H);
  sized(out, 2);
  out[0].want.resize(n);
  out[0].scale.resize(n);
  const bool add = c.op == Op::add_bwd;
  with_case_types(c, [&](auto tt, auto wt, auto rt) {
    using T = decltype(tt);
    using W = decltype(wt);
    using R = decltype(rt);
    const W* w = in.as<W>(Tensor::w);
    const T* dy = in.as<T>(Tensor::dy);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const std::int64_t row = rows[i];
      const ref::BwdOut dx_out{out[0].want.data() + i * H, nullptr, out[0].scale.data() + i * H, nullptr};
      const double rr = rrms[static_cast<std::size_t>(row)];
      if (add)
        ref::rmsnorm_add_bwd_row<T, R, W>(in.as<R>(Tensor::x) + row * H, w, dy + row * H,
                                          in.as<R>(Tensor::ds_out) + row * H, H, rr, dx_out);
      else
        ref::rmsnorm_bwd_row<T, W>(in.as<T>(Tensor::x) + row * H, w, dy + row * H, H, rr, dx_out);
    }
    // dw needs every row: fp64 sums over fixed blocks of rows on their own threads, then
    // added in block order (the same result on any machine).
    parallel_row_sums(c.M, H, out[1].want, out[1].scale,
                      [&](std::int64_t r0, std::int64_t m, const ref::BwdOut& part) {
                        if (add)
                          ref::rmsnorm_add_bwd_rows<T, R, W>(in.as<R>(Tensor::x) + r0 * H, w, dy + r0 * H,
                                                             in.as<R>(Tensor::ds_out) + r0 * H, rrms.data() + r0, m,
                                                             H, H, part);
                        else
                          ref::rmsnorm_bwd_rows<T, W>(in.as<T>(Tensor::x) + r0 * H, w, dy + r0 * H, rrms.data() + r0,
                                                      m, H, H, part);
                      });
  });
}

// ---- the descriptions ---------------------------------------------------------------------

const InputDesc kWeight{Tensor::w, Shape::per_column, w_of, Source::weight, std::nullopt, 0};
// dy has a non-zero mean (N(3, 1)): over offset inputs sum(dy * w * x) ~ H, so a missing
// correction term is as large as dx itself (reference/rmsnorm_ref.h).
const InputDesc kDy{Tensor::dy, Shape::matrix, x_of, Source::rows, Dist::offset, kDySeed};
const InputDesc kSavedRrms{Tensor::saved_rrms, Shape::per_row, f32_of, Source::saved_rrms, std::nullopt, 0};
const OutputDesc kRrms{Tensor::rrms, Shape::per_row, f32_of, rrms_tol, rrms_base, false};
const OutputDesc kDw{Tensor::dw, Shape::per_column, w_of, dw_tol, dw_base, true};

std::vector<OpDesc> build_descs() {
  std::vector<OpDesc> d;
  d.push_back({Op::fwd,
               {{Tensor::x, Shape::matrix, x_of, Source::rows, std::nullopt, 0}, kWeight},
               {{Tensor::y, Shape::matrix, x_of, y_tol, y_base, false}, kRrms},
               bind_fwd,
               ref_fwd,
               fwd_csv});
  d.push_back({Op::bwd,
               {{Tensor::x, Shape::matrix, x_of, Source::rows, std::nullopt, 0}, kWeight, kDy, kSavedRrms},
               {{Tensor::dx, Shape::matrix, x_of, dx_tol, dx_base, false}, kDw},
               bind_bwd,
               ref_bwd,
               bwd_csv});
  // The residual stream follows x's distribution from its own seed stream (zero rows stay
  // zero in s = x + r).
  d.push_back({Op::add,
               {{Tensor::x, Shape::matrix, x_of, Source::rows, std::nullopt, 0},
                {Tensor::r, Shape::matrix, r_of, Source::rows, std::nullopt, kResidualSeed},
                kWeight},
               {{Tensor::y, Shape::matrix, x_of, y_tol, y_base, false},
                {Tensor::s, Shape::matrix, r_of, s_tol, zero_base, false},
                kRrms},
               bind_add,
               ref_add,
               fwd_csv});
  // add-bwd reads the saved residual stream s (residual dtype) as x; dx (= dr) is in the
  // residual dtype too, and ds_out is the residual stream's own gradient.
  d.push_back({Op::add_bwd,
               {{Tensor::x, Shape::matrix, r_of, Source::rows, std::nullopt, 0},
                kWeight,
                kDy,
                {Tensor::ds_out, Shape::matrix, r_of, Source::rows, Dist::normal, kDsSeed},
                kSavedRrms},
               {{Tensor::dx, Shape::matrix, r_of, dx_tol, dx_base, false}, kDw},
               bind_bwd,
               ref_bwd,
               bwd_csv});
  return d;
}

std::int64_t elements(Shape s, std::int64_t M, std::int64_t H) {
  switch (s) {
    case Shape::matrix:
      return M * H;
    case Shape::per_column:
      return H;
    case Shape::per_row:
      break;
  }
  return M;
}

}  // namespace

const char* tensor_name(Tensor t) {
  static constexpr std::array<const char*, kTensors> names{"x", "r", "w", "dy", "ds_out", "rrms",
                                                           "y", "residual_out", "rrms", "dx", "dw"};
  return names[static_cast<std::size_t>(t)];
}

const OpDesc& op_desc(Op op) {
  static const std::vector<OpDesc> descs = build_descs();
  for (const OpDesc& d : descs)
    if (d.op == op) return d;
  return descs.front();
}

DType x_read_dtype(const Case& c) { return c.op == Op::add_bwd ? c.rdtype : c.dtype; }

std::int64_t op_bytes(const Case& c) {
  const OpDesc& d = op_desc(c.op);
  std::int64_t bytes = 0;
  for (const InputDesc& in : d.inputs)
    bytes += elements(in.shape, c.M, c.H) * static_cast<std::int64_t>(dtype_size(in.dtype(c)));
  for (const OutputDesc& out : d.outputs)
    bytes += elements(out.shape, c.M, c.H) * static_cast<std::int64_t>(dtype_size(out.dtype(c)));
  return bytes;
}

std::int64_t op_bytes(Op op, std::int64_t M, std::int64_t H, DType x, DType w, DType r) {
  Case c;
  c.op = op;
  c.M = M;
  c.H = H;
  c.dtype = x;
  c.wdtype = w;
  c.rdtype = r;
  return op_bytes(c);
}

Problem problem_of(const Case& c) {
  Problem p = Problem::of(c.op, c.M, c.H, c.dtype, c.wdtype, c.rdtype, c.stride());
  // Every tensor of a case sits at the layout's element offset past a 256-byte boundary.
  // One element past that boundary, a tensor is aligned to its element size.
  if (layout_offset(c.layout) != 0)
    for (DType t : {c.dtype, c.wdtype, c.rdtype})
      p.base_align = std::min<std::int64_t>(p.base_align, static_cast<std::int64_t>(dtype_size(t)));
  return p;
}

}  // namespace rb

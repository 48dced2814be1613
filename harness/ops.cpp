#include "harness/ops.h"

#include <algorithm>
#include <cmath>
#include <thread>
#include <tuple>

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
DType y_of(const Case& c) { return c.ydtype(); }
DType w_of(const Case& c) { return c.wdtype; }
DType r_of(const Case& c) { return c.rdtype; }
DType f32_of(const Case&) { return DType::f32; }

// Calls f(T{}, W{}, R{}) with the host storage types of a case's x, w and residual dtypes.
template <class F>
void with_case_types(const Case& c, F&& f) {
  with_input_host_type(c.dtype, [&](auto t) {
    with_input_host_type(c.wdtype, [&](auto w) { with_input_host_type(c.rdtype, [&](auto r) { f(t, w, r); }); });
  });
}

// ---- tolerances ----------------------------------------------------------------------------

// y: the forward's row for its dtype; one fp8 ulp for an fp8 y; one more ulp of x's dtype
// under llama (validate.h says why).
Tolerance y_base(const Case& c) {
  if (c.conv == Convention::llama) return llama_tolerance(c.dtype, c.ydtype());
  return fwd_tolerance(c.ydtype());
}
Tolerance y_tol(const Case& c, double want, double) {
  if (!c.y8) return y_base(c);
  double ulp = 0;
  with_host_type(*c.y8, [&](auto t) { ulp = ref::ulp_at<decltype(t)>(want); });
  return fp8_tolerance(ulp);
}
// amax = max |y| before the scale, fp32: the fp32 row, or under llama x's dtype's (its y
// carries the rounding of n to x's dtype, which a kernel may place one ulp away).
Tolerance amax_base(const Case& c) { return fwd_tolerance(c.conv == Convention::llama ? c.dtype : DType::f32); }
Tolerance amax_tol(const Case& c, double, double) { return amax_base(c); }
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
Tolerance fwd_csv(const Case& c) { return y_base(c); }
Tolerance bwd_csv(const Case& c) {
  const ScaledTolerance t = dx_tolerance(x_read_dtype(c), c.H);
  return {t.scale_coef, t.rtol};
}

// ---- launch arguments ---------------------------------------------------------------------

void* at(const DevicePointers& p, Tensor t) { return p[static_cast<std::size_t>(t)]; }

// What the two forward ops (fwd, add) bind alike: x, w, y, the saved rrms, fp8 y's scale and
// amax, eps and the workspace.
template <class Args>
Args bind_forward(Args a, const Case& c, const DevicePointers& p, std::size_t ws_bytes, void* ws) {
  a.x = at(p, Tensor::x);
  a.w = at(p, Tensor::w);
  a.y = at(p, Tensor::y);
  a.rrms = static_cast<float*>(at(p, Tensor::rrms));
  a.scale = static_cast<const float*>(at(p, Tensor::scale));
  a.amax = static_cast<float*>(at(p, Tensor::amax));
  a.eps = static_cast<float>(c.eps);
  a.workspace = ws;
  a.workspace_bytes = ws_bytes;
  return a;
}

LaunchArgs bind_fwd(const Case& c, const DevicePointers& p, std::size_t ws_bytes, void* ws) {
  return bind_forward(fwd_args_for(problem_of(c)), c, p, ws_bytes, ws);
}

LaunchArgs bind_add(const Case& c, const DevicePointers& p, std::size_t ws_bytes, void* ws) {
  AddArgs a = bind_forward(add_args_for(problem_of(c)), c, p, ws_bytes, ws);
  a.r = at(p, Tensor::r);
  a.s = at(p, Tensor::s);
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

// Runs fn(first_row, end_row) over fixed blocks of [0, M) on their own threads (16 blocks at
// most, in a fixed partition: results combined in block order do not depend on the machine).
// Returns the number of blocks; fn gets (block, first_row, end_row).
constexpr std::int64_t kRowBlocks = 16;
template <class Fn>
std::int64_t for_row_blocks(std::int64_t M, Fn fn) {
  const std::int64_t blocks = std::max<std::int64_t>(1, std::min(kRowBlocks, M));
  std::vector<std::thread> threads;
  for (std::int64_t b = 0; b < blocks; ++b)
    threads.emplace_back([&fn, b, blocks, M] { fn(b, M * b / blocks, M * (b + 1) / blocks); });
  for (std::thread& t : threads) t.join();
  return blocks;
}

// The checked rows' wanted y of an fp8 output: y * scale (the scale as the kernel reads it,
// fp32), saturated to the format's largest finite value.
void scale_to_fp8(const Case& c, std::vector<double>& y) {
  const double scale = static_cast<float>(c.y_scale);
  const double top = max_finite(*c.y8);
  for (double& v : y) v = std::isnan(v) ? v : std::clamp(v * scale, -top, top);
}

// amax of an fp8 output: max |y| over every row (not only the checked ones), NaN ignored.
// row_y(row, out) writes one row's y (before any output rounding).
template <class RowY>
double amax_over_rows(std::int64_t M, std::int64_t H, RowY row_y) {
  std::vector<double> block_max(kRowBlocks, 0.0);
  for_row_blocks(M, [&](std::int64_t b, std::int64_t r0, std::int64_t r1) {
    std::vector<double> y(static_cast<std::size_t>(H));
    double m = 0;
    for (std::int64_t r = r0; r < r1; ++r) {
      row_y(r, y.data());
      for (double v : y)
        if (std::fabs(v) > m) m = std::fabs(v);
    }
    block_max[static_cast<std::size_t>(b)] = m;
  });
  return *std::max_element(block_max.begin(), block_max.end());
}

void ref_fwd(const Case& c, const HostInputs& in, const std::vector<double>&, const std::vector<std::int64_t>& rows,
             std::vector<OutputRef>& out) {
  const std::int64_t H = c.H;
  sized(out, 3);
  out[0].want.resize(rows.size() * static_cast<std::size_t>(H));
  out[1].want.resize(rows.size());
  with_case_types(c, [&](auto tt, auto wt, auto) {
    using T = decltype(tt);
    using W = decltype(wt);
    const auto row_y = [&](std::int64_t row, double* y) {
      return ref::rmsnorm_fwd_row<T, W>(in.as<T>(Tensor::x) + row * H, in.as<W>(Tensor::w), H, c.eps, y, c.conv);
    };
    for (std::size_t i = 0; i < rows.size(); ++i) out[1].want[i] = row_y(rows[i], out[0].want.data() + i * H);
    if (c.y8) out[2].want = {amax_over_rows(c.M, H, row_y)};
  });
  if (c.y8) scale_to_fp8(c, out[0].want);
}

void ref_add(const Case& c, const HostInputs& in, const std::vector<double>&, const std::vector<std::int64_t>& rows,
             std::vector<OutputRef>& out) {
  const std::int64_t H = c.H;
  const std::size_t n = rows.size() * static_cast<std::size_t>(H);
  sized(out, 4);
  out[0].want.resize(n);
  out[1].want.resize(n);
  out[2].want.resize(rows.size());
  with_case_types(c, [&](auto tt, auto wt, auto rt) {
    using T = decltype(tt);
    using W = decltype(wt);
    using R = decltype(rt);
    const auto row_ys = [&](std::int64_t row, double* y, double* s) {
      return ref::rmsnorm_add_fwd_row<T, R, W>(in.as<T>(Tensor::x) + row * H, in.as<R>(Tensor::r) + row * H,
                                               in.as<W>(Tensor::w), H, c.eps, y, s, c.conv);
    };
    for (std::size_t i = 0; i < rows.size(); ++i)
      out[2].want[i] = row_ys(rows[i], out[0].want.data() + i * H, out[1].want.data() + i * H);
    if (c.y8)
      out[3].want = {amax_over_rows(c.M, H, [&](std::int64_t row, double* y) {
        thread_local std::vector<double> s;  // residual_out of the row, unused here
        s.resize(static_cast<std::size_t>(H));
        row_ys(row, y, s.data());
      })};
  });
  if (c.y8) scale_to_fp8(c, out[0].want);
}

// dw and dw_abs (H each) summed over M rows: rows_fn(first_row, rows, out) writes the sums
// over its rows into out.dw / out.dw_abs. Blocks of rows run on their own threads; their
// sums are added in block order, so the result does not depend on the machine.
template <class RowsFn>
void parallel_row_sums(std::int64_t M, std::int64_t H, std::vector<double>& dw, std::vector<double>& dw_abs,
                       RowsFn rows_fn) {
  const auto h = static_cast<std::size_t>(H);
  std::vector<std::vector<double>> part(2 * std::min(kRowBlocks, std::max<std::int64_t>(M, 1)), std::vector<double>(h));
  const std::int64_t blocks = for_row_blocks(M, [&](std::int64_t b, std::int64_t r0, std::int64_t r1) {
    rows_fn(r0, r1 - r0,
            ref::BwdOut{nullptr, part[static_cast<std::size_t>(2 * b)].data(), nullptr,
                        part[static_cast<std::size_t>(2 * b + 1)].data()});
  });
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
                                          in.as<R>(Tensor::ds_out) + row * H, H, rr, dx_out, c.conv);
      else
        ref::rmsnorm_bwd_row<T, W>(in.as<T>(Tensor::x) + row * H, w, dy + row * H, H, rr, dx_out, c.conv);
    }
    // dw needs every row: fp64 sums over fixed blocks of rows on their own threads, then
    // added in block order (the same result on any machine).
    parallel_row_sums(c.M, H, out[1].want, out[1].scale,
                      [&](std::int64_t r0, std::int64_t m, const ref::BwdOut& part) {
                        if (add)
                          ref::rmsnorm_add_bwd_rows<T, R, W>(in.as<R>(Tensor::x) + r0 * H, w, dy + r0 * H,
                                                             in.as<R>(Tensor::ds_out) + r0 * H, rrms.data() + r0, m,
                                                             H, H, part, c.conv);
                        else
                          ref::rmsnorm_bwd_rows<T, W>(in.as<T>(Tensor::x) + r0 * H, w, dy + r0 * H, rrms.data() + r0,
                                                      m, H, H, part, c.conv);
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
const InputDesc kScale{Tensor::scale, Shape::scalar, f32_of, Source::y_scale, std::nullopt, 0, fp8_only};
const OutputDesc kY{Tensor::y, Shape::matrix, y_of, y_tol, y_base, false};
const OutputDesc kAmax{Tensor::amax, Shape::scalar, f32_of, amax_tol, amax_base, false, fp8_only};

std::vector<OpDesc> build_descs() {
  std::vector<OpDesc> d;
  d.push_back({Op::fwd,
               {{Tensor::x, Shape::matrix, x_of, Source::rows, std::nullopt, 0}, kWeight, kScale},
               {kY, kRrms, kAmax},
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
                kWeight,
                kScale},
               {kY, {Tensor::s, Shape::matrix, r_of, s_tol, zero_base, false}, kRrms, kAmax},
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
      return M;
    case Shape::scalar:
      break;
  }
  return 1;
}

}  // namespace

bool fp8_only(const Case& c) { return c.y8.has_value(); }

const char* tensor_name(Tensor t) {
  static constexpr std::array<const char*, kTensors> names{"x", "r", "w", "dy", "ds_out", "rrms",
                                                           "y", "residual_out", "rrms", "dx", "dw", "scale", "amax"};
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
    if (present(in, c)) bytes += elements(in.shape, c.M, c.H) * static_cast<std::int64_t>(dtype_size(in.dtype(c)));
  for (const OutputDesc& out : d.outputs)
    if (present(out, c)) bytes += elements(out.shape, c.M, c.H) * static_cast<std::int64_t>(dtype_size(out.dtype(c)));
  return bytes;
}

std::int64_t op_bytes(Op op, std::int64_t M, std::int64_t H, DType x, DType w, DType r, std::optional<DType> y8) {
  Case c;
  c.y8 = y8;
  c.op = op;
  c.M = M;
  c.H = H;
  c.dtype = x;
  c.wdtype = w;
  c.rdtype = r;
  return op_bytes(c);
}

std::int64_t elements_of(Shape s, const Case& c) { return elements(s, c.M, c.H); }

std::vector<unsigned char> generate_input(const Case& c, const InputDesc& d) {
  std::vector<unsigned char> host(static_cast<std::size_t>(elements(d.shape, c.M, c.H)) * dtype_size(d.dtype(c)));
  if (d.source == Source::saved_rrms) return host;  // per eps: saved_rrms_of
  with_input_host_type(d.dtype(c), [&](auto t) {
    using T = decltype(t);
    T* p = reinterpret_cast<T*>(host.data());
    if (d.source == Source::weight)
      ref::generate_weight<T>(c.seed, c.H, p, has_weight_offset(c.conv));
    else if (d.source == Source::y_scale)
      *p = static_cast<T>(static_cast<float>(c.y_scale));
    else
      ref::generate_rows<T>(d.dist.value_or(c.dist), c.seed + d.seed_offset, c.M, c.H, c.H, p);
  });
  return host;
}

std::vector<float> saved_rrms_of(const Case& c, const void* x, double eps) {
  std::vector<float> rrms(static_cast<std::size_t>(c.M));
  with_input_host_type(x_read_dtype(c), [&](auto t) {
    using X = decltype(t);
    const X* xs = static_cast<const X*>(x);
    for (std::int64_t i = 0; i < c.M; ++i)
      rrms[static_cast<std::size_t>(i)] = static_cast<float>(ref::rrms_row<X>(xs + i * c.H, c.H, eps));
  });
  return rrms;
}

std::vector<OutputRef> reference_all_rows(const Case& c, const HostInputs& in, const std::vector<float>& saved_rrms) {
  std::vector<std::int64_t> rows(static_cast<std::size_t>(c.M));
  for (std::int64_t i = 0; i < c.M; ++i) rows[static_cast<std::size_t>(i)] = i;
  std::vector<OutputRef> out;
  op_desc(c.op).reference(c, in, std::vector<double>(saved_rrms.begin(), saved_rrms.end()), rows, out);
  return out;
}

Problem problem_of(const Case& c) {
  Problem p = Problem::of(c.op, c.M, c.H, c.dtype, c.wdtype, c.rdtype, c.stride(), 16, c.conv, c.ydtype());
  // Every tensor of a case sits at the layout's element offset past a 256-byte boundary.
  // One element past that boundary, a tensor is aligned to its element size.
  if (layout_offset(c.layout) != 0)
    for (DType t : {c.dtype, c.wdtype, c.rdtype, c.ydtype()})
      p.base_align = std::min<std::int64_t>(p.base_align, static_cast<std::int64_t>(dtype_size(t)));
  return p;
}

bool same_problem(const Problem& a, const Problem& b) {
  return std::tie(a.op, a.M, a.H, a.stride, a.x, a.w, a.r, a.base_align, a.conv, a.y) ==
         std::tie(b.op, b.M, b.H, b.stride, b.x, b.w, b.r, b.base_align, b.conv, b.y);
}

}  // namespace rb

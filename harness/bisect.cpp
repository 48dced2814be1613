#include "harness/bisect.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "harness/host_types.h"
#include "harness/validate.h"
#include "reference/host_dtype.h"
#include "reference/rmsnorm_ref.h"

namespace rb {

std::string BisectSide::label() const { return fmt::format("{} ({})", kernel, convention_name(conv)); }

const std::array<const char*, UlpHistogram::kBuckets>& UlpHistogram::labels() {
  static const std::array<const char*, kBuckets> l{"0", "1", "2", "3-4", "5-8", "9-16", "17-64", "65-256", "257-4096", ">4096"};
  return l;
}

void UlpHistogram::add(std::uint64_t u) {
  static constexpr std::uint64_t kTop[kBuckets - 1] = {0, 1, 2, 4, 8, 16, 64, 256, 4096};
  std::size_t b = 0;
  while (b < kBuckets - 1 && u > kTop[b]) ++b;
  ++counts[b];
  ++total;
  max = std::max(max, u);
}

std::uint64_t ulp_distance(DType t, std::uint32_t a, std::uint32_t b) {
  const int width = static_cast<int>(8 * dtype_size(t));
  const std::uint32_t sign = 1u << (width - 1);
  const auto ordinal = [&](std::uint32_t bits) {
    const std::int64_t mag = static_cast<std::int64_t>(bits & (sign - 1));
    return (bits & sign) ? -mag : mag;  // +0 and -0 both 0
  };
  const std::int64_t d = ordinal(a) - ordinal(b);
  return static_cast<std::uint64_t>(d < 0 ? -d : d);
}

const char* stage_name(Stage s) {
  switch (s) {
    case Stage::none: return "none (they agree within the tolerance)";
    case Stage::residual_sum: return "residual sum";
    case Stage::rrms: return "sum of squares / rrms";
    case Stage::tail: return "tail columns";
    case Stage::normalised: return "normalised value";
    case Stage::weight: return "weight product";
    case Stage::final_rounding: return "final rounding";
    case Stage::dx: return "dx";
    case Stage::dw: return "dw (column reduction)";
    case Stage::unattributed: break;
  }
  return "unattributed";
}

void add_outside_writes(BisectResult& r, const std::map<Tensor, std::int64_t>& a,
                        const std::map<Tensor, std::int64_t>& b) {
  std::string what;
  for (const auto& [side, m] : {std::pair<const char*, const std::map<Tensor, std::int64_t>*>{"A", &a}, {"B", &b}})
    for (const auto& [t, n] : *m)
      if (n > 0)
        what += fmt::format("{}{} wrote {} element(s) outside {} (past a row's end, into row padding or the "
                            "guard band)",
                            what.empty() ? "" : "; ", side, n, tensor_name(t));
  if (what.empty()) return;
  r.diverge = true;
  if (r.stage == Stage::none || r.stage == Stage::tail || r.stage == Stage::final_rounding) {
    r.stage_detail = what + (r.stage == Stage::tail ? "; " + r.stage_detail : std::string());
    r.stage = Stage::tail;
  } else {
    r.stage_detail += "; " + what;
  }
}

Case side_case(const Case& base, const BisectSide& side) {
  Case c = base;
  c.kernel = side.kernel;
  c.conv = side.conv;
  return c;
}

namespace {

// v correctly rounded to storage type T (the exact value of the rounding converts exactly).
template <class T>
T to_storage(double v) {
  return ref::from_float<T>(static_cast<float>(ref::round_to<T>(v)));
}

struct Dims {
  std::int64_t rows = 1, cols = 1;
};

Dims dims_of(Shape s, const Case& c) {
  switch (s) {
    case Shape::matrix: return {c.M, c.H};
    case Shape::per_column: return {1, c.H};
    case Shape::per_row: return {c.M, 1};
    case Shape::scalar: break;
  }
  return {1, 1};
}

double decode(DType t, const unsigned char* p) {
  return with_host_type(t, [&](auto v) {
    using T = decltype(v);
    T x;
    std::memcpy(&x, p, sizeof(T));
    return ref::to_double(x);
  });
}

std::uint32_t bits_at(DType t, const unsigned char* p) {
  std::uint32_t b = 0;
  std::memcpy(&b, p, dtype_size(t));  // little-endian host
  return b;
}

// The correctly rounded values of `want` in dtype t, packed.
std::vector<unsigned char> encode_rounded(DType t, const std::vector<double>& want) {
  const std::size_t es = dtype_size(t);
  std::vector<unsigned char> out(want.size() * es);
  with_host_type(t, [&](auto v) {
    using T = decltype(v);
    for (std::size_t i = 0; i < want.size(); ++i) {
      const T x = to_storage<T>(want[i]);
      std::memcpy(out.data() + i * es, &x, es);
    }
  });
  return out;
}

HostInputs host_inputs_of(const TensorBytes& in) {
  HostInputs h;
  for (const auto& [t, bytes] : in) h.data[static_cast<std::size_t>(t)] = bytes.data();
  return h;
}

std::vector<float> saved_of(const TensorBytes& in) {
  const auto it = in.find(Tensor::saved_rrms);
  if (it == in.end()) return {};
  std::vector<float> v(it->second.size() / sizeof(float));
  std::memcpy(v.data(), it->second.data(), v.size() * sizeof(float));
  return v;
}

const std::vector<unsigned char>* find(const TensorBytes& m, Tensor t) {
  const auto it = m.find(t);
  return it == m.end() ? nullptr : &it->second;
}

// The row's inputs as doubles: x (add: s = x + r exactly; add-bwd: the saved s).
std::vector<double> row_values(const Case& c, const TensorBytes& in, std::int64_t row) {
  std::vector<double> v(static_cast<std::size_t>(c.H));
  const DType xt = x_read_dtype(c);
  const std::size_t es = dtype_size(xt);
  const auto& x = in.at(Tensor::x);
  for (std::int64_t j = 0; j < c.H; ++j)
    v[static_cast<std::size_t>(j)] = decode(xt, x.data() + static_cast<std::size_t>(row * c.H + j) * es);
  if (c.op == Op::add) {
    const auto& r = in.at(Tensor::r);
    const std::size_t rs = dtype_size(c.rdtype);
    for (std::int64_t j = 0; j < c.H; ++j)
      v[static_cast<std::size_t>(j)] += decode(c.rdtype, r.data() + static_cast<std::size_t>(row * c.H + j) * rs);
  }
  return v;
}

double rrms_of(const double* v, std::int64_t n, std::int64_t H_denominator, double eps) {
  double s = 0;
  for (std::int64_t i = 0; i < n; ++i) s += v[i] * v[i];
  return 1.0 / std::sqrt(s / static_cast<double>(H_denominator) + eps);
}

// The fp64 reference of a case under each convention, computed once per convention (the
// sides of a bisect and the convention replay share them: same data, other conventions).
class ReferenceByConvention {
 public:
  ReferenceByConvention(const Case& c, const TensorBytes& inputs) : c_(c), inputs_(inputs) {}
  const std::vector<OutputRef>& operator()(Convention conv) {
    auto it = refs_.find(conv);
    if (it == refs_.end()) {
      Case cc = c_;
      cc.conv = conv;
      it = refs_.emplace(conv, reference_all_rows(cc, inputs_)).first;
    }
    return it->second;
  }

 private:
  Case c_;
  const TensorBytes& inputs_;
  std::map<Convention, std::vector<OutputRef>> refs_;
};

std::vector<ConventionFit> fits(const Case& c, ReferenceByConvention& refs, const TensorBytes& out, Tensor main) {
  std::vector<ConventionFit> v;
  const std::vector<unsigned char>* got = find(out, main);
  if (!got) return v;
  const DType t = op_desc(c.op).outputs[0].dtype(c);
  const std::size_t es = dtype_size(t);
  for (Convention conv : all_of<Convention>()) {
    const std::vector<unsigned char> want = encode_rounded(t, refs(conv)[0].want);
    const std::size_t n = std::min(got->size(), want.size()) / es;
    std::size_t exact = 0;
    std::uint64_t mx = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t u = ulp_distance(t, bits_at(t, got->data() + i * es), bits_at(t, want.data() + i * es));
      exact += u == 0;
      mx = std::max(mx, u);
    }
    v.push_back({conv, n ? static_cast<double>(exact) / static_cast<double>(n) : 0.0, mx});
  }
  std::stable_sort(v.begin(), v.end(), [](const ConventionFit& a, const ConventionFit& b) {
    return a.exact_fraction != b.exact_fraction ? a.exact_fraction > b.exact_fraction : a.max_ulp < b.max_ulp;
  });
  return v;
}

// Columns of the row's tail and of its spill into the next row: the last (H mod V) columns
// (V when H is a multiple of V) and the first V - (H mod V) columns, for V = 8 (the widest
// vector of a 16-bit row), where a kernel that loads or stores whole vectors past H errs.
bool in_tail(std::int64_t col, std::int64_t H) {
  constexpr std::int64_t V = 8;
  const std::int64_t rem = H % V;
  if (col >= H - (rem == 0 ? V : rem)) return true;
  return rem != 0 && col < V - rem;
}

// The main output's tolerance at element k, as the validator sets it for case c.
Tolerance od_tol(const OpDesc& d, const Case& c, double want, const OutputRef& ref, std::size_t k) {
  return d.outputs[0].tolerance(c, want, ref.scale.empty() ? 0.0 : ref.scale[k]);
}

}  // namespace

std::vector<OutputRef> reference_all_rows(const Case& c, const TensorBytes& inputs) {
  return reference_all_rows(c, host_inputs_of(inputs), saved_of(inputs));
}

TensorBytes rounded_outputs(const Case& c, const std::vector<OutputRef>& ref) {
  const OpDesc& d = op_desc(c.op);
  TensorBytes out;
  for (std::size_t i = 0; i < d.outputs.size(); ++i)
    if (present(d.outputs[i], c)) out[d.outputs[i].tensor] = encode_rounded(d.outputs[i].dtype(c), ref[i].want);
  return out;
}

TensorBytes reference_outputs(const Case& c, const TensorBytes& inputs) {
  return rounded_outputs(c, reference_all_rows(c, inputs));
}

BisectResult bisect_outputs(const Case& a, const BisectSide& side_a, const Case& b, const BisectSide& side_b,
                            const TensorBytes& inputs, const TensorBytes& out_a, const TensorBytes& out_b) {
  BisectResult r;
  r.a = a;
  r.b = b;
  r.side_a = side_a;
  r.side_b = side_b;
  const OpDesc& d = op_desc(a.op);
  ReferenceByConvention refs(a, inputs);
  const std::vector<OutputRef>& ref_a = refs(a.conv);
  const std::vector<OutputRef>& ref_b = refs(b.conv);
  const TensorBytes rounded_a = rounded_outputs(a, ref_a);
  const TensorBytes rounded_b = rounded_outputs(b, ref_b);

  std::map<Tensor, std::int64_t> divergent_by_tensor;
  std::vector<std::int64_t> divergent_rows_main(static_cast<std::size_t>(a.M), 0);
  for (std::size_t i = 0; i < d.outputs.size(); ++i) {
    const OutputDesc& od = d.outputs[i];
    if (!present(od, a)) continue;
    const std::vector<unsigned char>* ga = find(out_a, od.tensor);
    const std::vector<unsigned char>* gb = find(out_b, od.tensor);
    if (!ga || !gb) continue;
    const DType t = od.dtype(a);
    const std::size_t es = dtype_size(t);
    const Dims dm = dims_of(od.shape, a);
    OutputBisect ob;
    ob.tensor = od.tensor;
    ob.dtype = t;
    const std::vector<unsigned char>& ra = rounded_a.at(od.tensor);
    const std::vector<unsigned char>& rb = rounded_b.at(od.tensor);
    const std::size_t n = static_cast<std::size_t>(dm.rows * dm.cols);
    double local_worst = -1;
    for (std::size_t k = 0; k < n && (k + 1) * es <= std::min(ga->size(), gb->size()); ++k) {
      const unsigned char* pa = ga->data() + k * es;
      const unsigned char* pb = gb->data() + k * es;
      const double va = decode(t, pa), vb = decode(t, pb);
      const auto hist = [&](UlpHistogram& h, const unsigned char* p, const unsigned char* q, double x, double y) {
        if (std::isnan(x) != std::isnan(y))
          ++h.nan, ++h.total;
        else if (std::isnan(x))
          h.add(0);
        else
          h.add(ulp_distance(t, bits_at(t, p), bits_at(t, q)));
      };
      hist(ob.a_vs_b, pa, pb, va, vb);
      hist(ob.a_vs_ref, pa, ra.data() + k * es, va, decode(t, ra.data() + k * es));
      hist(ob.b_vs_ref, pb, rb.data() + k * es, vb, decode(t, rb.data() + k * es));
      // Divergence: A outside the tolerance around B (B's exact value where B is the
      // reference), as the validator judges a kernel against the reference.
      const double want = side_b.is_reference() ? ref_b[i].want[k] : vb;
      const double scale = ref_b[i].scale.empty() ? 0.0 : ref_b[i].scale[k];
      const Tolerance tol = od.tolerance(b, want, scale);
      if (within_tolerance(va, want, tol)) continue;
      const std::int64_t row = od.shape == Shape::per_column || od.shape == Shape::scalar ? -1 : static_cast<std::int64_t>(k) / dm.cols;
      const std::int64_t col = static_cast<std::int64_t>(k) % dm.cols;
      BisectElement e{row, col, va, vb, ref_a[i].want[k], ulp_distance(t, bits_at(t, pa), bits_at(t, pb))};
      if (std::isnan(va) != std::isnan(vb)) e.ulps = std::numeric_limits<std::uint64_t>::max();
      if (ob.divergent++ == 0) ob.first = e;
      const double bound = tol.atol + tol.rtol * std::fabs(want);
      const double ratio = std::isfinite(va) ? std::fabs(va - want) / (bound > 0 ? bound : 1e-300) : std::numeric_limits<double>::infinity();
      if (ratio > local_worst) local_worst = ratio, ob.worst = e;
      if (i == 0 && row >= 0) ++divergent_rows_main[static_cast<std::size_t>(row)];
    }
    divergent_by_tensor[od.tensor] = ob.divergent;
    r.diverge = r.diverge || ob.divergent > 0;
    r.outputs.push_back(ob);
  }

  // Row statistics of the first and the worst divergent row of the first output that diverges.
  const auto row_stats = [&](std::int64_t row) {
    RowStats s;
    s.row = row;
    if (row < 0 || row >= a.M) return s;
    const std::vector<double> v = row_values(a, inputs, row);
    double sq = 0;
    for (std::int64_t j = 0; j < a.H; ++j) {
      const double x = v[static_cast<std::size_t>(j)];
      sq += x * x;
      if (std::fabs(x) > s.max_abs_x) s.max_abs_x = std::fabs(x), s.argmax_x = j;
    }
    s.mean_square = sq / static_cast<double>(a.H);
    s.rrms_exact = rrms_of(v.data(), a.H, a.H, a.eps);
    if (const auto* ra = find(out_a, Tensor::rrms)) s.rrms_a = decode(DType::f32, ra->data() + row * 4);
    if (const auto* rb = find(out_b, Tensor::rrms)) s.rrms_b = decode(DType::f32, rb->data() + row * 4);
    s.divergent = divergent_rows_main[static_cast<std::size_t>(row)];
    return s;
  };
  for (const OutputBisect& ob : r.outputs)
    if (ob.divergent) {
      if (ob.first.row >= 0) r.first_row = row_stats(ob.first.row);
      if (ob.worst.row >= 0) r.worst_row = row_stats(ob.worst.row);
      break;
    }

  const Tensor main = d.outputs[0].tensor;
  r.fit_a = side_a.is_reference() ? std::vector<ConventionFit>{} : fits(a, refs, out_a, main);
  r.fit_b = side_b.is_reference() ? std::vector<ConventionFit>{} : fits(b, refs, out_b, main);
  const Convention best_a = r.fit_a.empty() ? side_a.conv : r.fit_a.front().conv;
  const Convention best_b = r.fit_b.empty() ? side_b.conv : r.fit_b.front().conv;

  // ---- the stage -------------------------------------------------------------------------
  const auto diverges = [&](Tensor t) { return divergent_by_tensor.count(t) && divergent_by_tensor[t] > 0; };
  if (!r.diverge) {
    r.stage = Stage::none;
    return r;
  }
  if (is_backward(a.op)) {
    if (diverges(Tensor::dx) && best_a != best_b && (has_weight_offset(best_a) || has_weight_offset(best_b))) {
      r.stage = Stage::weight;
      r.stage_detail = fmt::format("dx is reproduced by the {} convention for A and {} for B: they multiply dy by "
                                   "a different weight (1 + w or w)",
                                   convention_name(best_a), convention_name(best_b));
    } else if (diverges(Tensor::dx)) {
      r.stage = Stage::dx;
      r.stage_detail = "dx diverges; dw is checked on its own";
    } else {
      r.stage = Stage::dw;
      r.stage_detail = "dx agrees; dw (the reduction over rows) diverges";
    }
    return r;
  }
  if (diverges(Tensor::s)) {
    r.stage = Stage::residual_sum;
    r.stage_detail = "residual_out s = x + r differs: the sum itself";
    return r;
  }
  if (diverges(Tensor::rrms)) {
    const std::vector<unsigned char>& ra = out_a.at(Tensor::rrms);
    const std::vector<unsigned char>& rb = out_b.at(Tensor::rrms);
    const Tolerance tol = rrms_tolerance();
    std::int64_t rows = 0, tail_rows = 0, rounded_s_rows = 0;
    std::string tail_note;
    for (std::int64_t row = 0; row < a.M; ++row) {
      const double va = decode(DType::f32, ra.data() + row * 4), vb = decode(DType::f32, rb.data() + row * 4);
      if (within_tolerance(va, vb, tol)) continue;
      ++rows;
      std::vector<double> v = row_values(a, inputs, row);
      if (a.op == Op::add) {
        // Is A's (or B's) rrms that of s rounded to the residual dtype before squaring?
        std::vector<double> sr(v);
        with_input_host_type(a.rdtype, [&](auto t) {
          for (double& e : sr) e = ref::to_double(to_storage<decltype(t)>(e));
        });
        const double exact = rrms_of(v.data(), a.H, a.H, a.eps), rounded = rrms_of(sr.data(), a.H, a.H, a.eps);
        if ((within_tolerance(va, rounded, tol) && within_tolerance(vb, exact, tol)) ||
            (within_tolerance(vb, rounded, tol) && within_tolerance(va, exact, tol)))
          ++rounded_s_rows;
      }
      // Is A's rrms that of the row with its tail cut short, or run past H into the next row?
      std::vector<double> ext(v);
      if (row + 1 < a.M) {
        const std::vector<double> next = row_values(a, inputs, row + 1);
        ext.insert(ext.end(), next.begin(), next.begin() + std::min<std::int64_t>(16, a.H));
      }
      for (std::int64_t k = -std::min<std::int64_t>(16, a.H - 1); k <= 16; ++k) {
        if (k == 0 || a.H + k > static_cast<std::int64_t>(ext.size())) continue;
        const double cand = rrms_of(ext.data(), a.H + k, a.H, a.eps);
        const double cand_padded = rrms_of(ext.data(), a.H + k, a.H + k, a.eps);
        if (within_tolerance(va, cand, tol) || within_tolerance(va, cand_padded, tol)) {
          ++tail_rows;
          if (tail_note.empty())
            tail_note = fmt::format("row {}: A's rrms {:.9g} is the rrms over {} columns ({} H), not over H = {} ({:.9g})",
                                    row, va, a.H + k, k > 0 ? "reading past" : "stopping short of", a.H,
                                    rrms_of(v.data(), a.H, a.H, a.eps));
          break;
        }
      }
    }
    if (a.op == Op::add && rounded_s_rows == rows) {
      r.stage = Stage::residual_sum;
      r.stage_detail = fmt::format("in all {} rows whose rrms differ, one side squares s rounded to {} and the other "
                                   "the unrounded sum",
                                   rows, dtype_name(a.rdtype));
    } else if (tail_rows > 0 && tail_rows * 2 >= rows) {
      r.stage = Stage::tail;
      r.stage_detail = fmt::format("{} of {} rows whose rrms differ: {}", tail_rows, rows, tail_note);
    } else {
      r.stage = Stage::rrms;
      r.stage_detail = fmt::format("the saved rrms differ in {} of {} rows", rows, a.M);
    }
    return r;
  }
  // rrms agree: the main output.
  const OutputBisect& y = r.outputs.front();
  if (best_a != best_b && (r.fit_a.empty() || r.fit_a.front().exact_fraction >= 0.5) &&
      (r.fit_b.empty() || r.fit_b.front().exact_fraction >= 0.5)) {
    const bool offset = has_weight_offset(best_a) != has_weight_offset(best_b) ||
                        (has_weight_offset(best_a) && best_a != best_b);
    r.stage = offset ? Stage::weight : Stage::normalised;
    r.stage_detail = fmt::format(
        "A is reproduced by the {} convention, B by {}: {}", convention_name(best_a), convention_name(best_b),
        offset ? "they multiply by a different weight (1 + w, rounded in fp32 or in w's dtype, or w itself)"
               : "one rounds x * rrms to x's dtype before the weight (llama), the other does not");
    return r;
  }
  // Locality: every divergent element of y in the tail columns (or their spill into the
  // next row), at an H wide enough for a tail to be told from the body.
  bool all_tail = a.H >= 16;
  std::int64_t weight_off = 0, checked = 0;
  std::string weight_note;
  const std::vector<unsigned char>& ya = out_a.at(main);
  const DType yt = d.outputs[0].dtype(a);
  const std::size_t yes = dtype_size(yt);
  // The weight A's convention multiplies by (the reference's), per column.
  std::vector<double> w_eff;
  if (const std::vector<unsigned char>* w = find(inputs, Tensor::w)) {
    w_eff.resize(static_cast<std::size_t>(a.H));
    with_input_host_type(a.wdtype, [&](auto t) {
      using W = decltype(t);
      ref::effective_weight_row<W>(reinterpret_cast<const W*>(w->data()), a.H, a.conv, w_eff.data());
    });
  }
  const std::vector<unsigned char>* rr_a = find(out_a, Tensor::rrms);
  const double scale = a.y8 ? static_cast<float>(a.y_scale) : 1.0;
  for (std::int64_t row = 0; row < a.M && (all_tail || checked < 4096); ++row) {
    if (!divergent_rows_main[static_cast<std::size_t>(row)]) continue;
    const std::vector<double> v = row_values(a, inputs, row);
    const double rr = rr_a ? decode(DType::f32, rr_a->data() + row * 4) : rrms_of(v.data(), a.H, a.H, a.eps);
    for (std::int64_t col = 0; col < a.H; ++col) {
      const std::size_t k = static_cast<std::size_t>(row * a.H + col);
      const double va = decode(yt, ya.data() + k * yes);
      const double want = side_b.is_reference() ? ref_b[0].want[k] : decode(yt, out_b.at(main).data() + k * yes);
      if (within_tolerance(va, want, od_tol(d, b, want, ref_b[0], k))) continue;
      if (!in_tail(col, a.H)) all_tail = false;
      // The weight A's value implies, against the one its convention uses.
      const double n = v[static_cast<std::size_t>(col)] * rr;
      if (w_eff.empty() || std::fabs(n) < 1e-3 || !std::isfinite(va)) continue;
      ++checked;
      const double w_used = w_eff[static_cast<std::size_t>(col)];
      const double w_hat = va / scale / n;
      const double slack = 4 * std::ldexp(1.0, -mantissa_bits(yt)) * std::max(1.0, std::fabs(w_used));
      if (std::fabs(w_hat - w_used) > slack + 2 * std::fabs(w_used) * std::ldexp(1.0, -mantissa_bits(x_read_dtype(a)))) {
        if (weight_off++ == 0)
          weight_note = fmt::format("(row {}, col {}): A's y / (x * rrms) = {:.6g}, the weight there is {:.6g}", row,
                                    col, w_hat, w_used);
      }
    }
  }
  if (all_tail) {
    r.stage = Stage::tail;
    r.stage_detail = fmt::format("all {} divergent elements of {} lie in the row's last {} columns or the first "
                                 "columns past the previous row's end",
                                 y.divergent, tensor_name(main), a.H % 8 == 0 ? 8 : a.H % 8);
  } else if (checked > 0 && weight_off * 2 >= checked) {
    r.stage = Stage::weight;
    r.stage_detail = fmt::format("{} of {} divergent elements imply a different weight: {}", weight_off, checked,
                                 weight_note);
  } else if (y.a_vs_b.max <= 2) {
    r.stage = Stage::final_rounding;
    r.stage_detail = fmt::format("rrms and the weight agree; {} elements differ by at most {} ulp", y.divergent,
                                 y.a_vs_b.max);
  } else {
    r.stage = Stage::unattributed;
    r.stage_detail = "rrms agree, and neither a convention, the tail nor the weight explains the difference";
  }
  return r;
}

}  // namespace rb

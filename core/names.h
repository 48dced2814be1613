// The vocabulary of a case, in one place: element types, ops, memory layouts and input
// distributions, each with its name and parsing, from one table per enum. Below every
// layer (kernels/, reference/, harness/, app/ and reports/ read it), plain C++ and
// header-only, so reference/ shares the names without including kernels/.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rb {

// e4m3 and e5m2 (OCP fp8) are output dtypes only: y of fwd and add under a per-tensor scale
// (y8 = saturate(round(y * scale)), types.h). No op reads them.
enum class DType { f32, f16, bf16, e4m3, e5m2 };

// fwd: y = rmsnorm(x) * w.  bwd: dx, dw from x, w, dy and the saved rrms.
// add: s = x + r, y = rmsnorm(s) * w, s written back (the residual stream).
// add_bwd: the backward of add, with the residual stream's own gradient ds_out.
enum class Op { fwd, bwd, add, add_bwd };

// How a case's 2-D tensors sit in memory (harness/case.h: their strides and offsets).
enum class Layout { contiguous, strided, misaligned, skewed };

// The input distributions (reference/generate.h: what each draws).
enum class Dist { normal, large, tiny, offset, outlier, zero_row };

// Names<E>::table: every value of E with its name, in listing order.
template <class E>
struct Names;

template <>
struct Names<DType> {
  static constexpr std::array<std::pair<DType, std::string_view>, 5> table{{{DType::f32, "fp32"},
                                                                            {DType::f16, "fp16"},
                                                                            {DType::bf16, "bf16"},
                                                                            {DType::e4m3, "e4m3"},
                                                                            {DType::e5m2, "e5m2"}}};
};

// Where a forward rounds, and whether the weight carries an offset. Every op has one (the
// backward's formulas see only its effective weight). The fp64 reference models each as
// exact math plus the named roundings (reference/rmsnorm_ref.h); README "Conventions" names
// the code each follows.
//   fp32           y = round_Y(x * rrms * w): one rounding, at the output
//   llama          n = round_X(x * rrms), y = round_Y(round_{X*W}(n * w)); add: s rounded to
//                  the residual dtype before it is squared
//   gemma          y = round_Y(x * rrms * round_f32(1 + w)): the offset in fp32
//   zero_centered  y = round_Y(x * rrms * round_W(1 + w)): the offset in w's dtype
enum class Convention { fp32, llama, gemma, zero_centered };

template <>
struct Names<Convention> {
  static constexpr std::array<std::pair<Convention, std::string_view>, 4> table{
      {{Convention::fp32, "fp32"},
       {Convention::llama, "llama"},
       {Convention::gemma, "gemma"},
       {Convention::zero_centered, "zero-centered"}}};
};

template <>
struct Names<Op> {
  static constexpr std::array<std::pair<Op, std::string_view>, 4> table{
      {{Op::fwd, "fwd"}, {Op::bwd, "bwd"}, {Op::add, "add"}, {Op::add_bwd, "add-bwd"}}};
};

template <>
struct Names<Layout> {
  static constexpr std::array<std::pair<Layout, std::string_view>, 4> table{{{Layout::contiguous, "contiguous"},
                                                                            {Layout::strided, "strided"},
                                                                            {Layout::misaligned, "misaligned"},
                                                                            {Layout::skewed, "skewed"}}};
};

template <>
struct Names<Dist> {
  static constexpr std::array<std::pair<Dist, std::string_view>, 6> table{{{Dist::normal, "normal"},
                                                                           {Dist::large, "large"},
                                                                           {Dist::tiny, "tiny"},
                                                                           {Dist::offset, "offset"},
                                                                           {Dist::outlier, "outlier"},
                                                                           {Dist::zero_row, "zero-row"}}};
};

template <class E>
constexpr std::string_view name_of(E e) {
  for (const auto& [value, name] : Names<E>::table)
    if (value == e) return name;
  return "?";
}

template <class E>
constexpr std::optional<E> parse_name(std::string_view s) {
  for (const auto& [value, name] : Names<E>::table)
    if (name == s) return value;
  return std::nullopt;
}

// Every value of E, in listing order.
template <class E>
const std::vector<E>& all_of() {
  static const std::vector<E> all = [] {
    std::vector<E> v;
    for (const auto& entry : Names<E>::table) v.push_back(entry.first);
    return v;
  }();
  return all;
}

// Every name of E, in listing order (what an option accepts).
template <class E>
std::vector<std::string> all_names() {
  std::vector<std::string> v;
  for (const auto& entry : Names<E>::table) v.emplace_back(entry.second);
  return v;
}

// The names each layer has always called.
inline constexpr std::string_view dtype_name(DType t) { return name_of(t); }
inline constexpr std::optional<DType> parse_dtype(std::string_view s) { return parse_name<DType>(s); }
inline constexpr std::string_view op_name(Op op) { return name_of(op); }
inline constexpr std::optional<Op> parse_op(std::string_view s) { return parse_name<Op>(s); }
inline constexpr std::string_view layout_name(Layout l) { return name_of(l); }
inline constexpr std::optional<Layout> parse_layout(std::string_view s) { return parse_name<Layout>(s); }
inline const std::vector<Layout>& all_layouts() { return all_of<Layout>(); }
inline constexpr std::string_view dist_name(Dist d) { return name_of(d); }
inline constexpr std::optional<Dist> parse_dist(std::string_view s) { return parse_name<Dist>(s); }
inline const std::vector<Dist>& all_dists() { return all_of<Dist>(); }

inline constexpr std::string_view convention_name(Convention c) { return name_of(c); }
inline constexpr std::optional<Convention> parse_convention(std::string_view s) { return parse_name<Convention>(s); }

inline constexpr bool is_fp8(DType t) { return t == DType::e4m3 || t == DType::e5m2; }
inline constexpr std::size_t dtype_size(DType t) { return t == DType::f32 ? 4 : is_fp8(t) ? 1 : 2; }
// Stored mantissa bits (the implicit one excluded).
inline constexpr int mantissa_bits(DType t) {
  switch (t) {
    case DType::f32: return 23;
    case DType::f16: return 10;
    case DType::bf16: return 7;
    case DType::e4m3: return 3;
    case DType::e5m2: return 2;
  }
  return 0;
}
// The largest finite value (an fp8 y saturates to it).
inline constexpr double max_finite(DType t) {
  switch (t) {
    case DType::f32: return 3.4028234663852886e38;
    case DType::f16: return 65504.0;
    case DType::bf16: return 3.3895313892515355e38;
    case DType::e4m3: return 448.0;
    case DType::e5m2: return 57344.0;
  }
  return 0;
}
// The dtypes a tensor other than y may have (x, w, the residual stream, dy, dx, dw).
inline constexpr bool is_input_dtype(DType t) { return !is_fp8(t); }
// The weight's stored value is an offset from 1 (gemma, zero-centered).
inline constexpr bool has_weight_offset(Convention c) {
  return c == Convention::gemma || c == Convention::zero_centered;
}

// Ops that carry a residual stream (and so a residual dtype).
inline constexpr bool has_residual(Op op) { return op == Op::add || op == Op::add_bwd; }
// Ops whose y may be stored in fp8: fwd and add write y (the backward ops write dx and dw).
inline constexpr bool has_fp8_output(Op op) { return op == Op::fwd || op == Op::add; }
inline constexpr bool is_backward(Op op) { return op == Op::bwd || op == Op::add_bwd; }

}  // namespace rb

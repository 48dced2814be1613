// The fp64 reference, in Eigen: plain and obviously right. It never sees the kernels'
// statistics; it recomputes everything from the stored inputs. (The backward's rrms is an
// input of the op, like x: the caller passes the value the kernel reads, see below.)
//
// Storage types: T (x, y, dy, dx), R (the residual stream: r, residual_out s, ds_out) and W
// (w, dw) are each float, half or bfloat16 (host_dtype.h); every function is also
// instantiated with double for all of them, so tests can take finite differences in fp64.
// Every stored value is exact in fp64, so the reference computes on exactly the values the
// GPU read. Outputs are doubles. Functions throw std::invalid_argument if H < 1 (and, for
// the *_rows functions, if M < 0 or stride < H) or if conv is not a Convention.
//
// Conventions (core/names.h). Each is exact math plus the roundings it names: everything
// else is fp64 (rrms included, always computed from the values actually squared). The
// output's own final rounding (to T, or to fp8 after the scale) is NOT done here: y is
// returned before it, and the caller rounds (round_to<Y>, round_overflow<Y>). round_X(v)
// below is round_to<X>(v), correct rounding to nearest even; with a double storage type
// round_T, round_W and round_R are the identity, while gemma's round_f32 still rounds to
// float (so the all-double instantiation keeps gemma's one rounding).
//   fp32           y = x * rrms * w. One rounding, at the output: torch.nn.functional.rms_norm
//                  and TransformerEngine's fused kernels (fp32 compute, one store).
//   llama          n = round_T(x * rrms), y = round_P(n * w) with P the dtype PyTorch promotes
//                  T and W to: T when W == T, else fp32 (so fp32 whenever T or W is fp32, and
//                  also for fp16 with bf16). Hugging Face LlamaRMSNorm: `self.weight *
//                  hidden_states.to(input_dtype)`, two tensor ops each rounding to its dtype;
//                  also vLLM's and apex's style. With T = W = float both roundings are to fp32:
//                  llama then differs from fp32 by those fp32 roundings alone (2^-24 relative
//                  each), which an fp32 kernel of either convention makes anyway.
//                  Add op: s = round_R(x + r) is what is squared, normalised and returned as s
//                  (HF adds the residual as a tensor op in its dtype before the norm); n is
//                  rounded to T, x's dtype, as in the forward.
//   gemma          y = x * rrms * round_f32(1 + w). Hugging Face GemmaRMSNorm (`output * (1.0 +
//                  self.weight.float())`, one rounding at the output) and TransformerEngine's
//                  zero_centered_gamma (its kernels add 1 in the fp32 compute type: identical).
//   zero_centered  y = x * rrms * round_W(1 + w). The +1 applied to the parameter tensor in its
//                  own dtype before a plain kernel (e.g. `weight + 1` on a bf16 parameter), and
//                  cuDNN's pointwise add when its output tensor has w's dtype.
// gemma and zero_centered differ only where 1 + w is not representable in W (and is in fp32).
// 1 + w is formed in fp64 before its rounding: exact unless |w| < 2^-29 or |w| >= 2^52, and
// then rounded in a way the second rounding cannot see (a sum of two p-bit values rounded to
// 53 >= 2p + 2 bits and then to p bits is the sum rounded once). x * rrms in llama is an
// fp64 product (rrms is fp64 itself) before its rounding to T.
#pragma once

#include <cstdint>

#include "core/names.h"

namespace rb::ref {

// y[c] = x[c] * rrms * w_eff[c] (or llama's chain) with rrms = 1 / sqrt(mean(x^2) + eps), in
// fp64. Returns rrms. y receives H doubles.
template <class T, class W>
double rmsnorm_fwd_row(const T* x, const W* w, std::int64_t H, double eps, double* y,
                       Convention conv = Convention::fp32);

// rrms = 1 / sqrt(mean(x^2) + eps) of one row, exactly as rmsnorm_fwd_row computes it.
// The weight a convention multiplies the normalised row by (H values into out): w itself
// (fp32, llama), or 1 + w rounded to fp32 (gemma) or to W (zero_centered).
template <class W>
void effective_weight_row(const W* w, std::int64_t H, Convention conv, double* out);

template <class T>
double rrms_row(const T* x, std::int64_t H, double eps);

// ---------------------------------------------------------------------------------------
// Backward of y = x * rrms * w (rrms = 1 / sqrt(mean(x^2) + eps)), per row, given dy = dL/dy.
// With a weight offset (gemma, zero_centered) w below is the effective weight w_eff, rounded
// as the forward rounds it, in g = dy * w and dx_scale; dw and dw_abs are unchanged
// (d w_eff / d w = 1, the rounding is not differentiated). fp32 and llama have the same
// backward: a forward's intermediate roundings are not differentiated.
//
//   dx[h] = rrms * dy[h] * w[h] - x[h] * (rrms^3 / H) * sum_j dy[j] * w[j] * x[j]
//   dw[h] = sum over rows of dy[h] * x[h] * rrms
//
// rrms is the value the reference must use: the bwd kernel reads the saved fp32 rrms, so the
// harness generates that fp32 value (rounding rrms_row's fp64 result), hands it to the kernel
// and passes the same value, upcast, here. Then the reference sees exactly what the GPU sees
// and the saved rrms adds no error term; its own accuracy is the forward's business
// (rrms_tolerance). Passing the fp64 rrms instead adds a relative error delta (~2^-24 if
// the saved value was correctly rounded) to the rrms the kernel used: up to 3 * delta *
// dx_scale on dx (rrms^3 in the correction) and delta * dw_abs on dw.
//
// Where each output goes; a null pointer skips it. dx and dx_scale hold one row (H values;
// in the *_rows functions row i starts at i * stride, the padding is left untouched); dw
// and dw_abs hold H values.
//   dx_scale[h] = rrms * |dy[h] * w[h]| + |x[h]| * (rrms^3 / H) * sum_j |dy[j] * w[j] * x[j]|
//                 (the sizes of dx's terms without cancellation; >= |dx[h]|),
//   dw_abs[h]   = sum over rows of |dy[h] * x[h] * rrms|.
// For the ops with a residual stream, dx_scale also adds |ds_out[h]|.
// The *_row functions write dw and dw_abs for that row alone (its contribution; the caller
// sums over rows); the *_rows functions write the sums over the M rows, in fp64. dw needs
// every row (a row sample is not enough), but not dx: pass dx = nullptr to get dw alone in
// O(H) memory.
struct BwdOut {
  double* dx = nullptr;
  double* dw = nullptr;
  double* dx_scale = nullptr;
  double* dw_abs = nullptr;
};

template <class T, class W>
void rmsnorm_bwd_row(const T* x, const W* w, const T* dy, std::int64_t H, double rrms, const BwdOut& out,
                     Convention conv = Convention::fp32);

// M rows; row i of x and dy (and of out.dx, out.dx_scale) starts at i * stride. rrms: M values.
template <class T, class W>
void rmsnorm_bwd_rows(const T* x, const W* w, const T* dy, const double* rrms, std::int64_t M, std::int64_t H,
                      std::int64_t stride, const BwdOut& out, Convention conv = Convention::fp32);

// ---------------------------------------------------------------------------------------
// Fused residual add + RMSNorm: s = x + r, y = s * rrms(s) * w with rrms(s) =
// 1 / sqrt(mean(s^2) + eps). s is added in fp64 from the exact inputs (exact unless the
// exponents of x and r differ by more than 29 = 53 - 24; correctly rounded then), and for
// llama rounded to R (round_R(x + r), see above). Writes y and s (residual_out, the residual
// stream passed on), H doubles each; returns rrms(s).
template <class T, class R, class W>
double rmsnorm_add_fwd_row(const T* x, const R* r, const W* w, std::int64_t H, double eps, double* y,
                           double* s, Convention conv = Convention::fp32);

// Its backward. Inputs: s (the residual_out the forward saved, which is what the kernel reads:
// x and r themselves are not needed), w, dy = dL/dy, ds_out = dL/ds from the residual
// stream's consumers, and rrms as for rmsnorm_bwd_row. Since s = x + r,
//   dx = dr = (the RMSNorm backward of dy at s) + ds_out,
// written to out.dx (the one gradient serves both x and r); dw as for rmsnorm_bwd_row, on s.
// conv: w_eff as for rmsnorm_bwd_row.
template <class T, class R, class W>
void rmsnorm_add_bwd_row(const R* s, const W* w, const T* dy, const R* ds_out, std::int64_t H, double rrms,
                         const BwdOut& out, Convention conv = Convention::fp32);

template <class T, class R, class W>
void rmsnorm_add_bwd_rows(const R* s, const W* w, const T* dy, const R* ds_out, const double* rrms,
                          std::int64_t M, std::int64_t H, std::int64_t stride, const BwdOut& out,
                          Convention conv = Convention::fp32);

// ---------------------------------------------------------------------------------------
// Expected fp32 GPU error, for the validation tolerances (u = 2^-24, fp32 unit roundoff).
// The numbers come from the error analysis below and were checked by simulating fp32
// kernels against fp64 (64 rows per H, normal / offset / tiny inputs).
//
// dx. The kernel forms g = dy * w, reduces S = sum_j g[j] * x[j] over the row in fp32 (a
// serial per-thread part of about H / threads terms, then a tree), and computes
// rrms * g[h] - x[h] * (rrms^3 / H) * S. Each term carries a few roundings, and S's error is
// at most (H / threads + log2(threads)) * u * sum_j |g[j] * x[j]| in the worst case,
// about u * sqrt(that) * sum|g x| typically. So the error is a multiple of u * dx_scale[h],
// NOT of |dx[h]|: the two terms cancel. At H = 1, dx = dy * w * eps / (x^2 + eps)^(3/2), so
// both terms agree to ~eps / x^2 = 1e-5 and a correct fp32 kernel is off by ~17% of |dx|
// (simulated: max |err| / |dx| = 0.17 at H = 1, ~1e-3 at H = 4097..65536 where some
// columns cancel), while |err| / (u * dx_scale) stays below 2.8 for every H from 1 to
// 65536. Suggested per element:
//     |dx_gpu - dx| <= rtol_T * |dx| + 2^-24 * (8 + 2 * sqrt(H)) * dx_scale[h]
// with rtol_T covering the final rounding to T (half an ulp: 2^-24, 2^-11, 2^-8 for
// fp32, fp16, bf16; the forward table's rtol fits). The sqrt(H) term covers rows whose
// products g * x share a sign (S's error then grows with the chain length).
//
// dw. Each term t = dy * x * rrms costs two roundings in fp32. Per-block fp32 partials (each
// block sums its ~M / P rows serially, P ~ the SM count) and a column reduction over the P
// partials put every term through a chain of about M / P + P additions (M / P + log2 P with
// a tree). The error is at most (chain + 2) * u * dw_abs[h] in the worst case and grows like
// sqrt(chain) * u * dw_abs[h] for independent roundings; chain <= M whatever P is, so
//     |dw_gpu - dw| <= rtol_W * |dw| + 2^-24 * (4 + 4 * sqrt(M)) * dw_abs[h]
// holds for any block count (simulated with P = 132, H = 512 columns, M = 1..65536: the
// largest error was 1.8 u * sqrt(M) * dw_abs at M = 1, where the two product roundings
// dominate, and 0.07 u * sqrt(M) * dw_abs by M = 16384; relative to dw_abs it never
// exceeded 5.4e-7). The tolerance must scale with dw_abs = sum |t|, not with |dw|: with
// dy of random sign the terms cancel, |dw| ~ sqrt(M) * |t| while sum |t| ~ M * |t|, and
// single columns cancel to ~0. The error is a fraction of the partial sums it passes
// through, which are bounded by sum |t|, not by the final |dw| (simulated: max |err| / |dw|
// reached 1.2e-3 at M = 1024, with max |err| / sum |t| = 4.5e-8). A tolerance on |dw| alone
// fails correct kernels on columns that cancel (|err| / |dw| has no bound), and widening it
// until they pass lets the dw-accumulated-in-bf16 mutant through; the sum |t| form catches
// that mutant by 17x at M = 16384 (its error reached ~70 u * sqrt(M) * dw_abs there with
// random-sign dy, and far more with same-sign terms, where bf16 partials stagnate).
//
// residual_out. The kernel adds in fp32 (one rounding, u * |s|) and stores s in R (half an
// ulp of R), so |s_gpu - s| <= ulp_R(s) (for R = fp32: half an ulp). That is far tighter
// than y's tolerance and is what catches "residual added in the storage dtype" when R is
// fp32 and T is 16-bit (an error up to half an ulp of T). With R = T 16-bit that mutant
// stores the same s (one rounding of the exact sum either way) and changes y only by
// s's rounding (2^-9 relative in bf16), inside y's tolerance: the sweep needs R = fp32
// cases to catch it. y and rrms of the add op: the forward's tolerances (fp32 s is within
// u of the exact s).
//
// Catching the other backward mutants needs inputs as well as tolerances: without the
// correction term dx is off by |x[h]| * rrms^3 / H * |S|, which for dy uncorrelated with x is
// ~1 / sqrt(H) of dx's scale (below bf16's rtol at H = 65536); dy with a non-zero mean over
// an offset x (S ~ H) makes it as large as dx itself.

}  // namespace rb::ref

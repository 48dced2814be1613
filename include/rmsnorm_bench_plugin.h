/* rmsnorm-bench plugin ABI: the one header a user's kernel library includes.
 *
 * A plugin is a shared library (Linux .so) that exports one function,
 *
 *     const rb_plugin* rb_plugin_entry(void);
 *
 * returning a static description of its kernels. `rmsnorm-bench --plugin libfoo.so` opens
 * the library, checks the description and registers each kernel as `plugin:<name>`, beside
 * the built-in and vendor kernels. From then on the tool treats it like any other kernel:
 * the same validation sweep against the fp64 reference, the same timing and reports. A
 * case the kernel does not declare (op, dtypes, H range, alignment) or refuses in
 * supports() is recorded as a skip with the reason; it is never run on another kernel.
 *
 * Plain C (C99 or later, or C++): no CUDA headers are needed; streams travel as void*.
 *
 * ---------------------------------------------------------------------------------------
 * The math every kernel must compute (the reference it is judged against is exact fp64
 * math on the same stored input values; tolerances are per output dtype):
 *
 *   fwd      y[r,c] = x[r,c] * rrms[r] * w[c],   rrms[r] = 1 / sqrt(mean_c(x[r,:]^2) + eps)
 *            - squares accumulated in fp32 (or wider), never in fp16/bf16;
 *            - eps inside the sqrt; the mean divides by H exactly;
 *            - w has shape (H,) and is indexed by the column only; no bias;
 *            - y has x's dtype; one rounding at the output is the reference convention;
 *            - rrms (when non-NULL) receives rrms[r] in fp32: 1/rms, not rms.
 *   add      s = x + r added in fp32 (before squaring), then fwd applied to that fp32 s;
 *            s is also written to `s`, rounded to the residual dtype; y in x's dtype;
 *            rrms of s.
 *   bwd      per row, with g = dy * w and the saved rrms (read, never recomputed):
 *              dx[h] = rrms * g[h] - x[h] * (rrms^3 / H) * sum_j g[j] * x[j]
 *              dw[h] = sum over all rows of dy[h] * x[h] * rrms
 *            dw should be bitwise repeatable run to run (no float atomics): e.g. fp32
 *            partials per block in the workspace, then a fixed-order column sum.
 *   add-bwd  as bwd, where x is the saved residual stream s, and dx (= dr) gets + ds_out[h].
 *
 * Every kernel must handle any H in its declared [min_H, max_H] (mask the tail), any row
 * stride >= H, and every base alignment it declares (see rb_kernel.base_align). Rows are
 * 2-D tensors in row-major order: row r of tensor t starts at t + r * t_stride elements.
 * Outputs are poison-filled and guarded by the tool: an element left unwritten or a write
 * outside [0, H) of a row fails the case.
 *
 * ---------------------------------------------------------------------------------------
 * CUDA runtime and process rules (why a plugin may link its own CUDA runtime):
 *
 * The tool links the CUDA runtime statically; the plugin may link its own copy, static
 * (recommended, what examples/plugin does: the .so then needs only the driver at run time)
 * or shared (libcudart.so). Either way there are two runtime instances in one process, and
 * both run on the driver's primary context of the device: the runtime uses the device's
 * primary context, of which there is one per device per process (CUDA Runtime API,
 * "Interactions with the CUDA Driver API"). Hence:
 *   - device pointers the tool allocated are valid in the plugin's kernels;
 *   - the stream argument is a cudaStream_t of the tool's runtime, which is a driver
 *     CUstream ("CUstream and cudaStream_t are identical and may be used interchangeably"):
 *     cast it back with (cudaStream_t)stream and launch on it;
 *   - the tool makes the device current (cudaSetDevice) on the calling thread before any
 *     call; do not call cudaSetDevice, cudaDeviceReset or cudaDeviceSynchronize, and do not
 *     change device flags or limits;
 *   - the two runtimes keep separate last-error state: the tool cannot see the plugin's
 *     launch errors through its own cudaGetLastError(). Every launch function must
 *     therefore return the error of its launches (cudaGetLastError() of its own runtime
 *     right after them), 0 when they were queued cleanly;
 *   - launches are asynchronous: return without synchronising; the tool synchronises and
 *     times the stream (CUDA events, and CUDA-graph capture for small cases, so a launch
 *     function must also be capturable: no synchronisation, no allocation, no host reads
 *     of device memory);
 *   - export only rb_plugin_entry (build with -fvisibility=hidden and, when linking the
 *     static runtime, -Wl,--exclude-libs,ALL): the tool opens plugins RTLD_LOCAL, but
 *     hidden symbols also keep the plugin's runtime from interposing on anyone else's.
 * The library stays loaded until the process exits (the registered kernels point into it).
 * rb_plugin_entry() must not call CUDA: it also runs in `rmsnorm-bench list` and on
 * machines without a GPU.
 *
 * Versioning: any change to any struct or rule here bumps RB_PLUGIN_ABI_VERSION. The tool
 * refuses a plugin built against another version (exit code 2). `abi_version` stays the
 * first member of rb_plugin in every version, so the check is always safe to make.
 */
#ifndef RMSNORM_BENCH_PLUGIN_H
#define RMSNORM_BENCH_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#define RB_PLUGIN_ABI_VERSION 1

/* The name of the entry symbol, for dlsym. */
#define RB_PLUGIN_ENTRY_SYMBOL "rb_plugin_entry"

#if defined(__GNUC__) || defined(__clang__)
#define RB_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define RB_PLUGIN_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Element types. fp16 is IEEE binary16 (CUDA __half); bf16 is bfloat16 (__nv_bfloat16). */
typedef enum rb_dtype { RB_FP32 = 0, RB_FP16 = 1, RB_BF16 = 2 } rb_dtype;

/* Ops, as bits of rb_kernel.ops; rb_problem.op holds exactly one of them. */
typedef enum rb_op {
  RB_OP_FWD = 1u << 0,    /* y = rmsnorm(x) * w                              (rb_fwd_args) */
  RB_OP_BWD = 1u << 1,    /* dx, dw from x, w, dy and the saved rrms         (rb_bwd_args) */
  RB_OP_ADD = 1u << 2,    /* s = x + r; y = rmsnorm(s) * w; s written back   (rb_add_args) */
  RB_OP_ADD_BWD = 1u << 3 /* the backward of add, + the residual's ds_out    (rb_bwd_args) */
} rb_op;

#define RB_OP_ALL (RB_OP_FWD | RB_OP_BWD | RB_OP_ADD | RB_OP_ADD_BWD)

/* One (x, w) dtype combination a kernel implements. x also gives y, dy, dx. Ops with a
 * residual stream take r (and s, ds_out) either in x's dtype or in fp32. */
typedef struct rb_dtype_combo {
  rb_dtype x;
  rb_dtype w;
} rb_dtype_combo;

/* What a case asks of a kernel before any buffer exists (supports, workspace_bytes). */
typedef struct rb_problem {
  rb_op op;           /* exactly one RB_OP_* bit */
  int64_t M;          /* rows */
  int64_t H;          /* hidden size: elements per row */
  int64_t stride;     /* row stride of every 2-D tensor of the case, in elements (>= H) */
  rb_dtype x;         /* x, y, dy, dx */
  rb_dtype w;         /* w, dw */
  rb_dtype r;         /* residual stream (r, s, ds_out; add-bwd's x and dx); else = x */
  int64_t base_align; /* bytes every base pointer is aligned to: 16, or the element size
                         for the `misaligned` layout (base offset by one element) */
} rb_problem;

/* fwd: y[r,c] = x[r,c] * rsqrt(mean_c(x[r,:]^2) + eps) * w[c], accumulated in fp32.
 * Mirrors rb::FwdArgs (kernels/types.h) field for field. */
typedef struct rb_fwd_args {
  const void* x;          /* M rows of H elements in xdtype, row stride x_stride */
  const void* w;          /* H elements in wdtype (contiguous) */
  void* y;                /* M rows of H elements in xdtype, row stride y_stride */
  float* rrms;            /* M floats: 1/sqrt(mean(x^2) + eps) per row; NULL = not wanted */
  int64_t M;              /* rows, >= 1 */
  int64_t H;              /* elements per row, within the kernel's [min_H, max_H] */
  int64_t x_stride;       /* elements between row starts of x, >= H */
  int64_t y_stride;       /* elements between row starts of y, >= H */
  float eps;              /* added to the mean square inside the sqrt */
  rb_dtype xdtype;        /* dtype of x and y */
  rb_dtype wdtype;        /* dtype of w */
  void* workspace;        /* workspace_bytes(problem) bytes of device scratch, at least
                             16-B aligned, contents undefined on entry; NULL when 0 */
  size_t workspace_bytes; /* its size */
} rb_fwd_args;

/* add: s = x + r added in fp32 (before squaring); y = s * rsqrt(mean(s^2) + eps) * w.
 * y has x's dtype; s has the residual dtype (like r); rrms of s saved as for fwd. r and s
 * are distinct buffers. Mirrors rb::AddArgs field for field. */
typedef struct rb_add_args {
  const void* x;    /* M x H in xdtype, row stride x_stride */
  const void* r;    /* M x H in rdtype, row stride r_stride: the residual stream in */
  const void* w;    /* H elements in wdtype */
  void* y;          /* M x H in xdtype, row stride y_stride */
  void* s;          /* M x H in rdtype, row stride s_stride: x + r, the stream out */
  float* rrms;      /* M floats (rrms of s); NULL = not wanted */
  int64_t M;        /* rows, >= 1 */
  int64_t H;        /* elements per row */
  int64_t x_stride; /* row strides in elements, each >= H */
  int64_t r_stride;
  int64_t y_stride;
  int64_t s_stride;
  float eps;       /* inside the sqrt */
  rb_dtype xdtype; /* x and y */
  rb_dtype wdtype; /* w */
  rb_dtype rdtype; /* r and s: xdtype or RB_FP32 */
  void* workspace; /* as in rb_fwd_args */
  size_t workspace_bytes;
} rb_add_args;

/* bwd and add-bwd (ds_out == NULL for bwd, non-NULL for add-bwd). Per row, with
 * g = dy * w and the saved rrms (never recomputed):
 *   dx[h] = rrms * g[h] - x[h] * (rrms^3 / H) * sum_j g[j] * x[j]   (+ ds_out[h] for add-bwd)
 *   dw[h] = sum over rows of dy[h] * x[h] * rrms                     (fp32 accumulation)
 *   bwd:     x, dx in xdtype; dy in dydtype == xdtype.
 *   add-bwd: x is the saved residual stream s; x, dx (= dr) and ds_out are in the residual
 *            dtype (xdtype here); dy is in the forward's x dtype (dydtype).
 * dw is written (not accumulated into) in wdtype. Mirrors rb::BwdArgs field for field. */
typedef struct rb_bwd_args {
  const void* x;          /* M x H in xdtype, row stride x_stride */
  const void* w;          /* H elements in wdtype */
  const void* dy;         /* M x H in dydtype, row stride dy_stride */
  const float* rrms;      /* M floats saved by the forward */
  const void* ds_out;     /* add-bwd: M x H in xdtype, row stride ds_stride; bwd: NULL */
  void* dx;               /* M x H in xdtype, row stride dx_stride */
  void* dw;               /* H elements in wdtype */
  void* workspace;        /* workspace_bytes(problem) bytes of device scratch (dw partials),
                             at least 16-B aligned, contents undefined on entry; NULL when 0 */
  size_t workspace_bytes; /* its size */
  int64_t M;              /* rows, >= 1 */
  int64_t H;              /* elements per row */
  int64_t x_stride;       /* row strides in elements, each >= H (ds_stride: add-bwd only) */
  int64_t dy_stride;
  int64_t ds_stride;
  int64_t dx_stride;
  rb_dtype xdtype;  /* x, dx (and ds_out) */
  rb_dtype dydtype; /* dy */
  rb_dtype wdtype;  /* w, dw */
} rb_bwd_args;

/* Launch functions: queue all of the op's work on `stream` (a cudaStream_t passed as
 * void*) and return 0, or the cudaError_t value of the first failure (see the runtime
 * rules above). Never synchronise, never print, never exit. */
typedef int (*rb_fwd_fn)(const rb_fwd_args* args, void* stream);
typedef int (*rb_add_fn)(const rb_add_args* args, void* stream);
typedef int (*rb_bwd_fn)(const rb_bwd_args* args, void* stream);

/* One kernel. Every string and array must live as long as the library (static data). */
typedef struct rb_kernel {
  /* Unique within the tool; registered as "plugin:<name>". Letters, digits, '_', '-',
   * '.', '+' only (it lands in CSV columns and on command lines). Required. */
  const char* name;
  /* One line for `rmsnorm-bench list`; NULL allowed. */
  const char* description;
  /* RB_OP_* bits of the ops implemented; at least one. */
  uint32_t ops;
  /* The (x, w) combos implemented: num_dtypes >= 1 entries. */
  const rb_dtype_combo* dtypes;
  size_t num_dtypes;
  /* Inclusive range of H the kernel handles: 1 <= min_H <= max_H. Use INT64_MAX for no
   * upper limit; a limit that depends on op or dtype belongs in supports(). */
  int64_t min_H;
  int64_t max_H;
  /* Bytes every base pointer must be aligned to: 0 or 1 (any; scalar accesses), 2, 4, 8
   * or 16. Cases whose rb_problem.base_align is smaller are skipped with a reason. Only
   * base pointers are covered: row r starts at base + r * stride elements, so a kernel
   * that needs every row aligned must also check rb_problem.stride in supports(). */
  uint32_t base_align;
  /* Extra limits: NULL if the problem is supported, else the reason (one line). NULL
   * pointer = every problem the fields above admit. The string must stay valid until the
   * plugin's next call on the same thread; the tool copies it at once. The tool calls it
   * only for problems that already pass ops, dtypes, H range and base_align. */
  const char* (*supports)(const rb_problem* problem);
  /* Bytes of device scratch each launch of this problem needs (dw partials...): the tool
   * allocates them once per case and passes them in the arguments. NULL = none. */
  size_t (*workspace_bytes)(const rb_problem* problem);
  /* Launch functions: fwd required iff ops has RB_OP_FWD, add iff RB_OP_ADD, bwd iff
   * RB_OP_BWD or RB_OP_ADD_BWD (it serves both; ds_out tells them apart). Unused: NULL. */
  rb_fwd_fn fwd;
  rb_add_fn add;
  rb_bwd_fn bwd;
} rb_kernel;

/* What rb_plugin_entry returns: static data, valid for the library's lifetime. */
typedef struct rb_plugin {
  uint32_t abi_version;     /* RB_PLUGIN_ABI_VERSION; always the first member */
  const char* name;         /* the plugin's name, e.g. "my-norms"; required */
  const char* version;      /* the plugin's own version, e.g. "1.2.0" (CSV and reports);
                               required: "" for none, never NULL */
  size_t num_kernels;       /* >= 1 */
  const rb_kernel* kernels; /* num_kernels descriptors */
} rb_plugin;

typedef const rb_plugin* (*rb_plugin_entry_fn)(void);

/* Defined by the plugin (extern "C" when compiled as C++, which this declaration gives). */
RB_PLUGIN_EXPORT const rb_plugin* rb_plugin_entry(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RMSNORM_BENCH_PLUGIN_H */

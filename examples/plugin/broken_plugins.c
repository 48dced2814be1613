/* Plugins the loader must refuse, one per build flag (examples/plugin/CMakeLists.txt builds
 * each; tests/cpu_plugin_test.cpp expects each refusal). Plain C on purpose: it also proves
 * that rmsnorm_bench_plugin.h compiles as C. Their launch functions never run.
 *   RB_BROKEN_NOSYM       exports no rb_plugin_entry           (rb_plugin_nosym)
 *   RB_BROKEN_ABI=<n>     reports ABI version n                (rb_plugin_abi2, n = 2)
 *   RB_BROKEN_MALFORMED   declares bwd without a bwd function  (rb_plugin_malformed)
 */
#include "rmsnorm_bench_plugin.h"

static int refuse_fwd(const rb_fwd_args* args, void* stream) {
  (void)args;
  (void)stream;
  return 1; /* cudaErrorInvalidValue */
}

static const rb_dtype_combo kCombos[] = {{RB_FP32, RB_FP32}};

static const rb_kernel kKernels[] = {{
    "broken",
    "never runs",
#ifdef RB_BROKEN_MALFORMED
    RB_OP_FWD | RB_OP_BWD, /* bwd declared, yet .bwd below is NULL */
#else
    RB_OP_FWD,
#endif
    kCombos,
    1,
    1,
    INT64_MAX,
    0,
    NULL,
    NULL,
    refuse_fwd,
    NULL,
    NULL,
}};

#ifdef RB_BROKEN_ABI
#define RB_BROKEN_ABI_VERSION RB_BROKEN_ABI
#else
#define RB_BROKEN_ABI_VERSION RB_PLUGIN_ABI_VERSION
#endif

static const rb_plugin kPlugin = {RB_BROKEN_ABI_VERSION, "broken", "0.0.0", 1, kKernels};

#ifdef RB_BROKEN_NOSYM
/* Exported under another name: a library, but not an rmsnorm-bench plugin. */
RB_PLUGIN_EXPORT const rb_plugin* rb_plugin_entry_misspelt(void) { return &kPlugin; }
#else
const rb_plugin* rb_plugin_entry(void) { return &kPlugin; }
#endif

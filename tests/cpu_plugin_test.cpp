// Plugin loader on the CPU: the example plugins register plugin:<name> kernels as declared;
// every way a plugin can be unusable (no file, not a library, no entry symbol, another ABI
// version, a malformed descriptor, a kernel name taken) is a PluginError that names the file
// and the problem, and registers nothing; launch arguments reach the plugin field for field.
//
// Kernels stay registered for the rest of the process: run these tests in their own
// executable (or one process per test, as CTest does), not beside tests that sweep every
// registered kernel.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>

#include "kernels/plugin.h"
#include "kernels/registry.h"

#if !defined(RB_PLUGIN_GOOD) || !defined(RB_PLUGIN_BAD) || !defined(RB_PLUGIN_NOSYM) || \
    !defined(RB_PLUGIN_ABI2) || !defined(RB_PLUGIN_MALFORMED)
// The paths come from examples/plugin/CMakeLists.txt (RB_PLUGIN_TEST_DEFINITIONS).
#error "define RB_PLUGIN_{GOOD,BAD,NOSYM,ABI2,MALFORMED} as the example plugins' paths"
#endif

#include "tests/plugin_paths.h"

namespace {
const std::string kPluginGood = RB_RESOLVE_PLUGIN(RB_PLUGIN_GOOD);
const std::string kPluginBad = RB_RESOLVE_PLUGIN(RB_PLUGIN_BAD);
const std::string kPluginNosym = RB_RESOLVE_PLUGIN(RB_PLUGIN_NOSYM);
const std::string kPluginAbi2 = RB_RESOLVE_PLUGIN(RB_PLUGIN_ABI2);
const std::string kPluginMalformed = RB_RESOLVE_PLUGIN(RB_PLUGIN_MALFORMED);
}  // namespace
#undef RB_PLUGIN_GOOD
#define RB_PLUGIN_GOOD kPluginGood.c_str()
#undef RB_PLUGIN_BAD
#define RB_PLUGIN_BAD kPluginBad.c_str()
#undef RB_PLUGIN_NOSYM
#define RB_PLUGIN_NOSYM kPluginNosym.c_str()
#undef RB_PLUGIN_ABI2
#define RB_PLUGIN_ABI2 kPluginAbi2.c_str()
#undef RB_PLUGIN_MALFORMED
#define RB_PLUGIN_MALFORMED kPluginMalformed.c_str()

namespace rb {
namespace {

// Loads a plugin once per process, whichever test asks first.
void load_once(const std::string& path) {
  static std::set<std::string> loaded;
  if (loaded.insert(path).second) load_plugin(path);
}

// The PluginError message of f(), or "" when it throws none.
template <class F>
std::string plugin_error(F f) {
  try {
    f();
  } catch (const PluginError& e) {
    return e.what();
  }
  return "";
}

Problem problem(Op op, DType x, DType w, std::int64_t M, std::int64_t H, std::int64_t base_align = 16) {
  return Problem::of(op, M, H, x, w, x, H, base_align);
}

TEST(Plugin, GoodPluginRegistersItsKernelAsDeclared) {
  load_once(RB_PLUGIN_GOOD);
  const KernelInfo* k = find_kernel("plugin:example-naive");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->provider, "plugin");
  EXPECT_EQ(k->version, "1.0.0");
  EXPECT_FALSE(k->mutant);
  EXPECT_TRUE(k->unavailable.empty());
  EXPECT_NE(k->description.find("[example 1.0.0, " + std::string(RB_PLUGIN_GOOD) + "]"), std::string::npos)
      << k->description;
  EXPECT_EQ(k->ops, (std::vector<Op>{Op::fwd, Op::bwd, Op::add, Op::add_bwd}));
  ASSERT_EQ(k->dtypes.size(), 5u);
  EXPECT_EQ(k->dtypes[0].x, DType::f32);
  EXPECT_EQ(k->dtypes[0].w, DType::f32);
  EXPECT_EQ(k->dtypes[2].x, DType::f16);
  EXPECT_EQ(k->dtypes[2].w, DType::f32);
  EXPECT_EQ(k->dtypes[4].x, DType::bf16);
  EXPECT_EQ(k->dtypes[4].w, DType::f32);
  EXPECT_EQ(k->min_H, 1);
  ASSERT_TRUE(k->max_H);
  EXPECT_EQ(k->max_H(problem(Op::fwd, DType::f32, DType::f32, 1, 1)), INT64_MAX);
  EXPECT_EQ(k->alignment, "any");

  // Scalar kernel: a misaligned base and an odd H are fine.
  ASSERT_TRUE(k->supports);
  EXPECT_EQ(k->supports(problem(Op::fwd, DType::bf16, DType::bf16, 7, 4097, 2)), std::nullopt);

  ASSERT_TRUE(k->prepare);
  auto fwd = k->prepare(problem(Op::fwd, DType::f32, DType::f32, 1000, 4097), "");
  ASSERT_NE(fwd, nullptr);
  EXPECT_EQ(fwd->picked(), "plugin:example-naive");
  EXPECT_EQ(fwd->workspace_bytes(), 0u);
  // The example's dw partials: min(M, 64) rows of H floats.
  EXPECT_EQ(k->prepare(problem(Op::bwd, DType::f32, DType::f32, 1000, 4097), "")->workspace_bytes(),
            64u * 4097u * sizeof(float));
  EXPECT_EQ(k->prepare(problem(Op::add_bwd, DType::bf16, DType::f32, 3, 5), "")->workspace_bytes(),
            3u * 5u * sizeof(float));
  EXPECT_THROW(k->prepare(problem(Op::fwd, DType::f32, DType::f32, 1, 8), "eng0"), Unsupported);
}

TEST(Plugin, WrongPluginLoadsLikeAnyOther) {
  // The loader checks the declaration, not the numbers: that is the validation sweep's job.
  load_once(RB_PLUGIN_BAD);
  for (const char* name : {"plugin:example-eps-outside", "plugin:example-weight-by-row"}) {
    const KernelInfo* k = find_kernel(name);
    ASSERT_NE(k, nullptr) << name;
    EXPECT_EQ(k->provider, "plugin");
    EXPECT_EQ(k->ops, std::vector<Op>{Op::fwd});
    EXPECT_EQ(k->dtypes.size(), 3u);
  }
}

TEST(Plugin, LoadingTwiceIsRefused) {
  load_once(RB_PLUGIN_GOOD);
  const std::string msg = plugin_error([] { load_plugin(RB_PLUGIN_GOOD); });
  EXPECT_NE(msg.find(std::string("--plugin ") + RB_PLUGIN_GOOD + ": "), std::string::npos) << msg;
  EXPECT_NE(msg.find("plugin:example-naive is already registered"), std::string::npos) << msg;
}

TEST(Plugin, MissingFile) {
  const std::string path = testing::TempDir() + "rb-no-such-plugin.so";
  EXPECT_EQ(plugin_error([&] { load_plugin(path); }), "--plugin " + path + ": no such file");
}

TEST(Plugin, Directory) {
  const std::string path = testing::TempDir();
  EXPECT_EQ(plugin_error([&] { load_plugin(path); }),
            "--plugin " + path + ": is a directory, not a shared library");
}

TEST(Plugin, TextFileIsNotALibrary) {
  const std::string path = testing::TempDir() + "rb-plugin-text.so";
  std::ofstream(path) << "not an ELF file\n";
  EXPECT_EQ(plugin_error([&] { load_plugin(path); }),
            "--plugin " + path + ": not a shared library (no ELF header)");
}

TEST(Plugin, TruncatedLibraryReportsTheLoaderError) {
  // An ELF header and nothing else: past the magic check, dlopen refuses it with its reason.
  const std::string path = testing::TempDir() + "rb-plugin-truncated.so";
  std::ofstream(path, std::ios::binary) << "\x7f"
                                           "ELF"
                                        << std::string(12, '\0');
  const std::string msg = plugin_error([&] { load_plugin(path); });
  EXPECT_EQ(msg.rfind("--plugin " + path + ": cannot be loaded as a shared library: ", 0), 0u) << msg;
}

TEST(Plugin, LibraryWithoutEntrySymbol) {
  const std::string msg = plugin_error([] { load_plugin(RB_PLUGIN_NOSYM); });
  EXPECT_EQ(msg.rfind(std::string("--plugin ") + RB_PLUGIN_NOSYM + ": no rb_plugin_entry symbol", 0), 0u)
      << msg;
}

TEST(Plugin, AbiVersionMismatch) {
  const std::string msg = plugin_error([] { load_plugin(RB_PLUGIN_ABI2); });
  EXPECT_EQ(msg.rfind(std::string("--plugin ") + RB_PLUGIN_ABI2 + ": ABI version 2, this tool speaks 1", 0),
            0u)
      << msg;
  EXPECT_EQ(find_kernel("plugin:broken"), nullptr);
}

TEST(Plugin, MalformedLibrary) {
  const std::string msg = plugin_error([] { load_plugin(RB_PLUGIN_MALFORMED); });
  EXPECT_EQ(
      msg,
      std::string("--plugin ") + RB_PLUGIN_MALFORMED +
          ": malformed descriptor: kernel 0 (\"broken\"): declares bwd but its bwd launch function is NULL");
  EXPECT_EQ(find_kernel("plugin:broken"), nullptr);
}

// ---- descriptors in memory: each check of the loader, and the launch adapters ----------

int no_fwd(const rb_fwd_args*, void*) { return 0; }
const rb_dtype_combo kF32[] = {{RB_FP32, RB_FP32}};

rb_kernel valid_kernel(const char* name) {
  rb_kernel k{};
  k.name = name;
  k.ops = RB_OP_FWD;
  k.dtypes = kF32;
  k.num_dtypes = 1;
  k.min_H = 1;
  k.max_H = INT64_MAX;
  k.fwd = no_fwd;
  return k;
}

struct MalformedCase {
  const char* label;
  void (*spoil)(rb_plugin& p, rb_kernel& k);
  const char* expected;  // the message after "--plugin <origin>: "
};

void PrintTo(const MalformedCase& c, std::ostream* os) { *os << c.label; }

const rb_dtype_combo kBadDtype[] = {{RB_FP32, static_cast<rb_dtype>(7)}};

const MalformedCase kMalformed[] = {
    {"abi", [](rb_plugin& p, rb_kernel&) { p.abi_version = 0; },
     "ABI version 0, this tool speaks 1 (rebuild the plugin against this tool's "
     "include/rmsnorm_bench_plugin.h)"},
    {"plugin_name", [](rb_plugin& p, rb_kernel&) { p.name = nullptr; },
     "malformed descriptor: plugin name is NULL"},
    {"version", [](rb_plugin& p, rb_kernel&) { p.version = "1.0\n"; },
     "malformed descriptor: plugin version contains a control character at offset 3"},
    {"no_kernels", [](rb_plugin& p, rb_kernel&) { p.num_kernels = 0; },
     "malformed descriptor: it declares no kernels"},
    {"kernel_name", [](rb_plugin&, rb_kernel& k) { k.name = nullptr; },
     "malformed descriptor: kernel 0: name is NULL"},
    {"kernel_name_chars", [](rb_plugin&, rb_kernel& k) { k.name = "a,b"; },
     "malformed descriptor: kernel 0: name has ',': only letters, digits, '_', '-', '.', '+' are allowed"},
    {"no_ops", [](rb_plugin&, rb_kernel& k) { k.ops = 0; },
     "malformed descriptor: kernel 0 (\"k\"): declares no ops"},
    {"unknown_ops", [](rb_plugin&, rb_kernel& k) { k.ops = RB_OP_FWD | 0x30u; },
     "malformed descriptor: kernel 0 (\"k\"): ops has unknown bits (0x30)"},
    {"no_launch", [](rb_plugin&, rb_kernel& k) { k.ops = RB_OP_FWD | RB_OP_ADD; },
     "malformed descriptor: kernel 0 (\"k\"): declares add but its add launch function is NULL"},
    {"no_dtypes", [](rb_plugin&, rb_kernel& k) { k.num_dtypes = 0; },
     "malformed descriptor: kernel 0 (\"k\"): declares no dtype combos"},
    {"bad_dtype", [](rb_plugin&, rb_kernel& k) { k.dtypes = kBadDtype; },
     "malformed descriptor: kernel 0 (\"k\"): dtype combo 0 has an unknown dtype (0, 7)"},
    {"min_H", [](rb_plugin&, rb_kernel& k) { k.min_H = 0; },
     "malformed descriptor: kernel 0 (\"k\"): min_H=0 (must be >= 1)"},
    {"max_H", [](rb_plugin&, rb_kernel& k) { k.max_H = 0; },
     "malformed descriptor: kernel 0 (\"k\"): max_H=0 is below min_H=1 (INT64_MAX means no limit)"},
    {"base_align", [](rb_plugin&, rb_kernel& k) { k.base_align = 32; },
     "malformed descriptor: kernel 0 (\"k\"): base_align=32 (must be 0/1 for any, 2, 4, 8 or 16)"},
};

class MalformedDescriptor : public testing::TestWithParam<MalformedCase> {};

TEST_P(MalformedDescriptor, IsRefusedWithItsReason) {
  static rb_kernel k;  // static: the registry would keep pointers to it had it been accepted
  static rb_plugin p;
  k = valid_kernel("k");
  p = rb_plugin{RB_PLUGIN_ABI_VERSION, "mem", "1", 1, &k};
  GetParam().spoil(p, k);
  EXPECT_EQ(plugin_error([] { register_plugin(&p, "memory"); }),
            std::string("--plugin memory: ") + GetParam().expected);
  EXPECT_EQ(find_kernel("plugin:k"), nullptr);
}

INSTANTIATE_TEST_SUITE_P(Plugin, MalformedDescriptor, testing::ValuesIn(kMalformed),
                         [](const testing::TestParamInfo<MalformedCase>& info) { return info.param.label; });

TEST(Plugin, NullDescriptor) {
  EXPECT_EQ(plugin_error([] { register_plugin(nullptr, "memory"); }),
            "--plugin memory: rb_plugin_entry() returned NULL");
}

TEST(Plugin, DuplicateNameRegistersNothing) {
  static const rb_kernel kernels[] = {valid_kernel("dup-first"), valid_kernel("dup"), valid_kernel("dup")};
  static const rb_plugin p = {RB_PLUGIN_ABI_VERSION, "mem", "1", 3, kernels};
  EXPECT_EQ(plugin_error([] { register_plugin(&p, "memory"); }),
            "--plugin memory: kernel name \"dup\" appears twice");
  EXPECT_EQ(find_kernel("plugin:dup-first"), nullptr);
}

const char* only_even_H(const rb_problem* p) { return p->H % 2 ? "odd H (pairs of elements)" : nullptr; }

TEST(Plugin, SupportsChecksAlignmentRangeThenThePluginsCallback) {
  static const KernelInfo* info = [] {
    static rb_kernel k = valid_kernel("even");
    k.base_align = 16;
    k.max_H = 1024;
    k.supports = only_even_H;
    static const rb_plugin p = {RB_PLUGIN_ABI_VERSION, "mem", "2.1", 1, &k};
    register_plugin(&p, "memory");
    return find_kernel("plugin:even");
  }();
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->version, "2.1");
  EXPECT_EQ(info->alignment, "base pointers 16-byte aligned");
  EXPECT_EQ(info->supports(problem(Op::fwd, DType::f32, DType::f32, 4, 64, 4)),
            "plugin:even needs 16-byte aligned base pointers; this case's are 4-byte aligned");
  EXPECT_EQ(info->supports(problem(Op::fwd, DType::f32, DType::f32, 4, 2048)),
            "plugin:even holds rows up to H=1024; H=2048 is larger");
  EXPECT_EQ(info->supports(problem(Op::fwd, DType::f32, DType::f32, 4, 63)),
            "plugin:even: odd H (pairs of elements)");
  EXPECT_EQ(info->supports(problem(Op::fwd, DType::f32, DType::f32, 4, 64)), std::nullopt);
}

// Launch adapters: host functions stand in for the plugin's launchers and record what came.
struct Seen {
  int calls = 0;
  void* stream = nullptr;
  rb_fwd_args fwd{};
  rb_add_args add{};
  rb_bwd_args bwd{};
  rb_problem ws_problem{};
};
Seen seen;

int record_fwd(const rb_fwd_args* a, void* s) {
  ++seen.calls;
  seen.fwd = *a;
  seen.stream = s;
  return 0;
}
int record_add(const rb_add_args* a, void* s) {
  ++seen.calls;
  seen.add = *a;
  seen.stream = s;
  return 0;
}
int record_bwd(const rb_bwd_args* a, void* s) {
  ++seen.calls;
  seen.bwd = *a;
  seen.stream = s;
  return 98;  // cudaErrorInvalidDeviceFunction: passed back as the launch error
}
size_t record_ws(const rb_problem* p) {
  seen.ws_problem = *p;
  return 123;
}

const rb_dtype_combo kAll[] = {{RB_FP32, RB_FP32}, {RB_BF16, RB_FP32}, {RB_FP16, RB_FP16}};

const KernelInfo& recorder() {
  static const KernelInfo* info = [] {
    static rb_kernel k = valid_kernel("recorder");
    k.ops = RB_OP_ALL;
    k.dtypes = kAll;
    k.num_dtypes = 3;
    k.fwd = record_fwd;
    k.add = record_add;
    k.bwd = record_bwd;
    k.workspace_bytes = record_ws;
    static const rb_plugin p = {RB_PLUGIN_ABI_VERSION, "mem", "1", 1, &k};
    register_plugin(&p, "memory");
    return find_kernel("plugin:recorder");
  }();
  return *info;
}

// Distinct, recognisable pointers (never dereferenced).
template <class T = void>
T* fake(std::uintptr_t v) {
  return reinterpret_cast<T*>(v);
}

TEST(Plugin, FwdArgumentsReachThePluginFieldForField) {
  const auto plan = recorder().prepare(problem(Op::fwd, DType::bf16, DType::f32, 5, 7, 2), "");
  EXPECT_EQ(plan->workspace_bytes(), 123u);
  EXPECT_EQ(seen.ws_problem.op, RB_OP_FWD);
  EXPECT_EQ(seen.ws_problem.M, 5);
  EXPECT_EQ(seen.ws_problem.H, 7);
  EXPECT_EQ(seen.ws_problem.stride, 7);
  EXPECT_EQ(seen.ws_problem.x, RB_BF16);
  EXPECT_EQ(seen.ws_problem.w, RB_FP32);
  EXPECT_EQ(seen.ws_problem.r, RB_BF16);
  EXPECT_EQ(seen.ws_problem.base_align, 2);

  FwdArgs a;
  a.x = fake(0x100);
  a.w = fake(0x200);
  a.y = fake(0x300);
  a.rrms = fake<float>(0x400);
  a.M = 5;
  a.H = 7;
  a.x_stride = 9;
  a.y_stride = 11;
  a.eps = 0.25f;
  a.xdtype = DType::bf16;
  a.wdtype = DType::f32;
  a.workspace = fake(0x500);
  a.workspace_bytes = 123;
  seen = Seen{};
  EXPECT_EQ(plan->launch(a, fake<CUstream_st>(0x42)), cudaSuccess);
  EXPECT_EQ(seen.calls, 1);
  EXPECT_EQ(seen.stream, fake(0x42));
  const rb_fwd_args& c = seen.fwd;
  EXPECT_EQ(c.x, a.x);
  EXPECT_EQ(c.w, a.w);
  EXPECT_EQ(c.y, a.y);
  EXPECT_EQ(c.rrms, a.rrms);
  EXPECT_EQ(c.M, 5);
  EXPECT_EQ(c.H, 7);
  EXPECT_EQ(c.x_stride, 9);
  EXPECT_EQ(c.y_stride, 11);
  EXPECT_EQ(c.eps, 0.25f);
  EXPECT_EQ(c.xdtype, RB_BF16);
  EXPECT_EQ(c.wdtype, RB_FP32);
  EXPECT_EQ(c.workspace, a.workspace);
  EXPECT_EQ(c.workspace_bytes, 123u);

  // Arguments of another op family never reach the plugin.
  seen = Seen{};
  EXPECT_EQ(plan->launch(AddArgs{}, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(plan->launch(BwdArgs{}, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(seen.calls, 0);
}

TEST(Plugin, AddArgumentsReachThePluginFieldForField) {
  Problem p = problem(Op::add, DType::f16, DType::f16, 3, 4);
  p.r = DType::f32;
  const auto plan = recorder().prepare(p, "");
  EXPECT_EQ(seen.ws_problem.op, RB_OP_ADD);
  EXPECT_EQ(seen.ws_problem.r, RB_FP32);

  AddArgs a;
  a.x = fake(0x10);
  a.r = fake(0x20);
  a.w = fake(0x30);
  a.y = fake(0x40);
  a.s = fake(0x50);
  a.rrms = fake<float>(0x60);
  a.M = 3;
  a.H = 4;
  a.x_stride = 5;
  a.r_stride = 6;
  a.y_stride = 7;
  a.s_stride = 8;
  a.eps = 0.5f;
  a.xdtype = DType::f16;
  a.wdtype = DType::f16;
  a.rdtype = DType::f32;
  a.workspace = fake(0x70);
  a.workspace_bytes = 9;
  seen = Seen{};
  EXPECT_EQ(plan->launch(a, nullptr), cudaSuccess);
  ASSERT_EQ(seen.calls, 1);
  const rb_add_args& c = seen.add;
  EXPECT_EQ(c.x, a.x);
  EXPECT_EQ(c.r, a.r);
  EXPECT_EQ(c.w, a.w);
  EXPECT_EQ(c.y, a.y);
  EXPECT_EQ(c.s, a.s);
  EXPECT_EQ(c.rrms, a.rrms);
  EXPECT_EQ(c.M, 3);
  EXPECT_EQ(c.H, 4);
  EXPECT_EQ(c.x_stride, 5);
  EXPECT_EQ(c.r_stride, 6);
  EXPECT_EQ(c.y_stride, 7);
  EXPECT_EQ(c.s_stride, 8);
  EXPECT_EQ(c.eps, 0.5f);
  EXPECT_EQ(c.xdtype, RB_FP16);
  EXPECT_EQ(c.wdtype, RB_FP16);
  EXPECT_EQ(c.rdtype, RB_FP32);
  EXPECT_EQ(c.workspace, a.workspace);
  EXPECT_EQ(c.workspace_bytes, 9u);
}

TEST(Plugin, BwdArgumentsReachThePluginAndItsErrorComesBack) {
  const auto plan = recorder().prepare(problem(Op::add_bwd, DType::f32, DType::f32, 2, 3), "");
  BwdArgs a;
  a.x = fake(0x1);
  a.w = fake(0x2);
  a.dy = fake(0x3);
  a.rrms = fake<const float>(0x4);
  a.ds_out = fake(0x5);
  a.dx = fake(0x6);
  a.dw = fake(0x7);
  a.workspace = fake(0x8);
  a.workspace_bytes = 10;
  a.M = 2;
  a.H = 3;
  a.x_stride = 11;
  a.dy_stride = 12;
  a.ds_stride = 13;
  a.dx_stride = 14;
  a.xdtype = DType::f32;
  a.dydtype = DType::bf16;
  a.wdtype = DType::f16;
  seen = Seen{};
  EXPECT_EQ(plan->launch(a, nullptr), static_cast<cudaError_t>(98));
  ASSERT_EQ(seen.calls, 1);
  const rb_bwd_args& c = seen.bwd;
  EXPECT_EQ(c.x, a.x);
  EXPECT_EQ(c.w, a.w);
  EXPECT_EQ(c.dy, a.dy);
  EXPECT_EQ(c.rrms, a.rrms);
  EXPECT_EQ(c.ds_out, a.ds_out);
  EXPECT_EQ(c.dx, a.dx);
  EXPECT_EQ(c.dw, a.dw);
  EXPECT_EQ(c.workspace, a.workspace);
  EXPECT_EQ(c.workspace_bytes, 10u);
  EXPECT_EQ(c.M, 2);
  EXPECT_EQ(c.H, 3);
  EXPECT_EQ(c.x_stride, 11);
  EXPECT_EQ(c.dy_stride, 12);
  EXPECT_EQ(c.ds_stride, 13);
  EXPECT_EQ(c.dx_stride, 14);
  EXPECT_EQ(c.xdtype, RB_FP32);
  EXPECT_EQ(c.dydtype, RB_BF16);
  EXPECT_EQ(c.wdtype, RB_FP16);

  seen = Seen{};
  EXPECT_EQ(plan->launch(FwdArgs{}, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(seen.calls, 0);
}

}  // namespace
}  // namespace rb

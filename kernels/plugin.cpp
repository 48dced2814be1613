// The plugin loader: dlopen -> rb_plugin_entry -> check the descriptor -> one KernelInfo per
// plugin kernel, registered as "plugin:<name>". Every plugin call goes through a thin
// adapter that converts the tool's argument structs to the C ABI's, field by field.
#include "kernels/plugin.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "kernels/registry.h"

namespace rb {
namespace {

constexpr std::size_t kMaxKernels = 4096;  // more than this is a garbage count, not a plugin
constexpr std::size_t kMaxNameLen = 128;   // names and versions
constexpr std::size_t kMaxTextLen = 4096;  // descriptions, reasons

rb_dtype to_c(DType t) {
  switch (t) {
    case DType::f32:
      return RB_FP32;
    case DType::f16:
      return RB_FP16;
    case DType::bf16:
      return RB_BF16;
    case DType::e4m3:  // output-only dtypes the C ABI has no name for: check_common never
    case DType::e5m2:  // lets a plugin (fp32 convention, no fp8 output) see them
      break;
  }
  return RB_FP32;
}

// A dtype field as the plugin wrote it, read as its bytes: a malformed plugin may hold a value
// outside rb_dtype's enumerators, which is undefined behaviour to load as the enum itself.
int raw_dtype(const rb_dtype& field) {
  static_assert(sizeof(rb_dtype) == sizeof(int), "rb_dtype is an int-sized C enum");
  int raw = 0;
  std::memcpy(&raw, &field, sizeof raw);
  return raw;
}

std::optional<DType> from_c(const rb_dtype& field) {
  switch (raw_dtype(field)) {
    case RB_FP32:
      return DType::f32;
    case RB_FP16:
      return DType::f16;
    case RB_BF16:
      return DType::bf16;
  }
  return std::nullopt;
}

rb_op to_c(Op op) {
  switch (op) {
    case Op::fwd:
      return RB_OP_FWD;
    case Op::bwd:
      return RB_OP_BWD;
    case Op::add:
      return RB_OP_ADD;
    case Op::add_bwd:
      return RB_OP_ADD_BWD;
  }
  return RB_OP_FWD;
}

rb_problem to_c(const Problem& p) {
  rb_problem c{};
  c.op = to_c(p.op);
  c.M = p.M;
  c.H = p.H;
  c.stride = p.stride;
  c.x = to_c(p.x);
  c.w = to_c(p.w);
  c.r = has_residual(p.op) ? to_c(p.r) : to_c(p.x);
  c.base_align = p.base_align;
  return c;
}

// The fields the two forward ops (fwd, add) share, in their C structs as in the C++ ones.
template <class CArgs, class Args>
CArgs forward_to_c(const Args& a) {
  CArgs c{};
  c.x = a.x;
  c.w = a.w;
  c.y = a.y;
  c.rrms = a.rrms;
  c.M = a.M;
  c.H = a.H;
  c.x_stride = a.x_stride;
  c.y_stride = a.y_stride;
  c.eps = a.eps;
  c.xdtype = to_c(a.xdtype);
  c.wdtype = to_c(a.wdtype);
  c.workspace = a.workspace;
  c.workspace_bytes = a.workspace_bytes;
  return c;
}

rb_fwd_args to_c(const FwdArgs& a) { return forward_to_c<rb_fwd_args>(a); }

rb_add_args to_c(const AddArgs& a) {
  rb_add_args c = forward_to_c<rb_add_args>(a);
  c.r = a.r;
  c.s = a.s;
  c.r_stride = a.r_stride;
  c.s_stride = a.s_stride;
  c.rdtype = to_c(a.rdtype);
  return c;
}

rb_bwd_args to_c(const BwdArgs& a) {
  rb_bwd_args c{};
  c.x = a.x;
  c.w = a.w;
  c.dy = a.dy;
  c.rrms = a.rrms;
  c.ds_out = a.ds_out;
  c.dx = a.dx;
  c.dw = a.dw;
  c.workspace = a.workspace;
  c.workspace_bytes = a.workspace_bytes;
  c.M = a.M;
  c.H = a.H;
  c.x_stride = a.x_stride;
  c.dy_stride = a.dy_stride;
  c.ds_stride = a.ds_stride;
  c.dx_stride = a.dx_stride;
  c.xdtype = to_c(a.xdtype);
  c.dydtype = to_c(a.dydtype);
  c.wdtype = to_c(a.wdtype);
  return c;
}

// A string from the plugin: NULL, or up to max_len printable characters (bytes >= 0x80
// allowed, for UTF-8). Returns what is wrong with it, or "" if it is fine.
std::string check_text(const char* s, std::size_t max_len) {
  if (!s) return "is NULL";
  for (std::size_t i = 0; i <= max_len; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == 0) return "";
    if (c < 0x20 || c == 0x7f) return "contains a control character at offset " + std::to_string(i);
  }
  return "is longer than " + std::to_string(max_len) + " characters (unterminated?)";
}

// Kernel names land in CSV columns, markdown tables and --kernel options.
std::string check_kernel_name(const char* s) {
  std::string why = check_text(s, kMaxNameLen);
  if (!why.empty()) return why;
  if (!*s) return "is empty";
  for (const char* p = s; *p; ++p) {
    const char c = *p;
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '-' || c == '.' || c == '+';
    if (!ok) return std::string("has '") + c + "': only letters, digits, '_', '-', '.', '+' are allowed";
  }
  return "";
}

std::string quoted(const char* s) { return s ? "\"" + std::string(s) + "\"" : "(null)"; }

// What one kernel descriptor gets wrong, or "" if it is well formed.
std::string check_kernel(const rb_kernel& k) {
  if (std::string why = check_kernel_name(k.name); !why.empty()) return "name " + why;
  if (k.description)
    if (std::string why = check_text(k.description, kMaxTextLen); !why.empty()) return "description " + why;
  if (k.ops == 0) return "declares no ops";
  if (k.ops & ~static_cast<std::uint32_t>(RB_OP_ALL))
    return "ops has unknown bits (0x" + [&] {
      char buf[16];
      std::snprintf(buf, sizeof buf, "%x",
                    static_cast<unsigned>(k.ops & ~static_cast<std::uint32_t>(RB_OP_ALL)));
      return std::string(buf);
    }() + ")";
  if ((k.ops & RB_OP_FWD) && !k.fwd) return "declares fwd but its fwd launch function is NULL";
  if ((k.ops & RB_OP_ADD) && !k.add) return "declares add but its add launch function is NULL";
  if ((k.ops & (RB_OP_BWD | RB_OP_ADD_BWD)) && !k.bwd)
    return std::string("declares ") + ((k.ops & RB_OP_BWD) ? "bwd" : "add-bwd") +
           " but its bwd launch function is NULL";
  if (k.num_dtypes == 0 || !k.dtypes) return "declares no dtype combos";
  if (k.num_dtypes > 64) return "declares " + std::to_string(k.num_dtypes) + " dtype combos (garbage count?)";
  for (std::size_t i = 0; i < k.num_dtypes; ++i)
    if (!from_c(k.dtypes[i].x) || !from_c(k.dtypes[i].w))
      return "dtype combo " + std::to_string(i) + " has an unknown dtype (" + std::to_string(raw_dtype(k.dtypes[i].x)) +
             ", " + std::to_string(raw_dtype(k.dtypes[i].w)) + ")";
  if (k.min_H < 1) return "min_H=" + std::to_string(k.min_H) + " (must be >= 1)";
  if (k.max_H < k.min_H)
    return "max_H=" + std::to_string(k.max_H) + " is below min_H=" + std::to_string(k.min_H) +
           " (INT64_MAX means no limit)";
  const std::uint32_t a = k.base_align;
  if (!(a == 0 || a == 1 || a == 2 || a == 4 || a == 8 || a == 16))
    return "base_align=" + std::to_string(a) + " (must be 0/1 for any, 2, 4, 8 or 16)";
  return "";
}

std::string describe_alignment(std::uint32_t base_align) {
  if (base_align <= 1) return "any";
  return "base pointers " + std::to_string(base_align) + "-byte aligned";
}

// A plugin kernel prepared for one problem.
class PluginPlan final : public Plan {
 public:
  PluginPlan(const rb_kernel* k, std::string name, const Problem& p)
      : k_(k), name_(std::move(name)), op_(p.op) {
    if (k_->workspace_bytes) {
      const rb_problem c = to_c(p);
      workspace_ = k_->workspace_bytes(&c);
    }
  }

  std::size_t workspace_bytes() const override { return workspace_; }
  std::string picked() const override { return name_; }

  cudaError_t launch(const LaunchArgs& args, cudaStream_t s) override {
    void* stream = static_cast<void*>(s);
    return std::visit(
        [&](const auto& a) -> cudaError_t {
          using A = std::decay_t<decltype(a)>;
          int rc = static_cast<int>(cudaErrorInvalidValue);  // arguments of another op family
          if constexpr (std::is_same_v<A, FwdArgs>) {
            if (op_ == Op::fwd) {
              const rb_fwd_args c = to_c(a);
              rc = k_->fwd(&c, stream);
            }
          } else if constexpr (std::is_same_v<A, AddArgs>) {
            if (op_ == Op::add) {
              const rb_add_args c = to_c(a);
              rc = k_->add(&c, stream);
            }
          } else {
            static_assert(std::is_same_v<A, BwdArgs>);
            if (is_backward(op_)) {  // bwd and add-bwd: ds_out tells them apart
              const rb_bwd_args c = to_c(a);
              rc = k_->bwd(&c, stream);
            }
          }
          return static_cast<cudaError_t>(rc);
        },
        args);
  }

 private:
  const rb_kernel* k_;
  std::string name_;
  Op op_;
  std::size_t workspace_ = 0;
};

KernelInfo make_kernel_info(const rb_plugin& plugin, const rb_kernel& k, const std::string& origin) {
  KernelInfo info;
  info.name = std::string("plugin:") + k.name;
  info.provider = "plugin";
  info.version = plugin.version;
  info.description = std::string(k.description ? k.description : "") + (k.description ? " " : "") + "[" +
                     plugin.name + (*plugin.version ? " " + std::string(plugin.version) : "") + ", " +
                     origin + "]";
  for (Op op : {Op::fwd, Op::bwd, Op::add, Op::add_bwd})
    if (k.ops & to_c(op)) info.ops.push_back(op);
  for (std::size_t i = 0; i < k.num_dtypes; ++i)
    info.dtypes.push_back(DtypeCombo{*from_c(k.dtypes[i].x), *from_c(k.dtypes[i].w)});
  info.min_H = k.min_H;
  const std::int64_t max_H = k.max_H;
  info.max_H = [max_H](const Problem&) { return max_H; };
  info.alignment = describe_alignment(k.base_align);

  const rb_kernel* kp = &k;
  const std::string self = info.name;
  info.supports = [kp, self](const Problem& p) -> std::optional<std::string> {
    if (p.H > kp->max_H)
      return self + " holds rows up to H=" + std::to_string(kp->max_H) + "; H=" + std::to_string(p.H) +
             " is larger";
    if (kp->base_align > 1 && p.base_align < static_cast<std::int64_t>(kp->base_align))
      return self + " needs " + std::to_string(kp->base_align) +
             "-byte aligned base pointers; this case's are " + std::to_string(p.base_align) + "-byte aligned";
    if (!kp->supports) return std::nullopt;
    const rb_problem c = to_c(p);
    const char* reason = kp->supports(&c);
    if (!reason) return std::nullopt;
    std::string why = check_text(reason, kMaxTextLen);
    // A reason that is not one printable line is still a refusal; keep what can be shown.
    std::string text = why.empty() ? std::string(reason) : "(unprintable reason: it " + why + ")";
    return self + ": " + (text.empty() ? "unsupported (no reason given)" : text);
  };
  info.prepare = [kp, self](const Problem& p, const std::string& variant) -> std::unique_ptr<Plan> {
    if (!variant.empty()) throw Unsupported(self + " has no variants (asked for \"" + variant + "\")");
    return std::make_unique<PluginPlan>(kp, self, p);
  };
  return info;
}

// Owns a dlopen handle until released (on success the library stays loaded for good).
struct DlCloser {
  void operator()(void* h) const {
    if (h) dlclose(h);
  }
};
using DlHandle = std::unique_ptr<void, DlCloser>;

std::string dl_error_text() {
  const char* e = dlerror();
  return e ? e : "unknown dynamic loader error";
}

[[noreturn]] void fail(const std::string& origin, const std::string& what) {
  throw PluginError("--plugin " + origin + ": " + what);
}

}  // namespace

void register_plugin(const rb_plugin* plugin, const std::string& origin) {
  const auto fail = [&origin](const std::string& what) { rb::fail(origin, what); };

  if (!plugin) fail(std::string(RB_PLUGIN_ENTRY_SYMBOL) + "() returned NULL");
  if (plugin->abi_version != RB_PLUGIN_ABI_VERSION)
    fail("ABI version " + std::to_string(plugin->abi_version) + ", this tool speaks " +
         std::to_string(RB_PLUGIN_ABI_VERSION) + " (rebuild the plugin against this tool's " +
         "include/rmsnorm_bench_plugin.h)");
  if (std::string why = check_kernel_name(plugin->name); !why.empty())
    fail("malformed descriptor: plugin name " + why);
  if (std::string why = check_text(plugin->version, kMaxNameLen); !why.empty())
    fail("malformed descriptor: plugin version " + why);
  if (plugin->num_kernels == 0 || !plugin->kernels) fail("malformed descriptor: it declares no kernels");
  if (plugin->num_kernels > kMaxKernels)
    fail("malformed descriptor: it declares " + std::to_string(plugin->num_kernels) +
         " kernels (garbage count?)");

  std::vector<KernelInfo> infos;
  std::set<std::string> names;
  for (std::size_t i = 0; i < plugin->num_kernels; ++i) {
    const rb_kernel& k = plugin->kernels[i];
    if (std::string why = check_kernel(k); !why.empty()) {
      const bool named = check_kernel_name(k.name).empty();
      fail("malformed descriptor: kernel " + std::to_string(i) + (named ? " (" + quoted(k.name) + ")" : "") +
           ": " + why);
    }
    KernelInfo info = make_kernel_info(*plugin, k, origin);
    if (!names.insert(info.name).second) fail("kernel name \"" + std::string(k.name) + "\" appears twice");
    if (find_kernel(info.name))
      fail("kernel " + info.name + " is already registered (the same plugin loaded twice, or two plugins " +
           "with one kernel name)");
    infos.push_back(std::move(info));
  }
  // All checked: register every kernel (a failure here would be a registry bug or a race).
  for (KernelInfo& info : infos) {
    const std::string name = info.name;
    try {
      register_kernel(std::move(info));
    } catch (const std::invalid_argument& e) {
      fail("kernel " + name + ": " + e.what());
    }
  }
}

void load_plugin(const std::string& path) {
  const auto fail = [&path](const std::string& what) { rb::fail(path, what); };

  if (path.empty()) throw PluginError("--plugin: empty path");
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    const int err = errno;
    fail(err == ENOENT ? std::string("no such file") : std::string(std::strerror(err)));
  }
  if (S_ISDIR(st.st_mode)) fail("is a directory, not a shared library");
  if (!S_ISREG(st.st_mode)) fail("is not a regular file");
  {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) fail(std::string("cannot be read: ") + std::strerror(errno));
    unsigned char magic[4] = {0, 0, 0, 0};
    const std::size_t n = std::fread(magic, 1, sizeof magic, f);
    std::fclose(f);
    if (n != sizeof magic || std::memcmp(magic,
                                         "\x7f"
                                         "ELF",
                                         4) != 0)
      fail("not a shared library (no ELF header)");
  }

  // A bare file name would send dlopen to the library search path; the user means the file.
  const std::string open_path = path.find('/') == std::string::npos ? "./" + path : path;
  dlerror();  // clear any stale error
  DlHandle handle(dlopen(open_path.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (!handle) fail("cannot be loaded as a shared library: " + dl_error_text());

  dlerror();
  void* sym = dlsym(handle.get(), RB_PLUGIN_ENTRY_SYMBOL);
  if (!sym) {
    const char* e = dlerror();
    fail(std::string("no ") + RB_PLUGIN_ENTRY_SYMBOL +
         " symbol: not an rmsnorm-bench plugin, or its entry is " +
         "mangled or hidden (define it after including rmsnorm_bench_plugin.h, which declares it " +
         "extern \"C\" and exported)" + (e ? std::string(" (") + e + ")" : ""));
  }
  rb_plugin_entry_fn entry = nullptr;
  static_assert(sizeof entry == sizeof sym, "function and object pointers differ in size");
  std::memcpy(&entry, &sym, sizeof entry);  // POSIX: dlsym's object pointer names the function

  register_plugin(entry(), path);
  handle.release();  // the registered kernels point into the library: it stays loaded
}

}  // namespace rb

// User kernels loaded at run time through the C plugin ABI (include/rmsnorm_bench_plugin.h).
// `--plugin lib.so` opens the library, checks what it declares and registers each of its
// kernels as `plugin:<name>` (provider "plugin", version = the plugin's) in the kernel
// registry, where they run like any other kernel. The library stays loaded until exit.
#pragma once

#include <stdexcept>
#include <string>

#include "include/rmsnorm_bench_plugin.h"

namespace rb {

// A plugin that cannot be used: missing or unreadable file, not a shared library, no entry
// symbol, another ABI version, a malformed descriptor, a kernel name already registered.
// The message starts with "--plugin <path>: " and says what is wrong. A usage error (exit 2).
class PluginError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Loads the plugin file at `path` (a file name without '/' means ./name, not the dynamic
// loader's search path) and registers all of its kernels, or none of them and throws
// PluginError. Needs no GPU. Not thread-safe: call it before any case runs.
void load_plugin(const std::string& path);

// The checks and registration of load_plugin for a descriptor already in memory (tests; a
// plugin linked into the tool). `origin` names it in messages and descriptions. The
// descriptor and everything it points to must outlive the registry.
void register_plugin(const rb_plugin* plugin, const std::string& origin);

}  // namespace rb

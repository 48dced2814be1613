#include "app/cmd_list.h"

#include <fmt/format.h>

#include "kernels/registry.h"

namespace rb {

CLI::App* setup_list(CLI::App& app, ListOptions& o) {
  CLI::App* sub = app.add_subcommand("list", "List kernels and what each supports");
  sub->add_flag("--all", o.all, "Also list the mutants (deliberately wrong kernels)");
  return sub;
}

int run_list(const ListOptions& o) {
  fmt::print("{:<26} {:<5} {:<44} {:<28} {}\n", "kernel", "ops", "x/w dtypes", "H range (fp32 | fp16/bf16)",
             "alignment");
  for (const KernelInfo& k : kernel_registry()) {
    if (k.mutant && !o.all) continue;
    std::string ops, dts;
    for (Op op : k.ops) ops += (ops.empty() ? "" : ",") + std::string(op_name(op));
    for (const DtypeCombo& c : k.dtypes)
      dts += (dts.empty() ? "" : ",") + std::string(dtype_name(c.x)) + "/" + std::string(dtype_name(c.w));
    auto hmax = [&](DType d) {
      const std::int64_t m = k.max_H(d);
      return m >= (std::int64_t{1} << 40) ? std::string("any") : std::to_string(m);
    };
    const std::string range = fmt::format("{}..{} | {}..{}", k.min_H, hmax(DType::f32), k.min_H, hmax(DType::bf16));
    fmt::print("{:<26} {:<5} {:<44} {:<28} {}\n", k.name, ops, dts, range, k.alignment);
    fmt::print("{:<26} {}{}\n", "", k.mutant ? "[mutant] " : "", k.description);
  }
  return 0;
}

}  // namespace rb

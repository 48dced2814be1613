#include "app/cmd_list.h"

#include <fmt/format.h>

#include "kernels/registry.h"

namespace rb {

CLI::App* setup_list(CLI::App& app, ListOptions& o) {
  CLI::App* sub = app.add_subcommand("list", "List kernels and what each supports");
  sub->add_flag("--all", o.all, "Also list the mutants (deliberately wrong kernels) (default: off)");
  return sub;
}

int run_list(const ListOptions& o) {
  fmt::print("{:<30} {:<20} {:<44} {}\n", "kernel", "ops", "x/w dtypes (residual: x's or fp32)", "alignment");
  for (const KernelInfo& k : kernel_registry()) {
    if (k.mutant && !o.all) continue;
    std::string ops, dts, ranges;
    for (Op op : k.ops) ops += (ops.empty() ? "" : ",") + std::string(op_name(op));
    for (const DtypeCombo& c : k.dtypes)
      dts += (dts.empty() ? "" : ",") + std::string(dtype_name(c.x)) + "/" + std::string(dtype_name(c.w));
    for (Op op : k.ops) {
      auto hmax = [&](DType d) {
        Problem p;
        p.op = op;
        p.x = p.w = p.r = d;
        const std::int64_t m = k.max_H(p);
        return m >= (std::int64_t{1} << 40) ? std::string("any") : std::to_string(m);
      };
      ranges += fmt::format("{}{} {}..{} | {}..{}", ranges.empty() ? "" : "; ", op_name(op), k.min_H,
                            hmax(DType::f32), k.min_H, hmax(DType::bf16));
    }
    fmt::print("{:<30} {:<20} {:<44} {}\n", k.name, ops, dts, k.alignment);
    fmt::print("{:<30} H (fp32 | fp16/bf16): {}\n", "", ranges);
    fmt::print("{:<30} {}{}\n", "", k.mutant ? "[mutant] " : "", k.description);
    fmt::print("{:<30} provider: {}{}{}\n", "", k.provider, k.version.empty() ? "" : " " + k.version,
               k.unavailable.empty() ? "" : " (unavailable: " + k.unavailable + ")");
  }
  return 0;
}

}  // namespace rb

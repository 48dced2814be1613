#include "app/cmd_bisect.h"

#include <fmt/format.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>

#include "app/cli_checks.h"
#include "app/exit_codes.h"
#include "app/lists.h"
#include "app/process.h"
#include "harness/bisect_run.h"
#include "harness/cuda_check.h"
#include "harness/device.h"
#include "harness/host_types.h"
#include "kernels/registry.h"
#include "reports/atomic_file.h"
#include "reports/markdown.h"
#include "reports/npy.h"
#include "reports/record.h"

namespace rb {
namespace {

namespace fs = std::filesystem;

constexpr const char* kCaseFile = "case.ini";

// The case options, shared by the command line and a reproducer's case file.
void add_case_options(CLI::App& app, BisectOptions& o) {
  const DtypeOptionNames names = dtype_option_names();
  const std::vector<std::string>&dtypes = names.x, &wdtypes = names.w, &ydtypes = names.y;
  const auto kernel_ok = CLI::Validator(
      [](std::string& s) {
        std::string variant;
        return find_kernel(s, &variant) ? std::string() : "unknown kernel '" + s + "' (see `rmsnorm-bench list --all`)";
      },
      "KERNEL");
  app.add_option("--kernel", o.kernel, "Side A: a kernel (built-in, vendor, plugin:NAME, mutant, NAME@variant)")
      ->check(kernel_ok);
  app.add_option("--against", o.against, "Side B: a kernel, or `reference` (the fp64 reference)")
      ->check(CLI::Validator(
          [](std::string& s) {
            std::string variant;
            return s == BisectSide::kReferenceSide || find_kernel(s, &variant)
                       ? std::string()
                       : "unknown kernel '" + s + "' (a kernel, or reference)";
          },
          "KERNEL|reference"));
  app.add_option("--convention", o.convention, "Convention side A is asked to follow")
      ->check(CLI::IsMember(all_names<Convention>()));
  app.add_option("--against-convention", o.against_convention, "Convention of side B")
      ->check(CLI::IsMember(all_names<Convention>()))
      ->default_str("--convention");
  app.add_option("--op", o.op, "Op")->check(CLI::IsMember(all_names<Op>()));
  app.add_option("--dtype", o.dtype, "x dtype")->check(CLI::IsMember(dtypes));
  app.add_option("--wdtype", o.wdtype, "Weight dtype: same (as x) or a dtype")->check(CLI::IsMember(wdtypes));
  app.add_option("--rdtype", o.rdtype, "Residual-stream dtype (add, add-bwd): same or a dtype")
      ->check(CLI::IsMember(wdtypes));
  app.add_option("--ydtype", o.ydtype, "y dtype (fwd, add): same or e4m3, e5m2")->check(CLI::IsMember(ydtypes));
  add_parsed(app, "--y-scale", o.y_scale, parse_positive_double, "F", "Scale of an fp8 y (finite, > 0)",
             format_double(o.y_scale));
  add_parsed(
      app, "--M", o.M, [](const std::string& s) { return parse_int_in(s, 1, std::int64_t{1} << 24); }, "INT",
      "Rows (1 to 2^24)", std::to_string(o.M));
  add_parsed(
      app, "--H", o.H, [](const std::string& s) { return parse_int_in(s, 1, std::int64_t{1} << 20); }, "INT",
      "Hidden size (1 to 2^20)", std::to_string(o.H));
  add_parsed(app, "--eps", o.eps, parse_positive_double, "F", "eps (finite, > 0)", format_double(o.eps));
  app.add_option("--dist", o.dist, "Input distribution")->check(CLI::IsMember(all_names<Dist>()));
  app.add_option("--layout", o.layout, "Memory layout")->check(CLI::IsMember(all_names<Layout>()));
  add_parsed(app, "--seed", o.seed, parse_seed, "UINT64", "Seed of the input generators", std::to_string(o.seed));
}

Case base_case(const BisectOptions& o) {
  Case c;
  c.op = *parse_op(o.op);
  c.dtype = *parse_dtype(o.dtype);
  c.wdtype = o.wdtype == "same" ? c.dtype : *parse_dtype(o.wdtype);
  c.rdtype = has_residual(c.op) && o.rdtype != "same" ? *parse_dtype(o.rdtype) : c.dtype;
  if (o.ydtype != "same" && (c.op == Op::fwd || c.op == Op::add)) {
    c.y8 = *parse_dtype(o.ydtype);
    c.y_scale = o.y_scale;
  }
  c.M = o.M;
  c.H = o.H;
  c.eps = o.eps;
  c.dist = *parse_dist(o.dist);
  c.layout = *parse_layout(o.layout);
  c.seed = o.seed;
  return c;
}

BisectSide side_a_of(const BisectOptions& o) { return {o.kernel, *parse_convention(o.convention)}; }
BisectSide side_b_of(const BisectOptions& o) {
  return {o.against, *parse_convention(o.against_convention.empty() ? o.convention : o.against_convention)};
}

// ---- files ---------------------------------------------------------------------------------

std::string stem(Tensor t) { return t == Tensor::saved_rrms ? "saved_rrms" : tensor_name(t); }

// numpy has no bf16 or fp8: their bits ('<u2', '|u1'); case.ini names the dtype.
std::string npy_descr(DType t) {
  switch (t) {
    case DType::f32: return "<f4";
    case DType::f16: return "<f2";
    case DType::bf16: return "<u2";
    case DType::e4m3:
    case DType::e5m2: break;
  }
  return "|u1";
}

std::vector<std::int64_t> npy_shape(Shape s, const Case& c) {
  switch (s) {
    case Shape::matrix: return {c.M, c.H};
    case Shape::per_column: return {c.H};
    case Shape::per_row: return {c.M};
    case Shape::scalar: break;
  }
  return {1};
}

// Each tensor of the op with its dtype and shape, inputs then outputs.
struct TensorInfo {
  Tensor tensor;
  DType dtype;
  Shape shape;
};
std::vector<TensorInfo> input_infos(const Case& c) {
  std::vector<TensorInfo> v;
  for (const InputDesc& d : op_desc(c.op).inputs)
    if (present(d, c)) v.push_back({d.tensor, d.dtype(c), d.shape});
  return v;
}
std::vector<TensorInfo> output_infos(const Case& c) {
  std::vector<TensorInfo> v;
  for (const OutputDesc& d : op_desc(c.op).outputs)
    if (present(d, c)) v.push_back({d.tensor, d.dtype(c), d.shape});
  return v;
}

void write_tensors(const fs::path& dir, const std::string& prefix, const Case& c, const std::vector<TensorInfo>& infos,
                   const TensorBytes& t) {
  for (const TensorInfo& i : infos) {
    const auto it = t.find(i.tensor);
    if (it == t.end()) continue;
    write_npy((dir / (prefix + stem(i.tensor) + ".npy")).string(), {npy_descr(i.dtype), npy_shape(i.shape, c), it->second});
  }
}

TensorBytes read_tensors(const fs::path& dir, const std::string& prefix, const Case& c,
                         const std::vector<TensorInfo>& infos) {
  TensorBytes t;
  for (const TensorInfo& i : infos) {
    const fs::path p = dir / (prefix + stem(i.tensor) + ".npy");
    NpyArray a = read_npy(p.string());
    const std::vector<std::int64_t> want = npy_shape(i.shape, c);
    if (a.descr != npy_descr(i.dtype) || a.shape != want)
      throw NpyError(fmt::format("{}: holds {} of shape ({}), the case needs {} of shape ({})", p.string(), a.descr,
                                 fmt::join(a.shape, ", "), npy_descr(i.dtype), fmt::join(want, ", ")));
    t[i.tensor] = std::move(a.data);
  }
  return t;
}

// The fp64 reference of every output under the case's convention (exact, before rounding).
void write_reference(const fs::path& dir, const std::string& prefix, const Case& c, const TensorBytes& inputs) {
  const std::vector<OutputRef> ref = reference_all_rows(c, inputs);
  const OpDesc& d = op_desc(c.op);
  for (std::size_t i = 0; i < d.outputs.size(); ++i) {
    if (!present(d.outputs[i], c)) continue;
    std::vector<unsigned char> bytes(ref[i].want.size() * sizeof(double));
    std::memcpy(bytes.data(), ref[i].want.data(), bytes.size());
    write_npy((dir / (prefix + stem(d.outputs[i].tensor) + ".npy")).string(),
              {"<f8", npy_shape(d.outputs[i].shape, c), bytes});
  }
}

std::string case_file_text(const BisectOptions& o, const Case& c) {
  std::string s = "# rmsnorm-bench bisect reproducer: the case. Its inputs are the .npy files beside it (not\n"
                  "# regenerated from the seed); `rmsnorm-bench bisect --replay DIR` reruns it.\n";
  const auto kv = [&](const char* k, const std::string& v) { s += fmt::format("{}=\"{}\"\n", k, v); };
  kv("kernel", o.kernel);
  kv("against", o.against);
  kv("convention", o.convention);
  kv("against-convention", o.against_convention.empty() ? o.convention : o.against_convention);
  kv("op", std::string(op_name(c.op)));
  kv("dtype", std::string(dtype_name(c.dtype)));
  kv("wdtype", std::string(dtype_name(c.wdtype)));
  kv("rdtype", std::string(dtype_name(c.rdtype)));
  kv("ydtype", c.y8 ? std::string(dtype_name(*c.y8)) : "same");
  kv("y-scale", format_double(c.y_scale));
  kv("M", std::to_string(c.M));
  kv("H", std::to_string(c.H));
  kv("eps", format_double(c.eps));
  kv("dist", std::string(dist_name(c.dist)));
  kv("layout", std::string(layout_name(c.layout)));
  kv("seed", std::to_string(c.seed));
  return s;
}

BisectOptions read_case_file(const fs::path& path) {
  CLI::App app{"bisect case file"};
  BisectOptions o;
  add_case_options(app, o);
  app.set_config("--case-file", path.string(), "", true);
  app.allow_config_extras(false);
  try {
    app.parse(std::vector<std::string>{});
  } catch (const CLI::ParseError& e) {
    throw std::invalid_argument(fmt::format("{}: {}", path.string(), e.what()));
  }
  return o;
}

// ---- the report ------------------------------------------------------------------------------

std::string value_text(double v) { return fmt::format("{:.9g}", v); }

std::string histogram_table(const OutputBisect& o) {
  std::string md = "| ULP distance | A vs B | A vs fp64 | B vs fp64 |\n|---|---:|---:|---:|\n";
  for (std::size_t b = 0; b < UlpHistogram::kBuckets; ++b) {
    if (!o.a_vs_b.counts[b] && !o.a_vs_ref.counts[b] && !o.b_vs_ref.counts[b]) continue;
    md += fmt::format("| {} | {} | {} | {} |\n", UlpHistogram::labels()[b], o.a_vs_b.counts[b], o.a_vs_ref.counts[b],
                      o.b_vs_ref.counts[b]);
  }
  if (o.a_vs_b.nan || o.a_vs_ref.nan || o.b_vs_ref.nan)
    md += fmt::format("| NaN vs number | {} | {} | {} |\n", o.a_vs_b.nan, o.a_vs_ref.nan, o.b_vs_ref.nan);
  md += fmt::format("| max | {} | {} | {} |\n", o.a_vs_b.max, o.a_vs_ref.max, o.b_vs_ref.max);
  return md;
}

std::string element_text(const BisectElement& e) {
  const std::string at = e.row < 0 ? fmt::format("col {}", e.col) : fmt::format("(row {}, col {})", e.row, e.col);
  return fmt::format("{}: A {} B {} fp64 {} ({} ulp)", at, value_text(e.a), value_text(e.b), value_text(e.ref),
                     e.ulps == std::numeric_limits<std::uint64_t>::max() ? std::string("NaN") : std::to_string(e.ulps));
}

std::string row_text(const char* what, const RowStats& s, const Case& c) {
  std::string t = fmt::format("- {} divergent row {}: H {}, mean square {}, rrms exact {}", what, s.row, c.H,
                              value_text(s.mean_square), value_text(s.rrms_exact));
  if (s.rrms_a) t += ", A saved " + value_text(*s.rrms_a);
  if (s.rrms_b) t += ", B saved " + value_text(*s.rrms_b);
  t += fmt::format(", max |x| {} at col {}, {} divergent element(s) in the row\n", value_text(s.max_abs_x), s.argmax_x,
                   s.divergent);
  return t;
}

std::string case_text(const Case& c) {
  std::string t = fmt::format("{} x={} w={}", op_name(c.op), dtype_name(c.dtype), dtype_name(c.wdtype));
  if (has_residual(c.op)) t += fmt::format(" r={}", dtype_name(c.rdtype));
  if (c.y8) t += fmt::format(" y={} scale={}", dtype_name(*c.y8), format_double(c.y_scale));
  t += fmt::format(" M={} H={} eps={} {} {} seed={}", c.M, c.H, format_double(c.eps), dist_name(c.dist),
                   layout_name(c.layout), c.seed);
  return t;
}

std::string fits_text(const std::vector<ConventionFit>& f) {
  if (f.empty()) return "(the reference: its own convention)";
  std::string t;
  for (const ConventionFit& x : f)
    t += fmt::format("{}{} {:.3f}% exact (max {} ulp)", t.empty() ? "" : ", ", convention_name(x.conv),
                     100 * x.exact_fraction, x.max_ulp);
  return t;
}

std::string result_markdown(const BisectResult& r) {
  std::string md = fmt::format("Case: `{}`\n\nA: `{}`; B: `{}`\n\n", case_text(r.a), r.side_a.label(), r.side_b.label());
  md += fmt::format("**Verdict: {}.** Stage where they part: **{}**{}\n\n",
                    r.diverge ? "they diverge" : "they agree within the tolerance", stage_name(r.stage),
                    r.stage_detail.empty() ? "" : ". " + r.stage_detail);
  md += fmt::format("Closest convention: A {}; B {}\n\n", fits_text(r.fit_a), fits_text(r.fit_b));
  for (const OutputBisect& o : r.outputs) {
    md += fmt::format("### {} ({}): {} divergent of {}\n\n", tensor_name(o.tensor), dtype_name(o.dtype), o.divergent,
                      o.a_vs_b.total);
    md += histogram_table(o) + "\n";
    if (o.divergent) md += "- first: " + element_text(o.first) + "\n- worst: " + element_text(o.worst) + "\n\n";
  }
  if (r.first_row) md += row_text("first", *r.first_row, r.a);
  if (r.worst_row) md += row_text("worst", *r.worst_row, r.a);
  return md;
}

std::string histogram_csv(const BisectResult& r) {
  std::string s = "output,comparison,bucket,count\n";
  for (const OutputBisect& o : r.outputs)
    for (const auto& [name, h] : {std::pair<const char*, const UlpHistogram*>{"A vs B", &o.a_vs_b},
                                  {"A vs fp64", &o.a_vs_ref},
                                  {"B vs fp64", &o.b_vs_ref}}) {
      for (std::size_t b = 0; b < UlpHistogram::kBuckets; ++b)
        s += fmt::format("{},{},{},{}\n", tensor_name(o.tensor), name, UlpHistogram::labels()[b], h->counts[b]);
      s += fmt::format("{},{},NaN,{}\n", tensor_name(o.tensor), name, h->nan);
    }
  return s;
}

// --plots: scripts/plot_bisect.py draws ulp_hist.png from ulp_hist.csv.
bool draw_plot(const fs::path& dir) {
  const std::string script = find_script("plot_bisect.py");
  const pid_t pid = spawn_process("/usr/bin/python3", {"python3", script, (dir / "ulp_hist.csv").string(), "-o",
                                                        (dir / "ulp_hist.png").string()});
  const int rc = pid < 0 ? -1 : wait_process(pid);
  if (rc != 0)
    std::cerr << "rmsnorm-bench bisect: --plots: " << script << " failed (exit " << rc
              << "); no plot (needs /usr/bin/python3 with matplotlib)\n";
  return rc == 0;
}

void write_report(const fs::path& dir, const std::string& title, const std::string& body, const BisectResult& r,
                  bool plots) {
  write_file_atomic((dir / "ulp_hist.csv").string(), histogram_csv(r));
  std::string md = "# " + title + "\n\n" + body;
  if (plots && draw_plot(dir)) md += "\n![ULP distance histograms](ulp_hist.png)\n";
  write_file_atomic((dir / "bisect.md").string(), md);
}

int usage(const std::string& m) {
  std::cerr << "rmsnorm-bench bisect: " << m << "\n";
  return kExitUsage;
}

int replay(const BisectOptions& cli) {
  const fs::path dir = cli.replay;
  if (!fs::is_regular_file(dir / kCaseFile))
    return usage(fmt::format("--replay {}: no {} there (not a reproducer directory)", dir.string(), kCaseFile));
  BisectOptions o;
  Case base;
  TensorBytes inputs, saved_a, saved_b;
  try {
    o = read_case_file(dir / kCaseFile);
    base = base_case(o);
    inputs = read_tensors(dir, "", side_case(base, side_a_of(o)), input_infos(base));
    saved_a = read_tensors(dir, "a_", base, output_infos(base));
    saved_b = read_tensors(dir, "b_", base, output_infos(base));
  } catch (const std::exception& e) {
    return usage(e.what());
  }
  const BisectSide sa = side_a_of(o), sb = side_b_of(o);
  const Case a = side_case(base, sa), b = side_case(base, sb);
  std::string why;
  const bool gpu = cuda_device_available(&why);
  std::string notes;
  bool reproduced = true;
  const auto check_side = [&](const char* name, const TensorBytes& now, const TensorBytes& saved) {
    for (const auto& [t, bytes] : saved) {
      const auto it = now.find(t);
      const bool same = it != now.end() && it->second == bytes;
      notes += fmt::format("- {} {}: {}\n", name, tensor_name(t), same ? "bit-exact" : "DIFFERS from the saved output");
      reproduced = reproduced && same;
    }
  };
  SideOutputs now;
  if (gpu) {
    now = SideRunner(open_device(cli.device)).run(a, sa, b, sb, inputs);
    check_side("A", now.a, saved_a);
    check_side("B", now.b, saved_b);
  } else {
    notes += fmt::format("- no GPU ({}): the kernel side(s) are not rerun; the saved outputs are analysed\n", why);
    if (sa.is_reference()) check_side("A", reference_outputs(a, inputs), saved_a);
    if (sb.is_reference()) check_side("B", reference_outputs(b, inputs), saved_b);
  }
  // The saved fp64 reference, recomputed on this machine.
  {
    const fs::path tmp = fs::temp_directory_path() / fmt::format("rb-replay-{}", ::getpid());
    fs::create_directories(tmp);
    write_reference(tmp, "ref_", a, inputs);
    for (const TensorInfo& i : output_infos(base)) {
      const std::string f = "ref_" + stem(i.tensor) + ".npy";
      if (!fs::exists(dir / f)) continue;
      const bool same = read_npy((dir / f).string()).data == read_npy((tmp / f).string()).data;
      notes += fmt::format("- fp64 reference {}: {}\n", tensor_name(i.tensor), same ? "bit-exact" : "DIFFERS");
      reproduced = reproduced && same;
    }
    fs::remove_all(tmp);
  }
  BisectResult r = bisect_outputs(a, sa, b, sb, inputs, saved_a, saved_b);
  add_outside_writes(r, now.outside_a, now.outside_b);
  std::string body = "Replay of " + dir.string() + ":\n\n" + notes + "\n" + result_markdown(r);
  std::cout << body;
  if (!reproduced) std::cout << "\nNOT REPRODUCED: a rerun differs from the saved outputs (exit 1)\n";
  return !reproduced || r.diverge ? kExitFail : kExitPass;
}

}  // namespace

void write_reproducer(const std::string& dir_name, const BisectOptions& o, const Case& c, const TensorBytes& inputs,
                      const TensorBytes& out_a, const TensorBytes& out_b) {
  const fs::path dir = dir_name;
  fs::create_directories(dir);
  write_file_atomic((dir / kCaseFile).string(), case_file_text(o, c));
  write_tensors(dir, "", c, input_infos(c), inputs);
  write_tensors(dir, "a_", c, output_infos(c), out_a);
  write_tensors(dir, "b_", c, output_infos(c), out_b);
  write_reference(dir, "ref_", c, inputs);
  write_file_atomic((dir / "command.txt").string(),
                    fmt::format("{}\n# replay:\n{} bisect --replay {}\n", o.command_line,
                                (fs::path(executable_dir()) / "rmsnorm-bench").string(), dir.string()));
}

CLI::App* setup_bisect(CLI::App& app, BisectOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "bisect",
      "Where two kernels (or a kernel and the fp64 reference under a convention) part, on the same inputs; writes a "
      "minimal reproducer (exit 0 agree, 1 diverge, 2 usage, 3 no GPU, 4 CUDA error)");
  add_case_options(*sub, o);
  sub->add_option("--out", o.out_dir, "Reproducer directory (inputs and both outputs as .npy, case.ini, bisect.md)");
  sub->add_flag("--no-shrink", o.no_shrink, "Keep the case as given (default: shrink to a minimal reproducer)");
  sub->add_flag("--plots", o.plots, "Draw the ULP histograms (ulp_hist.png; python3-matplotlib) (default: off)");
  add_parsed(
      *sub, "--device", o.device, [](const std::string& s) { return parse_int_in(s, 0, 1023); }, "INDEX",
      "CUDA device index (0 to 1023)", std::to_string(o.device));
  sub->add_option("--replay", o.replay, "Rerun a reproducer directory instead (the reference side needs no GPU)")
      ->check(CLI::ExistingDirectory);
  return sub;
}

int run_bisect_command(const BisectOptions& o) {
  if (!o.replay.empty()) return replay(o);
  if (o.kernel.empty()) return usage("--kernel is required (side A: a kernel)");
  const Case base = base_case(o);
  const BisectSide sa = side_a_of(o), sb = side_b_of(o);
  if (sa.is_reference()) return usage("--kernel must name a kernel; `reference` goes in --against");
  // Both sides must accept the case before any GPU work.
  for (const BisectSide& s : {sa, sb}) {
    if (s.is_reference()) continue;
    std::string variant;
    const KernelInfo* k = find_kernel(s.kernel, &variant);
    if (auto why = check_common(*k, problem_of(side_case(base, s))))
      return usage(fmt::format("{} cannot run this case: {}", s.kernel, *why));
  }
  const fs::path dir = o.out_dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) return usage(fmt::format("--out {}: cannot create it ({})", dir.string(), ec.message()));
  std::string why;
  if (!cuda_device_available(&why)) {
    std::cerr << "rmsnorm-bench bisect: no usable CUDA device: " << why << "\n";
    return kExitNoDevice;
  }
  BisectRun run;
  try {
    run = run_bisect(open_device(o.device), base, sa, sb, !o.no_shrink);
  } catch (const SideError& e) {
    return usage(e.what());
  }
  // The reproducer: the minimal case, its inputs, both outputs, the fp64 reference.
  write_reproducer(dir.string(), o, run.minimal.a, run.inputs, run.outputs.a, run.outputs.b);
  std::string body = "## The case as asked\n\n" + result_markdown(run.full);
  if (run.full.diverge)
    body += fmt::format("\n## Minimal reproducer ({} trial(s): {})\n\n{}", run.trials, run.shrink_note,
                        result_markdown(run.minimal));
  body += fmt::format("\nReproducer: `{}` (replay: `rmsnorm-bench bisect --replay {}`)\n", dir.string(), dir.string());
  write_report(dir, fmt::format("bisect: {} against {}", sa.label(), sb.label()), body, run.minimal, o.plots);
  std::cout << body;
  return run.full.diverge ? kExitFail : kExitPass;
}

}  // namespace rb

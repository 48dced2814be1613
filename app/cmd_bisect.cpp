#include "app/cmd_bisect.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "app/cli_checks.h"
#include "app/exit_codes.h"
#include "app/lists.h"
#include "app/process.h"
#include "app/run_output.h"
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
constexpr const char* kRefPrefix = "ref_";  // the fp64 reference's files
constexpr const char* kRefDescr = "<f8";

// The case options, shared by the command line and a reproducer's case file. Returns them
// (CLI11 keeps an app's options in the order they were added).
std::vector<const CLI::Option*> add_case_options(CLI::App& app, BisectOptions& o) {
  const std::size_t before = app.get_options().size();
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
  add_parsed(app, "--y-scale", o.y_scale, parse_positive_double, "F",
             "Scale of an fp8 y (> 0, within fp32's normal range)",
             format_double(o.y_scale));
  add_parsed(
      app, "--M", o.M, [](const std::string& s) { return parse_int_in(s, 1, std::int64_t{1} << 24); }, "INT",
      "Rows (1 to 2^24)", std::to_string(o.M));
  add_parsed(
      app, "--H", o.H, [](const std::string& s) { return parse_int_in(s, 1, std::int64_t{1} << 20); }, "INT",
      "Hidden size (1 to 2^20)", std::to_string(o.H));
  add_parsed(app, "--eps", o.eps, parse_positive_double, "F", "eps (> 0, within fp32's normal range)",
             format_double(o.eps));
  app.add_option("--dist", o.dist, "Input distribution")->check(CLI::IsMember(all_names<Dist>()));
  app.add_option("--layout", o.layout, "Memory layout")->check(CLI::IsMember(all_names<Layout>()));
  add_parsed(app, "--seed", o.seed, parse_seed, "UINT64", "Seed of the input generators", std::to_string(o.seed));
  const std::vector<CLI::Option*> all = app.get_options();
  return {all.begin() + static_cast<std::ptrdiff_t>(before), all.end()};
}

Case base_case(const BisectOptions& o) {
  Case c;
  c.op = *parse_op(o.op);
  c.dtype = *parse_dtype(o.dtype);
  c.wdtype = o.wdtype == "same" ? c.dtype : *parse_dtype(o.wdtype);
  c.rdtype = has_residual(c.op) && o.rdtype != "same" ? *parse_dtype(o.rdtype) : c.dtype;
  if (o.ydtype != "same" && has_fp8_output(c.op)) {
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

// A dtype option the case does not read (--ydtype e4m3 with --op bwd), as its refusal ("" when
// none): base_case drops it, so the bisect would run another case than asked. A y scale other
// than 1 counts as given (1 is an unscaled y's too), and so does a residual dtype other than
// x's (a case file names x's for an op without a residual stream).
std::string unread_option(const BisectOptions& o, const Case& base) {
  const std::string rdtype = o.rdtype == o.dtype ? "same" : o.rdtype;
  return unread_dtype_option({base.op}, {o.ydtype}, {rdtype}, o.y_scale != 1.0, base.y8.has_value());
}

BisectSide side_a_of(const BisectOptions& o) { return {o.kernel, *parse_convention(o.convention)}; }
BisectSide side_b_of(const BisectOptions& o) {
  return {o.against, *parse_convention(o.against_convention.empty() ? o.convention : o.against_convention)};
}

// Why a side cannot run the case (check_common's reason), decided before any GPU work;
// nullopt when both can.
std::optional<std::string> side_refusal(const Case& base, const BisectSide& sa, const BisectSide& sb) {
  for (const BisectSide& s : {sa, sb}) {
    if (s.is_reference()) continue;
    std::string variant;
    const KernelInfo* k = find_kernel(s.kernel, &variant);
    if (!k) return fmt::format("unknown kernel '{}'", s.kernel);
    if (auto why = check_common(*k, problem_of(side_case(base, s))))
      return fmt::format("{} cannot run this case: {}", s.kernel, *why);
  }
  return std::nullopt;
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

// A reproducer's .npy file: its data, refused (NpyError naming the file) unless it holds what
// the case needs, `descr` of `shape`.
std::vector<unsigned char> read_checked(const fs::path& p, const std::string& descr,
                                        const std::vector<std::int64_t>& shape) {
  NpyArray a = read_npy(p.string());
  if (a.descr != descr || a.shape != shape)
    throw NpyError(fmt::format("{}: holds {} of shape ({}), the case needs {} of shape ({})", p.string(),
                               a.descr, fmt::join(a.shape, ", "), descr, fmt::join(shape, ", ")));
  return std::move(a.data);
}

TensorBytes read_tensors(const fs::path& dir, const std::string& prefix, const Case& c,
                         const std::vector<TensorInfo>& infos) {
  TensorBytes t;
  for (const TensorInfo& i : infos)
    t[i.tensor] =
        read_checked(dir / (prefix + stem(i.tensor) + ".npy"), npy_descr(i.dtype), npy_shape(i.shape, c));
  return t;
}

// The fp64 reference of every output under the case's convention (exact, before rounding),
// as float64 bytes.
TensorBytes reference_f64(const Case& c, const TensorBytes& inputs) {
  const std::vector<OutputRef> ref = reference_all_rows(c, inputs);
  const OpDesc& d = op_desc(c.op);
  TensorBytes t;
  for (std::size_t i = 0; i < d.outputs.size(); ++i) {
    if (!present(d.outputs[i], c)) continue;
    std::vector<unsigned char>& bytes = t[d.outputs[i].tensor];
    bytes.resize(ref[i].want.size() * sizeof(double));
    std::memcpy(bytes.data(), ref[i].want.data(), bytes.size());
  }
  return t;
}

void write_reference(const fs::path& dir, const Case& c, const TensorBytes& inputs) {
  const TensorBytes ref = reference_f64(c, inputs);
  for (const TensorInfo& i : output_infos(c))
    write_npy((dir / (kRefPrefix + stem(i.tensor) + ".npy")).string(),
              {kRefDescr, npy_shape(i.shape, c), ref.at(i.tensor)});
}

// The saved fp64 reference of the outputs that have one (a hand-made reproducer may leave it
// out).
TensorBytes read_reference(const fs::path& dir, const Case& c) {
  TensorBytes t;
  for (const TensorInfo& i : output_infos(c)) {
    const fs::path p = dir / (kRefPrefix + stem(i.tensor) + ".npy");
    if (fs::exists(p)) t[i.tensor] = read_checked(p, kRefDescr, npy_shape(i.shape, c));
  }
  return t;
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

// CLI11 reads the case file (its config format, the case options' own checks) one line at a
// time, so that a refusal names its line: CLI11 gives no line numbers, and of a key given
// twice it keeps the first without a word. Every key is required: a default would replay
// another case than the one saved. Throws std::invalid_argument naming path(:line).
BisectOptions read_case_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(fmt::format("{}: cannot open", path.string()));
  BisectOptions o;
  std::vector<std::string> keys;
  {
    CLI::App app;
    for (const CLI::Option* opt : add_case_options(app, o)) keys.push_back(opt->get_single_name());
  }
  std::map<std::string, int> line_of;  // each key's line
  int n = 0;
  for (std::string text; std::getline(in, text);) {
    const std::string where = fmt::format("{}:{}", path.string(), ++n);
    CLI::App app{"bisect case file line"};
    add_case_options(app, o);
    std::istringstream items(text), values(text);
    for (const CLI::ConfigItem& item : app.get_config_formatter_base()->from_config(items)) {
      if (!item.parents.empty() || std::find(keys.begin(), keys.end(), item.name) == keys.end())
        throw std::invalid_argument(
            fmt::format("{}: '{}': no such key (a line is key=\"value\", the keys: {})", where, text,
                        fmt::join(keys, ", ")));
      if (const auto [at, first] = line_of.emplace(item.name, n); !first)
        throw std::invalid_argument(fmt::format("{}: {} given again (first on line {}): give each key once",
                                                where, item.name, at->second));
    }
    try {
      app.parse_from_stream(values);
    } catch (const CLI::ParseError& e) {
      throw std::invalid_argument(fmt::format("{}: {}", where, e.what()));
    }
  }
  std::vector<std::string> missing;
  for (const std::string& k : keys)
    if (!line_of.count(k)) missing.push_back(k + "=");
  if (!missing.empty())
    throw std::invalid_argument(fmt::format("{}: no {} (a case file gives every key: {})", path.string(),
                                            fmt::join(missing, ", "), fmt::join(keys, ", ")));
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

// The directories a path needs that do not exist yet, removed again (deepest first) on
// destruction where they are still empty: --out is created before any GPU work to prove it
// writable, and a bisect that ends before writing into it (no GPU, a side refused, a CUDA
// error) must not leave an empty directory behind.
class NewDirectories {
 public:
  explicit NewDirectories(const fs::path& dir) {
    std::error_code ec;
    for (fs::path p = dir; !p.empty() && fs::symlink_status(p, ec).type() == fs::file_type::not_found;
         p = p.parent_path())
      missing_.push_back(p);
  }
  ~NewDirectories() {
    std::error_code ec;
    for (const fs::path& p : missing_)
      if (fs::is_directory(fs::symlink_status(p, ec))) fs::remove(p, ec);  // fails where it holds anything
  }
  NewDirectories(const NewDirectories&) = delete;
  NewDirectories& operator=(const NewDirectories&) = delete;

 private:
  std::vector<fs::path> missing_;
};

int replay(const BisectOptions& cli) {
  const fs::path dir = cli.replay;
  if (!fs::is_regular_file(dir / kCaseFile))
    return usage(fmt::format("--replay {}: no {} there (not a reproducer directory)", dir.string(), kCaseFile));
  // Every file of the directory is read and checked before any GPU work: a bad one is a usage
  // error naming it.
  BisectOptions o;
  Case base;
  TensorBytes inputs, saved_a, saved_b, saved_ref;
  try {
    o = read_case_file(dir / kCaseFile);
    base = base_case(o);
    inputs = read_tensors(dir, "", side_case(base, side_a_of(o)), input_infos(base));
    saved_a = read_tensors(dir, "a_", base, output_infos(base));
    saved_b = read_tensors(dir, "b_", base, output_infos(base));
    saved_ref = read_reference(dir, base);
  } catch (const std::exception& e) {
    return usage(e.what());
  }
  const BisectSide sa = side_a_of(o), sb = side_b_of(o);
  if (const std::string why = unread_option(o, base); !why.empty())
    return usage(fmt::format("{}: {}", (dir / kCaseFile).string(), why));
  if (auto why = side_refusal(base, sa, sb))
    return usage(fmt::format("{}: {}", (dir / kCaseFile).string(), *why));
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
    try {
      now = SideRunner(open_device(cli.device)).run(a, sa, b, sb, inputs);
    } catch (const SideError& e) {
      return usage(e.what());
    }
    check_side("A", now.a, saved_a);
    check_side("B", now.b, saved_b);
  } else {
    notes += fmt::format("- no GPU ({}): the kernel side(s) are not rerun; the saved outputs are analysed\n", why);
    if (sa.is_reference()) check_side("A", reference_outputs(a, inputs), saved_a);
    if (sb.is_reference()) check_side("B", reference_outputs(b, inputs), saved_b);
  }
  // The saved fp64 reference, recomputed on this machine.
  const TensorBytes ref_now = reference_f64(a, inputs);
  for (const TensorInfo& i : output_infos(base)) {
    const auto saved = saved_ref.find(i.tensor);
    if (saved == saved_ref.end()) continue;
    const bool same = saved->second == ref_now.at(i.tensor);
    notes += fmt::format("- fp64 reference {}: {}\n", tensor_name(i.tensor), same ? "bit-exact" : "DIFFERS");
    reproduced = reproduced && same;
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
  write_reference(dir, c, inputs);
  write_file_atomic((dir / "command.txt").string(),
                    fmt::format("{}\n# replay:\n{} bisect --replay {}\n", o.command_line,
                                (fs::path(executable_dir()) / "rmsnorm-bench").string(), dir.string()));
}

CLI::App* setup_bisect(CLI::App& app, BisectOptions& o) {
  CLI::App* sub = app.add_subcommand(
      "bisect",
      "Where two kernels (or a kernel and the fp64 reference under a convention) part, on the same inputs; writes a "
      "minimal reproducer (exit 0 agree, 1 diverge, 2 usage, 3 no GPU, 4 CUDA error)");
  const std::vector<const CLI::Option*> case_options = add_case_options(*sub, o);
  CLI::Option* out = sub->add_option(
                             "--out", o.out_dir, "Reproducer directory (inputs and both outputs as .npy, case.ini, bisect.md)")
                         ->check(non_empty_path());
  CLI::Option* no_shrink = sub->add_flag("--no-shrink", o.no_shrink,
                                         "Keep the case as given (default: shrink to a minimal reproducer)");
  CLI::Option* plots = sub->add_flag(
      "--plots", o.plots, "Draw the ULP histograms (ulp_hist.png; python3-matplotlib) (default: off)");
  add_parsed(
      *sub, "--device", o.device, [](const std::string& s) { return parse_int_in(s, 0, 1023); }, "INDEX",
      "CUDA device index (0 to 1023)", std::to_string(o.device));
  CLI::Option* replay_dir =
      sub->add_option(
             "--replay", o.replay,
             "Rerun a reproducer directory instead: the case comes from DIR/case.ini, the report goes to "
             "the terminal (the reference side needs no GPU; only --device may go with it)")
          ->check(CLI::ExistingDirectory);
  // A replay takes the whole case from DIR/case.ini, writes no files, shrinks nothing and draws
  // no plot: an option that would set any of these is refused with it rather than ignored.
  // --device stays (a replay reruns the kernels on that GPU), and so does main's --plugin (the
  // case may name a plugin's kernel).
  const std::vector<std::pair<const CLI::Option*, std::string>> unused_by_replay = {
      {out, "a replay writes no files (its report goes to the terminal)"},
      {no_shrink, "a replay reruns the saved case as it is, unshrunk"},
      {plots, "a replay draws no plot"}};
  sub->final_callback([replay_dir, case_options, unused_by_replay] {
    if (!replay_dir->count()) return;
    for (const CLI::Option* opt : case_options)
      if (opt->count())
        throw CLI::ValidationError(opt->get_name(),
                                   fmt::format("not with --replay, which takes the case from {}/{}",
                                               replay_dir->as<std::string>(), kCaseFile));
    for (const auto& [opt, why] : unused_by_replay)
      if (opt->count()) throw CLI::ValidationError(opt->get_name(), "not with --replay: " + why);
  });
  return sub;
}

int run_bisect_command(const BisectOptions& o) {
  if (!o.replay.empty()) return replay(o);
  if (o.kernel.empty()) return usage("--kernel is required (side A: a kernel)");
  const Case base = base_case(o);
  const BisectSide sa = side_a_of(o), sb = side_b_of(o);
  if (sa.is_reference()) return usage("--kernel must name a kernel; `reference` goes in --against");
  if (const std::string why = unread_option(o, base); !why.empty()) return usage(why);
  if (auto why = side_refusal(base, sa, sb)) return usage(*why);
  const fs::path dir = o.out_dir;
  const NewDirectories created(dir);
  try {
    check_writable((dir / "bisect.md").string(), "--out");
  } catch (const std::invalid_argument& e) {
    return usage(e.what());
  }
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

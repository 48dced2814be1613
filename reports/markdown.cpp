#include "reports/markdown.h"

#include "reports/terminal.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

namespace rb {
namespace {

constexpr const char* kNone = "—";

// A table cell; an empty one shows a dash.
std::string cell(const std::string& s) { return s.empty() ? kNone : md_escape(s); }

std::string or_none(const std::string& s) { return s.empty() ? kNone : s; }

std::string dtypes(const Record& r) {
  std::string s = r.dtype + "/" + r.wdtype;
  if (!r.rdtype.empty()) s += " (residual " + r.rdtype + ")";
  return s;
}

bool is_vendor(const Record& r) { return r.provider == "cudnn" || r.provider == "cublas"; }

// Shipped built-in kernels: the deliberately broken "mutant-" ones are not contenders.
bool is_builtin(const Record& r) {
  return r.provider == "builtin" && r.kernel.rfind("mutant-", 0) != 0;
}

// "cudnn 9.10.2"; empty for the built-in kernels and for rows that name no provider.
std::string provider_text(const Record& r) {
  if (r.provider.empty() || r.provider == "builtin") return "";
  return r.provider_version.empty() ? r.provider : r.provider + " " + r.provider_version;
}

// The kernel as a table names it: what auto picked, and who provides it unless built in.
std::string kernel_text(const Record& r) {
  std::string s = r.picked.empty() || r.picked == r.kernel ? r.kernel : r.kernel + " → " + r.picked;
  const std::string provider = provider_text(r);
  if (!provider.empty()) s += " (" + provider + ")";
  return s;
}

std::string gbps_with_pct(double gbps, const std::optional<double>& pct) {
  if (pct) return fmt::format("{:.0f} ({:.1f}%)", gbps, *pct);
  return fmt::format("{:.0f}", gbps);
}

void context_section(std::string& out, const RunContext& ctx, const std::vector<Record>& records) {
  out += "# rmsnorm-bench report\n\n";
  out += fmt::format("- GPU: {} (cc {}, {} SMs, {} L2)\n", or_none(ctx.gpu), or_none(ctx.cc),
                     ctx.sms > 0 ? fmt::format("{}", ctx.sms) : kNone,
                     ctx.l2_mb > 0 ? fmt::format("{:g} MB", ctx.l2_mb) : kNone);
  out += fmt::format("- CUDA driver API: {}; CUDA runtime: {}\n", or_none(ctx.driver),
                     or_none(ctx.cuda_runtime));
  out += fmt::format("- Tool: rmsnorm-bench {} (commit {})\n", or_none(ctx.tool_version),
                     or_none(ctx.commit));
  out += fmt::format("- Command: {}\n", ctx.command_line.empty() ? kNone : md_code(ctx.command_line));
  out += fmt::format("- Started: {}\n", or_none(ctx.started_at));
  double copy = ctx.copy_gbps;
  for (const Record& r : records) {
    if (copy <= 0 && r.copy_gbps) copy = *r.copy_gbps;
  }
  out += fmt::format("- Copy ceiling: {} (device-to-device copy, bytes read + written)\n",
                     copy > 0 ? fmt::format("{:.0f} GB/s", copy) : kNone);
  if (!ctx.timing_note.empty()) out += fmt::format("- Timing: {}\n", ctx.timing_note);
  out += "\n";

  out += fmt::format("**Totals:** {} cases: {}\n\n", records.size(), counts_line(records));
}

void failures_section(std::string& out, const std::vector<Record>& records) {
  out += "## Failures\n\n";
  bool any = false;
  for (const Record& r : records) {
    if (r.status != Status::fail && r.status != Status::error) continue;
    if (!any) {
      out +=
          "| status | kernel | op | dtype/wdtype | M | H | layout | dist | eps | reason "
          "| max abs err | max ULP | mismatches | worst (row, col) |\n"
          "|---|---|---|---|--:|--:|---|---|--:|---|--:|--:|--:|---|\n";
      any = true;
    }
    const std::string kernel = kernel_text(r);
    const std::string worst =
        r.worst_row >= 0 ? fmt::format("({}, {})", r.worst_row, r.worst_col) : kNone;
    out += fmt::format(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.3g} | {:.0f} | {} | {} |\n",
        status_name(r.status), cell(kernel), cell(r.op), cell(dtypes(r)), r.M, r.H, cell(r.layout),
        cell(r.dist), format_double(r.eps), cell(r.reason), r.max_abs_err, r.max_ulp, r.mismatches,
        worst);
  }
  out += any ? "\n" : "None.\n\n";
}

// One bandwidth table per (op, dtype, wdtype, rdtype, M); a cell is the best passing, timed
// row of that kernel and H over eps, dist and layout.
void bandwidth_section(std::string& out, const std::vector<Record>& records) {
  using GroupKey = std::tuple<std::string, std::string, std::string, std::string>;
  std::vector<GroupKey> groups;  // first-appearance order
  std::map<GroupKey, std::vector<const Record*>> members;
  for (const Record& r : records) {
    if (r.status == Status::skip) continue;
    GroupKey key{r.op, r.dtype, r.wdtype, r.rdtype};
    if (members.find(key) == members.end()) groups.push_back(key);
    members[key].push_back(&r);
  }

  out += "## Bandwidth (GB/s, % of copy)\n\n";
  if (groups.empty()) {
    out += "No cases ran.\n\n";
    return;
  }
  for (const GroupKey& key : groups) {
    const std::vector<const Record*>& rows = members[key];
    std::vector<std::int64_t> ms;
    for (const Record* r : rows) ms.push_back(r->M);
    std::sort(ms.begin(), ms.end());
    ms.erase(std::unique(ms.begin(), ms.end()), ms.end());

    for (std::int64_t m : ms) {
      std::vector<std::string> kernels;
      std::map<std::string, std::string> kernel_label;  // with its provider, unless built in
      std::vector<std::int64_t> hs;
      std::map<std::pair<std::string, std::int64_t>, const Record*> best;
      for (const Record* r : rows) {
        if (r->M != m) continue;
        if (std::find(kernels.begin(), kernels.end(), r->kernel) == kernels.end()) {
          kernels.push_back(r->kernel);
          const std::string provider = provider_text(*r);
          kernel_label[r->kernel] = provider.empty() ? r->kernel : r->kernel + " (" + provider + ")";
        }
        hs.push_back(r->H);
        if (r->status != Status::pass || !r->gbps) continue;
        const Record*& b = best[{r->kernel, r->H}];
        if (b == nullptr || *r->gbps > *b->gbps) b = r;
      }
      std::sort(hs.begin(), hs.end());
      hs.erase(std::unique(hs.begin(), hs.end()), hs.end());

      const Record& first = *rows.front();
      out += fmt::format("### {} {}, M = {}\n\n", first.op, dtypes(first), m);
      out += "| kernel |";
      for (std::int64_t h : hs) out += fmt::format(" H={} |", h);
      out += "\n|---|";
      for (std::size_t i = 0; i < hs.size(); ++i) out += "--:|";
      out += "\n";
      for (const std::string& k : kernels) {
        out += fmt::format("| {} |", cell(kernel_label[k]));
        for (std::int64_t h : hs) {
          const auto it = best.find({k, h});
          if (it == best.end()) {
            out += fmt::format(" {} |", kNone);
            continue;
          }
          const Record& r = *it->second;
          // Small launches are timed as CUDA-graph replays too: there the per-launch time
          // says more than a bandwidth that launch overhead dominates.
          std::string text = gbps_with_pct(*r.gbps, r.pct_of_copy);
          if (r.graph_us) text += fmt::format("; {:.2f} us/launch in a graph", *r.graph_us);
          // What auto dispatched to at this H is part of the answer.
          if (!r.picked.empty() && r.picked != r.kernel) text += " " + r.picked;
          out += fmt::format(" {} |", cell(text));
        }
        out += "\n";
      }
      out += "\n";
    }
  }
}

// Per shape where both ran and passed: the fastest built-in kernel against the fastest
// vendor kernel. Nothing when no shape has both.
void vendor_section(std::string& out, const std::vector<Record>& records) {
  using Shape = std::tuple<std::string, std::string, std::string, std::string, std::int64_t,
                           std::int64_t, std::string, std::string, double>;
  struct Best {
    const Record* builtin = nullptr;
    const Record* vendor = nullptr;
  };
  std::vector<Shape> shapes;  // first-appearance order
  std::map<Shape, Best> best;
  for (const Record& r : records) {
    if (r.status != Status::pass || !r.gbps) continue;
    const bool builtin = is_builtin(r);
    if (!builtin && !is_vendor(r)) continue;
    const Shape shape{r.op, r.dtype, r.wdtype, r.rdtype, r.M, r.H, r.layout, r.dist, r.eps};
    const auto [it, inserted] = best.try_emplace(shape);
    if (inserted) shapes.push_back(shape);
    const Record*& b = builtin ? it->second.builtin : it->second.vendor;
    if (b == nullptr || *r.gbps > *b->gbps) b = &r;
  }
  const auto pct = [](const Record& r) {
    return r.pct_of_copy ? fmt::format("{:.1f}%", *r.pct_of_copy) : std::string(kNone);
  };
  std::string rows;
  for (const Shape& shape : shapes) {
    const Best& b = best[shape];
    if (b.builtin == nullptr || b.vendor == nullptr) continue;
    const Record& bi = *b.builtin;
    const Record& v = *b.vendor;
    rows += fmt::format(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {:.0f} | {} | {:.1f} | {} | {:.0f} | {} | {:.1f} | "
        "{} |\n",
        cell(bi.op), cell(dtypes(bi)), bi.M, bi.H, cell(bi.layout), cell(bi.dist),
        format_double(bi.eps), cell(kernel_text(bi)), *bi.gbps, pct(bi), bi.max_ulp,
        cell(kernel_text(v)), *v.gbps, pct(v), v.max_ulp,
        *v.gbps > 0 ? fmt::format("{:.2f}x", *bi.gbps / *v.gbps) : std::string(kNone));
  }
  if (rows.empty()) return;
  out += "## Vendor vs built-in\n\n";
  out += "Per shape, the fastest passing built-in kernel (mutants left out) against the fastest "
         "passing vendor kernel (cuDNN, cuBLAS); last column: built-in GB/s over vendor GB/s.\n\n";
  out += "| op | dtype/wdtype | M | H | layout | dist | eps | built-in | GB/s | % of copy | max ULP "
         "| vendor | GB/s | % of copy | max ULP | built-in / vendor |\n"
         "|---|---|--:|--:|---|---|--:|---|--:|--:|--:|---|--:|--:|--:|--:|\n";
  out += rows + "\n";
}

void plots_section(std::string& out, const RunContext& ctx) {
  if (ctx.plots.empty()) return;
  out += "## Plots\n\n";
  for (const std::string& p : ctx.plots) out += fmt::format("![{}]({})\n\n", p, p);
}

void skips_section(std::string& out, const std::vector<Record>& records) {
  out += "## Skips\n\n";
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, std::size_t> counts;
  for (const Record& r : records) {
    if (r.status != Status::skip) continue;
    auto key = std::make_pair(r.kernel, r.reason);
    if (counts[key]++ == 0) order.push_back(key);
  }
  if (order.empty()) {
    out += "None.\n";
    return;
  }
  out += "| kernel | reason | cases |\n|---|---|--:|\n";
  for (const auto& key : order) {
    out += fmt::format("| {} | {} | {} |\n", cell(key.first), cell(key.second), counts[key]);
  }
}

}  // namespace

std::string markdown_report(const RunContext& ctx, const std::vector<Record>& records) {
  std::string out;
  context_section(out, ctx, records);
  failures_section(out, records);
  bandwidth_section(out, records);
  vendor_section(out, records);
  plots_section(out, ctx);
  skips_section(out, records);
  return out;
}

std::string plot_file_name(const Record& r) {
  std::string s = fmt::format("{}_{}_{}_M{}", r.op, r.dtype, r.wdtype, r.M);
  if (!r.rdtype.empty()) s += "_r" + r.rdtype;
  if (r.convention != "fp32") s += "_" + r.convention;
  if (!r.ydtype.empty()) s += "_y" + r.ydtype;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '-';
  return s + ".png";
}

std::string md_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string md_code(const std::string& s) {
  std::string flat = s;
  std::size_t longest = 0, run = 0;
  for (char& c : flat) {
    if (c == '\n' || c == '\r') c = ' ';
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  // A space keeps a backtick at either end from joining the fence.
  const char* pad = longest > 0 ? " " : "";
  return fence + pad + flat + pad + fence;
}

}  // namespace rb

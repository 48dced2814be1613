#include "harness/bisect_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "harness/runner.h"
#include "kernels/registry.h"

namespace rb {

TensorBytes generate_inputs(const Case& c) {
  TensorBytes in;
  for (const InputDesc& d : op_desc(c.op).inputs) {
    if (!present(d, c) || d.source == Source::saved_rrms) continue;
    in[d.tensor] = generate_input(c, d);
  }
  for (const InputDesc& d : op_desc(c.op).inputs)
    if (d.source == Source::saved_rrms) {
      const std::vector<float> s = saved_rrms_of(c, in.at(Tensor::x).data(), c.eps);
      std::vector<unsigned char> bytes(s.size() * sizeof(float));
      std::memcpy(bytes.data(), s.data(), bytes.size());
      in[Tensor::saved_rrms] = std::move(bytes);
    }
  return in;
}

SideRunner::SideRunner(const DeviceInfo& dev) : runner_(dev, config()) {}
SideRunner::~SideRunner() = default;

RunConfig SideRunner::config() {
  RunConfig cfg;
  cfg.check = false;  // the bisect compares the sides itself; the capture still scans the guards
  cfg.time = false;
  cfg.inputs = [this](const Case&, Tensor t) -> std::optional<std::vector<unsigned char>> {
    const auto it = inputs_->find(t);
    if (it == inputs_->end()) return std::nullopt;
    return it->second;
  };
  cfg.capture = [this](const Case&, Tensor t, const std::vector<unsigned char>& bytes, std::int64_t outside) {
    (*out_)[t] = bytes;
    (*outside_)[t] = outside;
  };
  return cfg;
}

TensorBytes SideRunner::run_kernel(const Case& c, const TensorBytes& inputs, std::map<Tensor, std::int64_t>& outside) {
  std::string variant;
  const KernelInfo* k = find_kernel(c.kernel, &variant);
  if (!k) throw SideError("unknown kernel " + c.kernel);
  if (auto why = check_common(*k, problem_of(c))) throw SideError(c.kernel + ": " + *why);
  TensorBytes out;
  inputs_ = &inputs;
  out_ = &out;
  outside_ = &outside;
  runner_.forget_data();  // these inputs, not the previous trial's
  const Record r = runner_.run_case(c);
  if (r.status == Status::skip || r.status == Status::error || out.empty())
    throw SideError(fmt::format("{} did not run the case ({}): {}", c.kernel, status_name(r.status), r.reason));
  return out;
}

SideOutputs SideRunner::run(const Case& a, const BisectSide& side_a, const Case& b, const BisectSide& side_b,
                            const TensorBytes& inputs) {
  SideOutputs s;
  s.a = side_a.is_reference() ? reference_outputs(a, inputs) : run_kernel(a, inputs, s.outside_a);
  s.b = side_b.is_reference() ? reference_outputs(b, inputs) : run_kernel(b, inputs, s.outside_b);
  return s;
}

TensorBytes slice_rows(const Case& c, const TensorBytes& inputs, std::int64_t first, std::int64_t count) {
  TensorBytes out;
  for (const InputDesc& d : op_desc(c.op).inputs) {
    const auto it = inputs.find(d.tensor);
    if (it == inputs.end()) continue;
    const std::size_t es = dtype_size(d.dtype(c));
    std::size_t row_bytes = 0;
    if (d.shape == Shape::matrix) row_bytes = static_cast<std::size_t>(c.H) * es;
    if (d.shape == Shape::per_row) row_bytes = es;
    if (row_bytes == 0) {
      out[d.tensor] = it->second;
      continue;
    }
    const auto b = it->second.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(first) * row_bytes);
    out[d.tensor].assign(b, b + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(count) * row_bytes));
  }
  return out;
}

BisectRun run_bisect(const DeviceInfo& dev, const Case& base, const BisectSide& side_a, const BisectSide& side_b,
                     bool shrink) {
  BisectRun run;
  SideRunner sides(dev);  // one runner (stream, L2 flush buffer) for every trial
  // Both sides read the inputs generated for A's case (its convention decides whether the
  // weight is an offset).
  const auto attempt = [&](const Case& c, const TensorBytes& in, SideOutputs& outs) {
    ++run.trials;
    const Case a = side_case(c, side_a), b = side_case(c, side_b);
    outs = sides.run(a, side_a, b, side_b, in);
    BisectResult r = bisect_outputs(a, side_a, b, side_b, in, outs.a, outs.b);
    add_outside_writes(r, outs.outside_a, outs.outside_b);
    return r;
  };
  Case cur = base;
  TensorBytes in = generate_inputs(side_case(cur, side_a));
  SideOutputs outs;
  run.full = attempt(cur, in, outs);
  run.minimal = run.full;
  run.inputs = in;
  run.outputs = outs;
  if (!shrink || !run.full.diverge) return run;

  const Stage stage = run.full.stage;
  std::vector<std::string> notes;
  // Keeps a candidate case (and its inputs) when the sides still part at the same stage.
  const auto keep_if_same = [&](const Case& c, const TensorBytes& cin) {
    SideOutputs o;
    BisectResult r;
    try {
      r = attempt(c, cin, o);
    } catch (const SideError&) {
      return false;  // a side cannot run the smaller case: not a reproducer
    }
    if (!r.diverge || r.stage != stage) return false;
    cur = c;
    in = cin;
    run.minimal = r;
    run.outputs = o;
    run.inputs = cin;
    return true;
  };
  if (cur.dist != Dist::normal) {
    Case c = cur;
    c.dist = Dist::normal;
    if (keep_if_same(c, generate_inputs(side_case(c, side_a))))
      notes.push_back(fmt::format("distribution {} -> normal", dist_name(base.dist)));
  }
  {
    std::vector<std::int64_t> hs;
    for (std::int64_t h = 1; h <= 17; ++h) hs.push_back(h);
    for (std::int64_t p = 32; p < cur.H; p *= 2)
      for (std::int64_t h : {p - 1, p, p + 1}) hs.push_back(h);
    std::sort(hs.begin(), hs.end());
    for (std::int64_t h : hs) {
      if (h >= cur.H) break;
      Case c = cur;
      c.H = h;
      if (keep_if_same(c, generate_inputs(side_case(c, side_a)))) {
        notes.push_back(fmt::format("H {} -> {}", base.H, h));
        break;
      }
    }
  }
  // Fewest rows: the first divergent row on its own, else with the row before it (a bug
  // that spills from one row into the next) or after it (one that reads into the next).
  const std::int64_t row = run.minimal.first_row ? run.minimal.first_row->row : -1;
  if (row >= 0 && cur.M > 1) {
    const Case full_rows = cur;
    const TensorBytes full_in = in;
    for (const auto& [first, count] : {std::pair<std::int64_t, std::int64_t>{row, 1}, {row - 1, 2}, {row, 2}}) {
      if (first < 0 || first + count > full_rows.M) continue;
      Case c = full_rows;
      c.M = count;
      if (keep_if_same(c, slice_rows(full_rows, full_in, first, count))) {
        notes.push_back(fmt::format("M {} -> {} (row{} {} of the case above)", full_rows.M, count,
                                    count > 1 ? "s" : "",
                                    count > 1 ? fmt::format("{}-{}", first, first + 1) : std::to_string(first)));
        break;
      }
    }
  }
  for (const std::string& n : notes) run.shrink_note += (run.shrink_note.empty() ? "" : "; ") + n;
  if (run.shrink_note.empty()) run.shrink_note = "no smaller case parts at the same stage";
  return run;
}

}  // namespace rb

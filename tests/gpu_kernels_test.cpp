// GPU tests: every kernel passes the validation sweep of every op it implements; every
// mutant is caught by it; dw is bitwise repeatable; every built-in strategy's output under
// each convention and y dtype is naive's, bit for bit. Each test skips itself, naming the
// CUDA error, when no device is usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "harness/case.h"
#include "harness/device.h"
#include "harness/device_buffer.h"
#include "harness/runner.h"
#include "kernels/launchers.h"
#include "kernels/registry.h"
#include "reference/host_dtype.h"
#include "reports/csv_reader.h"
#include "reports/csv_writer.h"
#include "tests/gpu_support.h"
#include "tests/mutant_names.h"

namespace rb {
namespace {


std::vector<Record> run_sweeps(const std::vector<Sweep>& s, bool time = false) {
  RunConfig cfg;
  cfg.time = time;
  Runner runner(open_device(0), cfg);
  std::vector<Record> out;
  runner.run(expand(s), [&](const Record& r) { out.push_back(r); });
  return out;
}

std::vector<Record> run_sweep(const Sweep& s, bool time = false) { return run_sweeps({s}, time); }

std::string describe(const Record& r) {
  std::ostringstream os;
  os << r.kernel << " " << r.op << " " << r.dtype << "/" << r.wdtype
     << (r.rdtype.empty() ? "" : "/r " + r.rdtype) << " M=" << r.M << " H=" << r.H << " " << r.layout << " "
     << r.dist << " eps=" << r.eps << " conv=" << r.convention << (r.ydtype.empty() ? "" : " y=" + r.ydtype)
     << ": " << status_name(r.status) << " " << r.reason;
  return os.str();
}

// Real kernels, or the numerics mutants the validation sweeps catch (a device-fault mutant
// has its own test: it ends the process's CUDA context; a wide-only one is the wide test's).
std::vector<std::string> names(bool mutants) {
  std::vector<std::string> v;
  const std::vector<std::string>& wide = test::kWideOnlyMutants;
  for (const KernelInfo& k : kernel_registry())
    if (k.mutant == mutants && !k.device_fault && std::find(wide.begin(), wide.end(), k.name) == wide.end())
      v.push_back(k.name);
  return v;
}

// (kernel, op) for every op each real kernel implements, as "kernel:op".
std::vector<std::string> kernel_ops() {
  std::vector<std::string> v;
  for (const KernelInfo& k : kernel_registry())
    if (!k.mutant)
      for (Op op : k.ops) v.push_back(k.name + ":" + std::string(op_name(op)));
  return v;
}

std::string param_name(const testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

// A mutant's sweeps: the base validation sweep and the many-rows ones, restricted to the
// given ops, and for a mutant with an fp8 y the fp8 sweep (its fwd only; the other
// conventions there are skips: mutants implement fp32's). The convention sweep is left to the
// real kernels: every mutant's bug shows under the fp32 convention.
std::vector<Sweep> mutant_sweeps_for(const KernelInfo& k) {
  std::vector<Sweep> v{validation_sweep({k.name})};
  for (Sweep& rows : validation_rows_sweeps({k.name})) v.push_back(std::move(rows));
  for (Sweep& s : v) s.ops = k.ops;
  if (k.fp8_output) {
    Sweep f8 = validation_fp8_sweep({k.name});
    f8.ops = {Op::fwd};
    v.push_back(f8);
  }
  return v;
}

// Every validation sweep (base, conventions, fp8 y, many rows) of one kernel, restricted to the ops.
std::vector<Sweep> sweeps_for(const std::string& kernel, const std::vector<Op>& ops) {
  std::vector<Sweep> v;
  for (Sweep s : validation_sweeps({kernel})) {
    std::vector<Op> keep;
    for (Op op : s.ops)
      if (std::find(ops.begin(), ops.end(), op) != ops.end()) keep.push_back(op);
    if (keep.empty()) continue;
    s.ops = keep;
    v.push_back(s);
  }
  return v;
}

// A small sweep: the given ops, kernels, dtypes, M and H at eps 1e-5, normal, contiguous.
Sweep small_sweep(std::vector<Op> ops, std::vector<std::string> kernels, std::vector<DType> dtypes,
                  std::vector<std::int64_t> Ms, std::vector<std::int64_t> Hs) {
  Sweep s;
  s.ops = std::move(ops);
  s.kernels = std::move(kernels);
  s.dtypes = std::move(dtypes);
  s.Ms = std::move(Ms);
  s.Hs = std::move(Hs);
  s.eps = {1e-5};
  s.dists = {Dist::normal};
  s.layouts = {Layout::contiguous};
  return s;
}

class KernelPasses : public testing::TestWithParam<std::string> {};

// One op: every dtype x weight dtype (x residual dtype) x H in {1, 3, 127, 128, 1000, 1024,
// 4096, 4097, 8192, 16384, 65536} x layout x distribution, then the convention and fp8 y
// sweeps: pass, or skip only where H is beyond what the kernel holds (a vendor or plugin
// kernel may also refuse a convention or an fp8 y, in its own words).
TEST_P(KernelPasses, ValidationSweep) {
  RB_REQUIRE_GPU();
  const std::string param = GetParam();
  const std::string name = param.substr(0, param.find(':'));
  const Op op = *parse_op(param.substr(param.find(':') + 1));
  const KernelInfo* k = find_kernel(name);
  ASSERT_NE(k, nullptr);
  const std::vector<Record> recs = run_sweeps(sweeps_for(name, {op}));
  ASSERT_FALSE(recs.empty());
  int passed = 0, bad = 0, skipped = 0;
  for (const Record& r : recs) {
    EXPECT_EQ(r.op, op_name(op));
    if (r.status == Status::pass) {
      ++passed;
      EXPECT_GT(r.rows_checked, 0) << describe(r);
      continue;
    }
    Problem p;
    p.op = op;
    p.x = *parse_dtype(r.dtype);
    p.w = *parse_dtype(r.wdtype);
    p.r = r.rdtype.empty() ? p.x : *parse_dtype(r.rdtype);
    // A built-in kernel skips only beyond the H it holds; a vendor or plugin kernel may also
    // refuse a case in its own words (recorded, counted and shown below).
    const bool allowed_skip = r.status == Status::skip && (r.H > k->max_H(p) || k->provider != "builtin");
    if (allowed_skip && k->provider != "builtin" && skipped++ < 3) std::cout << "SKIP " << describe(r) << "\n";
    if (!allowed_skip && ++bad <= 20) ADD_FAILURE() << describe(r);
  }
  EXPECT_EQ(bad, 0) << bad << " case(s) failed";
  EXPECT_GT(passed, 0);
  std::cout << param << ": " << passed << " of " << recs.size() << " cases passed, " << skipped
            << " skipped by the provider\n";
}

INSTANTIATE_TEST_SUITE_P(AllKernels, KernelPasses, testing::ValuesIn(kernel_ops()), param_name);

class MutantCaught : public testing::TestWithParam<std::string> {};

// A mutant is caught when at least one case of the validation sweeps fails; no case may
// error (that would be a harness fault, not a catch). The counts at M=19 (the base sweep, and
// the fp8 sweep for an fp8 mutant) and at many rows are reported apart: a bug of the loop
// over rows shows only in the latter.
TEST_P(MutantCaught, ByValidationSweep) {
  RB_REQUIRE_GPU();
  const KernelInfo* k = find_kernel(GetParam());
  ASSERT_NE(k, nullptr);
  const std::vector<Record> recs = run_sweeps(mutant_sweeps_for(*k));
  int failed = 0, failed_rows = 0, rows_cases = 0;
  std::string first;
  const std::int64_t base_M = validation_sweep({}).Ms.front();
  for (const Record& r : recs) {
    EXPECT_NE(r.status, Status::error) << describe(r);
    const bool many_rows = r.M > base_M;
    rows_cases += many_rows;
    if (r.status != Status::fail) continue;
    failed_rows += many_rows;
    if (failed++ == 0) first = describe(r);
  }
  EXPECT_GT(failed, 0) << GetParam() << " slipped through all " << recs.size() << " cases";
  std::cout << "MUTANT " << GetParam() << ": caught by " << failed << " of " << recs.size() << " cases ("
            << failed - failed_rows << " of " << recs.size() - rows_cases << " at M=19, " << failed_rows << " of "
            << rows_cases << " at many rows); first: " << first.substr(0, 300) << "\n";
}

INSTANTIATE_TEST_SUITE_P(AllMutants, MutantCaught, testing::ValuesIn(names(true)), param_name);

TEST(Auto, RecordsItsPick) {
  RB_REQUIRE_GPU();
  for (const Record& r : run_sweep(small_sweep({Op::fwd}, {"auto"}, {DType::bf16, DType::f32}, {4},
                                               {128, 1024, 4096, 20000, 40000}))) {
    EXPECT_EQ(r.status, Status::pass) << describe(r);
    Problem p;
    p.H = r.H;
    p.M = r.M;
    p.x = p.w = p.r = *parse_dtype(r.dtype);
    EXPECT_EQ(r.picked, kern::strategy_name(kern::auto_pick_fwd(p))) << describe(r);
    EXPECT_NE(r.picked, "auto");
  }
}

// add and the backward ops name their pick too.
TEST(Auto, RecordsItsPickForEveryOp) {
  RB_REQUIRE_GPU();
  for (const Record& r : run_sweep(small_sweep({Op::bwd, Op::add, Op::add_bwd}, {"auto"},
                                               {DType::bf16, DType::f32}, {4}, {128, 4096, 40000}))) {
    EXPECT_EQ(r.status, Status::pass) << describe(r);
    Problem p;
    p.op = *parse_op(r.op);
    p.H = r.H;
    p.M = r.M;
    p.x = p.w = p.r = *parse_dtype(r.dtype);
    EXPECT_EQ(r.picked, kern::strategy_name(kern::auto_pick(p))) << describe(r);
    EXPECT_NE(r.picked, "auto");
  }
}

// The Plans tests' sweep: bf16 at M=19, 2 H x 2 layouts (strided changes the stride) = 4
// problems a kernel, each posed by 12 data sets (2 eps x 6 distributions). Returns the
// records and the runner's calls to the kernels' prepare and variants.
struct PlansRun {
  std::vector<Record> out;
  std::int64_t prepares = 0;
  std::int64_t lists = 0;
};

PlansRun run_plans_sweep(Op op, const std::vector<std::string>& kernels) {
  Sweep s = small_sweep({op}, kernels, {DType::bf16}, {19}, {127, 4096});
  s.eps = {1e-5, 1e-2};
  s.dists = {Dist::normal, Dist::large, Dist::tiny, Dist::offset, Dist::outlier, Dist::zero_row};
  s.layouts = {Layout::contiguous, Layout::strided};
  RunConfig cfg;
  cfg.time = false;
  Runner runner(open_device(0), cfg);
  PlansRun run;
  runner.run(expand(s), [&](const Record& r) { run.out.push_back(r); });
  run.prepares = runner.prepare_calls();
  run.lists = runner.variants_calls();
  return run;
}

// A kernel's plan is prepared once per problem while consecutive data sets pose it, and the
// cases on the later data sets pass with it: 2 kernels x 4 problems = 8 plans for 96 cases,
// where a plan per data set made 48.
TEST(Plans, PreparedOncePerProblemAcrossTheInputs) {
  RB_REQUIRE_GPU();
  const PlansRun run = run_plans_sweep(Op::bwd, {"naive", "row-vector"});
  ASSERT_EQ(run.out.size(), 96u);
  for (const Record& r : run.out) EXPECT_EQ(r.status, Status::pass) << describe(r);
  EXPECT_EQ(run.prepares, 8);
  EXPECT_EQ(run.lists, 0);  // built-in kernels have no variants to list
}

// A forward-only test kernel of provider "test" (naive's launch), for the runner's bookkeeping.
KernelInfo test_kernel(const std::string& name, const std::string& description) {
  KernelInfo k = *find_kernel("naive");
  k.name = name;
  k.provider = "test";
  k.description = description;
  k.ops = {Op::fwd};
  return k;
}

// A refusal (Unsupported from prepare) is kept like a plan: the provider is asked once per
// problem, and every case of it is a skip with the provider's message. A test kernel that
// refuses everything: 4 calls for 48 cases, where asking per data set makes 24 or more.
TEST(Plans, RefusedOncePerProblemAcrossTheInputs) {
  RB_REQUIRE_GPU();
  KernelInfo k = test_kernel("test-refuses", "a test kernel whose prepare refuses every problem");
  auto asked = std::make_shared<int>(0);
  k.prepare = [asked](const Problem& p, const std::string&) -> std::unique_ptr<Plan> {
    ++*asked;
    throw Unsupported("test-refuses refuses H=" + std::to_string(p.H));
  };
  register_kernel(k);
  const PlansRun run = run_plans_sweep(Op::fwd, {"test-refuses"});
  ASSERT_EQ(run.out.size(), 48u);
  for (const Record& r : run.out) {
    EXPECT_EQ(r.status, Status::skip) << describe(r);
    EXPECT_EQ(r.reason, "test-refuses refuses H=" + std::to_string(r.H)) << describe(r);
  }
  EXPECT_EQ(*asked, 4);
  EXPECT_EQ(run.prepares, 4);
}

// A kernel's variants (cuDNN's engine configurations with --cudnn-engines all) are listed once
// per problem, like its plans: a test kernel with two variants whose prepare refuses, over the
// same sweep: 4 lists and 8 prepares (a variant each) for 96 rows, where listing per data set
// makes 48.
TEST(Plans, VariantsListedOncePerProblem) {
  RB_REQUIRE_GPU();
  KernelInfo k =
      test_kernel("test-two-variants", "a test kernel with two variants whose prepare refuses every problem");
  auto listed = std::make_shared<int>(0);
  k.variants = [listed](const Problem&) {
    ++*listed;
    return std::vector<std::string>{"a", "b"};
  };
  k.prepare = [](const Problem& p, const std::string& v) -> std::unique_ptr<Plan> {
    throw Unsupported("variant " + v + " refuses H=" + std::to_string(p.H));
  };
  register_kernel(k);
  const PlansRun run = run_plans_sweep(Op::fwd, {"test-two-variants"});
  ASSERT_EQ(run.out.size(), 96u);
  for (std::size_t i = 0; i < run.out.size(); ++i) {
    const Record& r = run.out[i];
    const std::string v = i % 2 ? "b" : "a";
    EXPECT_EQ(r.kernel, "test-two-variants@" + v) << describe(r);
    EXPECT_EQ(r.status, Status::skip) << describe(r);
    EXPECT_EQ(r.reason, "variant " + v + " refuses H=" + std::to_string(r.H)) << describe(r);
  }
  EXPECT_EQ(*listed, 4);
  EXPECT_EQ(run.lists, 4);
  EXPECT_EQ(run.prepares, 8);
}

// dw from many launches of every backward kernel is bitwise identical, at a size where a
// scheduling-dependent reduction would show (16384 rows over every SM's blocks). The runner
// also compares two launches in every checked case; this test goes straight to the kernels.
// At H=4096 (a row a block) and H=128 (row-vector's groups of lanes, several rows a block,
// whose partials the block adds in group order), and H=4097 (odd rows: row-vector's shifted
// blocks with the overhang's columns, whose partials sit in shared memory).
class DwRepeatable : public testing::TestWithParam<std::int64_t> {};

TEST_P(DwRepeatable, Backward) {
  RB_REQUIRE_GPU();
  const std::int64_t M = 16384, H = GetParam();
  std::vector<unsigned char> host(static_cast<std::size_t>(M * H) * 2);
  for (std::size_t i = 0; i < host.size(); i += 2) {
    // bf16 values in [0.5, 2) of varying sign: mantissa and sign from a simple LCG.
    static std::uint32_t st = 12345;
    st = st * 1664525u + 1013904223u;
    const std::uint16_t b = static_cast<std::uint16_t>(0x3f00u | ((st >> 9) & 0x7fu) | ((st >> 1) & 0x8000u));
    std::memcpy(&host[i], &b, 2);
  }
  DeviceBuffer x(host.size()), dy(host.size()), dx(host.size()), w(H * 2), dw(H * 2), rrms(M * 4);
  ASSERT_EQ(cudaMemcpy(x.get(), host.data(), host.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dy.get(), host.data() + 2, host.size() - 2, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(w.get(), host.data(), H * 2, cudaMemcpyHostToDevice), cudaSuccess);
  const std::vector<float> r(static_cast<std::size_t>(M), 0.75f);
  ASSERT_EQ(cudaMemcpy(rrms.get(), r.data(), M * 4, cudaMemcpyHostToDevice), cudaSuccess);
  for (const KernelInfo& k : kernel_registry()) {
    if (k.mutant || !k.has_op(Op::bwd) || !k.unavailable.empty()) continue;
    SCOPED_TRACE(k.name);
    BwdArgs a;
    a.x = x.get();
    a.dy = dy.get();
    a.w = w.get();
    a.rrms = static_cast<const float*>(rrms.get());
    a.dx = dx.get();
    a.dw = dw.get();
    a.M = M;
    a.H = a.x_stride = a.dy_stride = a.dx_stride = a.ds_stride = H;
    a.xdtype = a.dydtype = a.wdtype = DType::bf16;
    Problem p;
    p.op = Op::bwd;
    p.M = M;
    p.H = p.stride = H;
    p.x = p.w = p.r = DType::bf16;
    if (check_common(k, p)) continue;  // e.g. a vendor library missing here
    std::unique_ptr<Plan> plan = k.prepare(p, "");
    DeviceBuffer ws(plan->workspace_bytes());
    a.workspace = ws.get();
    a.workspace_bytes = ws.bytes();
    std::vector<unsigned char> first(H * 2), again(H * 2);
    for (int run = 0; run < 5; ++run) {
      ASSERT_EQ(cudaMemset(dw.get(), 0xFF, H * 2), cudaSuccess);
      ASSERT_EQ(plan->launch(a, nullptr), cudaSuccess);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(run == 0 ? first.data() : again.data(), dw.get(), H * 2, cudaMemcpyDeviceToHost),
                cudaSuccess);
      if (run > 0) {
        EXPECT_EQ(std::memcmp(first.data(), again.data(), first.size()), 0) << "launch " << run << " differs";
      }
    }
  }
}
INSTANTIATE_TEST_SUITE_P(Bwd, DwRepeatable, testing::Values(std::int64_t{4096}, std::int64_t{128}, std::int64_t{4097}));

// row-vector's backward gives rows of up to 64 chunks (bf16 H <= 512, fp32 <= 256) groups of
// 4-32 lanes, several rows a block: at M=300 and 20011 a grid of many blocks whose groups
// take several rows each, the last block's groups partly past M, and the column sum over
// the blocks' partial rows. Every H from a row of one chunk to 64, whole and partial last
// chunks (120, 127 strided), and 1000 (a row a block) beside them; bwd and add-bwd, 16-bit
// and fp32 x with x's or fp32 weights. Then rows one element off (misaligned) at M=4 (the
// fewest rows the groups take) and 300: the shifted kernel, a row a block, runs them, on a
// workspace the harness sized before it bound the tensors (run 45's first binary sized it
// for the groups' fewer partial rows and failed its launch there).
TEST(Backward, ShortRowsPassAtManyRows) {
  RB_REQUIRE_GPU();
  Sweep s = small_sweep({Op::bwd, Op::add_bwd}, {"row-vector", "auto"}, {DType::bf16, DType::f16, DType::f32},
                        {300, 20011}, {8, 120, 127, 128, 256, 512, 1000});
  s.wdtypes = {WDtypeChoice{}, WDtypeChoice{DType::f32}};
  s.layouts = {Layout::contiguous, Layout::strided};
  Sweep off = s;
  off.Ms = {4, 300};
  off.layouts = {Layout::misaligned};
  const std::vector<Sweep> sweeps{s, off};
  const std::vector<Record> recs = run_sweeps(sweeps);
  // Every case ran: at least 2 ops x 2 kernels x (2 + 2 + 1 weight dtypes) x 7 H x (2 M x 2
  // layouts + 2 M misaligned) (add-bwd adds its residual dtypes).
  EXPECT_EQ(recs.size(), count_cases(sweeps));
  EXPECT_GE(recs.size(), 2u * 2u * 5u * 7u * 6u);
  for (const Record& r : recs) {
    EXPECT_EQ(r.status, Status::pass) << describe(r);
    EXPECT_GE(r.rows_checked, std::min<std::int64_t>(r.M, RunConfig{}.max_check_elems / r.H)) << describe(r);
  }
}

// Rows that are not 16-byte aligned whose span (the row plus the shift that aligns a block's
// chunks) is one chunk past whole warps of them: row-vector's block leaves that chunk's 1..N
// columns to the overhang (perf-notes run 59), element by element. H=1025, 2049, 4097 and
// 8193 put the overhang at every shift (odd H: consecutive rows at all 8 phases of 16-bit,
// 4 of fp32; misaligned: one element off), 4103 a span of two chunks past; M=4099 past the
// resident row blocks (the shifted ring, several rows a block) and M=7 (a row a block); bwd
// and add-bwd, 16-bit and fp32 x, x's and fp32 weights: the S, dx and dw of its columns.
TEST(Backward, OverhangColumnsPassAtEveryPhase) {
  RB_REQUIRE_GPU();
  Sweep s = small_sweep({Op::bwd, Op::add_bwd}, {"row-vector", "auto"}, {DType::bf16, DType::f16, DType::f32},
                        {7, 4099}, {1025, 2049, 4097, 4103, 8193});
  s.wdtypes = {WDtypeChoice{}, WDtypeChoice{DType::f32}};
  s.layouts = {Layout::contiguous, Layout::misaligned};
  const std::vector<Record> recs = run_sweep(s);
  // Every case ran: at least 2 ops x 2 kernels x (2 + 2 + 1 weight dtypes) x 2 M x 5 H x 2
  // layouts.
  EXPECT_EQ(recs.size(), count_cases(s));
  EXPECT_GE(recs.size(), 2u * 2u * 5u * 2u * 5u * 2u);
  for (const Record& r : recs) {
    EXPECT_EQ(r.status, Status::pass) << describe(r);
    EXPECT_GE(r.rows_checked, std::min<std::int64_t>(r.M, RunConfig{}.max_check_elems / r.H)) << describe(r);
  }
}

// A few rows spread over clusters (row-vector's spread_plan: rows of 8192 columns or more at
// M=1, 16384 past it, M x S blocks up to the SMs, slices of at least a warp's columns): decode
// (M=1, the cluster writes dw itself), M=3, 16 (8 slices: the most rows that fit 132 SMs)
// and 17 (one past: a block a row on an H200); whole and odd rows (12289: slices rounded to
// whole chunks; 16392 past one fp32 block's row), 16-bit and fp32 x, x's and fp32 weights,
// an fp32 residual in add-bwd (fp32 x with 16-bit dy: 2 chunks a thread), rows aligned,
// strided and one element off (the shifted cluster kernel).
TEST(Backward, FewRowsSpreadOverClusters) {
  RB_REQUIRE_GPU();
  Sweep s = small_sweep({Op::bwd, Op::add_bwd}, {"row-vector", "auto"}, {DType::bf16, DType::f16, DType::f32},
                        {1, 3, 16, 17}, {8192, 12289, 16384, 16392});
  s.wdtypes = {WDtypeChoice{}, WDtypeChoice{DType::f32}};
  s.rdtypes = {RDtypeChoice{}, RDtypeChoice{DType::f32}};
  s.layouts = {Layout::contiguous, Layout::strided, Layout::misaligned};
  const std::vector<Record> recs = run_sweep(s);
  // Every case ran: at least 2 ops x 2 kernels x (2 + 2 + 1 weight dtypes) x 4 M x 4 H x 3
  // layouts (add-bwd adds its residual dtypes).
  EXPECT_EQ(recs.size(), count_cases(s));
  EXPECT_GE(recs.size(), 2u * 2u * 5u * 4u * 4u * 3u);
  for (const Record& r : recs) EXPECT_EQ(r.status, Status::pass) << describe(r);
}

// `base`'s rows under the other conventions: x's weights and residual, `conv_layout`, rows
// with a non-zero mean.
Sweep other_conventions(const Sweep& base, Layout conv_layout) {
  Sweep conv = base;
  conv.wdtypes = {WDtypeChoice{}};
  conv.rdtypes = {RDtypeChoice{}};
  conv.layouts = {conv_layout};
  conv.dists = {Dist::offset};
  conv.conventions = {Convention::llama, Convention::gemma, Convention::zero_centered};
  return conv;
}

// The sweeps of a many-rows test: `base`, then its rows under the other conventions and with
// an fp8 y (under fp32 and llama, e4m3 and e5m2 at scale 300, which saturates e4m3 on large
// rows; contiguous).
std::vector<Sweep> with_conventions_and_fp8(const Sweep& base, Layout conv_layout) {
  const Sweep conv = other_conventions(base, conv_layout);
  Sweep f8 = conv;
  f8.layouts = {Layout::contiguous};
  f8.dists = {Dist::large};
  f8.conventions = {Convention::fp32, Convention::llama};
  f8.ydtypes = {YDtypeChoice{DType::e4m3}, YDtypeChoice{DType::e5m2}};
  f8.y_scales = {300.0};
  return {base, conv, f8};
}

// Every case passed, its rows checked: every one up to the runner's element budget, else that
// many spread over all M (the last row included), so rows of the later waves are among them.
void expect_passed_over_rows(const std::vector<Record>& recs, std::int64_t M) {
  for (const Record& r : recs) {
    EXPECT_EQ(r.status, Status::pass) << describe(r);
    EXPECT_GE(r.rows_checked, std::min<std::int64_t>(M, RunConfig{}.max_check_elems / r.H)) << describe(r);
  }
}

// Rows of 2^28 fp32 columns (1 GB each), one row: each of naive's 256 threads sums 2^20
// squares and chunked's 512 threads 2^19. A single running fp32 sum a thread drifted past the
// rrms tolerance from about 6.7e7 columns (naive) and 1.3e8 (chunked) by a CPU simulation;
// summed in rounds (kernels/strided_sum.h, and chunked's rounds of vectors) they pass: fwd and
// add failed before the rounds (d280f13, H100, 2026-12-06: y off by 8.1e-5 to 2.3e-4). The
// backward's cases check its 1 GB row end to end but cannot catch that drift in its S sum:
// dx's tolerance is u * (8 + 2 sqrt(H)) of dx's error scale, which holds |x| rrms^3 / H *
// sum|dy w x|, so 1.95e-3 of S's share at H=2^28, above a drift of a few 1e-4 (d280f13's
// backward passed them, max relative error 6.4e-7 to 7.0e-7).
TEST(LongRows, HugeRowsSumWithinTheTolerance) {
  RB_REQUIRE_GPU();
  const Sweep s = small_sweep({Op::fwd, Op::add, Op::bwd}, {"naive", "chunked"}, {DType::f32}, {1},
                              {std::int64_t{1} << 28});
  const std::vector<Record> recs = run_sweeps({s});
  EXPECT_EQ(recs.size(), 6u);
  for (const Record& r : recs) {
    EXPECT_EQ(r.status, Status::pass) << describe(r);
    EXPECT_EQ(r.rows_checked, 1) << describe(r);
  }
}

// A kernel's inputs are read-only: mutant-residual-in-place (y and s right, s also written
// over r) fails with the input named, and naive, run after it on the same inputs in the same
// sweep, passes every case: the runner restored r. Both residual dtypes, 16-bit and fp32 x,
// a layout with row padding.
TEST(ReadOnlyInputs, AKernelThatWritesAnInputFailsAndTheNextReadsItRestored) {
  RB_REQUIRE_GPU();
  Sweep s = small_sweep({Op::add}, {"mutant-residual-in-place", "naive"}, {DType::bf16, DType::f32}, {19},
                        {127, 4096});
  s.rdtypes = {RDtypeChoice{}, RDtypeChoice{DType::f32}};
  s.layouts = {Layout::contiguous, Layout::strided};
  const std::vector<Record> recs = run_sweep(s);
  EXPECT_EQ(recs.size(), count_cases({s}));
  int mutant = 0, naive = 0;
  for (const Record& r : recs) {
    if (r.kernel == "naive") {
      ++naive;
      EXPECT_EQ(r.status, Status::pass) << describe(r);
      continue;
    }
    ++mutant;
    EXPECT_EQ(r.status, Status::fail) << describe(r);
    EXPECT_NE(r.reason.find("wrote into its read-only input r (first at row 0, col 0)"), std::string::npos)
        << describe(r);
    EXPECT_EQ(r.mismatches, 0) << describe(r);  // y, s and rrms are right
  }
  EXPECT_GT(mutant, 0);
  EXPECT_EQ(naive, mutant);
}

// Tensors past 2^31 elements and 4 GiB (--preset wide: every op on bf16 and fp32 rows of
// H=4096 and bf16 odd rows of H=4097, each tensor's last row past element 2^31 and byte 2^32):
// every built-in kernel indexes them right, checked like any case (2048 rows spread over the
// tensor, the last among them, and the poison scan over all of it), and mutant-offset-32bit,
// whose row offsets wrap at 4 GiB, is caught. The vendor kernels are left out (their limits
// are theirs, and a fault in one would end the process's context for the kernels after it).
// Up to 34 GiB of device memory and 26 GiB of host memory a case (fp32 add-bwd):
// scripts/gpu-check.sh runs it alone (its `wide` step), never beside the sharded tests; a case
// the device cannot hold is a skip (the reason says so), and the test skips when none fits.
TEST(WideTensors, EveryBuiltInKernelIndexesPast32Bits) {
  RB_REQUIRE_GPU();
  std::vector<std::string> kernels;
  for (const KernelInfo& k : kernel_registry())
    if (!k.mutant && k.provider == "builtin" && k.unavailable.empty()) kernels.push_back(k.name);
  for (const std::string& m : test::kWideOnlyMutants) kernels.push_back(m);
  const std::vector<Sweep> sweeps = wide_sweeps(kernels);
  const std::vector<Record> recs = run_sweeps(sweeps);
  EXPECT_EQ(recs.size(), count_cases(sweeps));
  std::map<std::string, std::pair<int, int>> mutant_counts;  // failed, cases
  std::size_t no_memory = 0;  // cases a smaller device cannot hold: skipped, said why
  for (const Record& r : recs) {
    std::cout << "WIDE " << describe(r).substr(0, 300) << "\n";
    const KernelInfo* k = find_kernel(r.kernel);
    ASSERT_NE(k, nullptr) << r.kernel;
    if (r.status == Status::skip && r.reason.find("device memory") != std::string::npos) {
      ++no_memory;
      continue;
    }
    if (k->mutant) {
      EXPECT_NE(r.status, Status::error) << describe(r);
      mutant_counts[r.kernel].first += r.status == Status::fail;
      ++mutant_counts[r.kernel].second;
      continue;
    }
    Problem p;
    p.op = *parse_op(r.op);
    p.x = p.w = p.r = *parse_dtype(r.dtype);
    if (r.status == Status::skip && r.H > k->max_H(p)) continue;  // beyond the H the kernel holds
    EXPECT_EQ(r.status, Status::pass) << describe(r);
    EXPECT_GT(r.rows_checked, 1) << describe(r);
  }
  if (no_memory == recs.size()) GTEST_SKIP() << "the device cannot hold a wide case (up to 34 GiB)";
  for (const std::string& m : test::kWideOnlyMutants) {
    const auto [failed, cases] = mutant_counts[m];
    if (cases == 0) continue;  // its case did not fit the device
    EXPECT_GT(failed, 0) << m << " slipped through all " << cases << " wide cases";
    std::cout << "MUTANT " << m << ": caught by " << failed << " of " << cases << " cases (the wide preset)\n";
  }
}

// chunked's long rows (past 64 KB in 16-bit, 32 KB in fp32) at M=300, where the validation
// sweep has M=19: blocks of later waves run rows too, two hybrid blocks sharing an SM. At
// M=300 (<= 16 rows an SM) bf16 H=65536 and fp32 H=40000 take the hybrid pass (part of the
// row in registers, the rest in shared memory), 16-bit H=40000 and fp32 H=16392 the
// shared-memory pass, 16-bit H=16392 the L1 passes, and the misaligned layout (rows one
// element off) each of them with its scalar head. Checked against the fp64 reference like
// any case: every dtype and weight dtype, normal and outlier rows, then the other
// conventions and an fp8 y (amax over all 300 rows, saturating at scale 300). It also checked
// run 38's ring of chunks (branch exp/fwd-ring), which took these rows there and was not kept.
TEST(Chunked, LongRowsPassAtManyRows) {
  RB_REQUIRE_GPU();
  Sweep base = small_sweep({Op::fwd}, {"chunked"}, {DType::bf16, DType::f16, DType::f32}, {300}, {16392, 40000, 65536});
  base.wdtypes = {WDtypeChoice{}, WDtypeChoice{DType::f32}};
  base.layouts = {Layout::contiguous, Layout::strided, Layout::misaligned};
  base.dists = {Dist::normal, Dist::outlier};
  const std::vector<Sweep> sweeps = with_conventions_and_fp8(base, Layout::contiguous);
  const std::vector<Record> recs = run_sweeps(sweeps);
  // (bf16, fp16: 2 weight dtypes; fp32: 1) x 3 H x 3 layouts x 2 dists; 3 dtypes x 3 H x 3
  // conventions; 3 dtypes x 3 H x 2 conventions x 2 fp8 dtypes.
  EXPECT_EQ(recs.size(), count_cases(sweeps));
  EXPECT_EQ(recs.size(), 90u + 27u + 36u);
  expect_passed_over_rows(recs, 300);
}

// chunked's forward and add at M=300, past one wave of the SMs: the validation sweep's M=19
// is one wave, where both hold rows of up to 4 vectors a thread in registers (kDecode; bf16 H
// <= 16384, fp32 <= 8192), so the many-row passes of those rows (the unrolled and plain L1
// passes, the add's shared-memory image, their scalar heads and tails) are checked here:
// every dtype, weight dtype and residual dtype, whole, odd and one-past rows, every layout;
// then the other conventions and an fp8 y (amax over all 300 rows, saturating at scale 300).
TEST(Chunked, ShortRowsPassAtManyRows) {
  RB_REQUIRE_GPU();
  Sweep base = small_sweep({Op::fwd, Op::add}, {"chunked"}, {DType::bf16, DType::f16, DType::f32}, {300},
                           {1, 127, 1000, 1024, 2049, 4096, 4097, 8192, 16384});
  base.wdtypes = {WDtypeChoice{}, WDtypeChoice{DType::f32}};
  base.rdtypes = {RDtypeChoice{}, RDtypeChoice{DType::f32}};
  base.layouts = {Layout::contiguous, Layout::strided, Layout::misaligned};
  const std::vector<Sweep> sweeps = with_conventions_and_fp8(base, Layout::misaligned);
  const std::vector<Record> recs = run_sweeps(sweeps);
  // fwd: (bf16, fp16: 2 weight dtypes; fp32: 1) x 9 H x 3 layouts; add: x 2 residual dtypes
  // for 16-bit x; then 2 ops x 3 dtypes x 9 H x (3 conventions + 2 x 2 fp8).
  EXPECT_EQ(recs.size(), count_cases(sweeps));
  EXPECT_EQ(recs.size(), 5u * 9u * 3u + 9u * 9u * 3u + 2u * 3u * 9u * 7u);
  expect_passed_over_rows(recs, 300);
}

// chunked's add at many rows of one dtype in whole vectors (add_chunked_holds: from 4096 rows,
// rows of 4-16 KB in 16-bit and 4-32 KB in fp32, x, r and w held in registers; the pass itself
// is the decode launches' kDecode, which the validation sweep checks at M=19 under every
// convention and y dtype): the test above stays under that M, so the launch of those rows is
// checked here, at its threshold M=4096: rows it takes (H=2048; 3080 and 4104, whole vectors
// but not a power of two, 16-bit 3080 with s stored late and 4104 early, add_held_shape; 8192;
// and fp32 H=1024) and 16-bit H=1024, which it leaves to the image pass;
// contiguous, strided and one element off (rows the held launch sends to its L1 passes); then
// the other conventions. (An fp8 y is left to the tests above: these cases cost about a
// second each, most of it the host's inputs of 4096 rows.)
TEST(Chunked, AddHeldRowsPassAtManyRows) {
  RB_REQUIRE_GPU();
  Sweep base = small_sweep({Op::add}, {"chunked"}, {DType::bf16, DType::f16, DType::f32}, {4096},
                           {1024, 2048, 3080, 4104, 8192});
  base.layouts = {Layout::contiguous, Layout::strided, Layout::misaligned};
  const std::vector<Sweep> sweeps{base, other_conventions(base, Layout::contiguous)};
  const std::vector<Record> recs = run_sweeps(sweeps);
  // 3 dtypes x 5 H x 3 layouts; 3 x 5 x 3 conventions.
  EXPECT_EQ(recs.size(), count_cases(sweeps));
  EXPECT_EQ(recs.size(), 45u + 45u);
  expect_passed_over_rows(recs, 4096);
}

// ---- conventions and the fp8 epilogue: every strategy against naive -----------------------
//
// Each built-in forward strategy (and add strategy) writes, under every convention and y
// dtype (x's, e4m3, e5m2), the same bits as `naive` under that convention, and the same amax.
// Exact equality holds because the inputs make every row's rrms exact whatever the
// reduction order: x (and r) are k/8 * 2^e for integers |k| <= 16 and one e per row, so
// every square is a multiple of 4^e/64 and a row's sum of squares (at most 4097 * 1024 such
// units, under 2^24) is exact in fp32 in any order; rrms = rsqrtf(sum / H + eps) is then
// the same float in every strategy, and each output element is the same fp32 expression of
// (x, rrms, w) rounded once the same way (the epilogue is one template). With generic
// inputs the strategies' rrms may differ in the last bit and y by an ulp (more under llama,
// whose round_X(x * rrms) can flip): exactness here is the sharper test. The layouts
// cover rows whose x and y phases differ (odd H) and bases one element off (fp8 y at an
// odd byte address). At M=37 (one wave: chunked's decode passes) and M=300 (its many-row
// passes).

struct EpilogueCase {
  Op op;
  DType x;
  std::int64_t H;
  Convention conv;
  DType y;
  bool offset;  // base pointers one element past an aligned allocation
};

std::string describe(const EpilogueCase& c) {
  std::ostringstream os;
  os << op_name(c.op) << " x " << dtype_name(c.x) << " H=" << c.H << " " << convention_name(c.conv) << " y "
     << dtype_name(c.y) << (c.offset ? " offset" : "");
  return os.str();
}

// Bytes every base pointer is aligned to: an offset base is one element off, so aligned to
// the smallest element size (an fp8 y's one byte).
std::int64_t base_align(const EpilogueCase& c) {
  return c.offset ? static_cast<std::int64_t>(std::min(dtype_size(c.x), dtype_size(c.y))) : 16;
}

// Bits of v (exactly representable, or rounded to nearest even) in a 16-bit dtype.
std::uint16_t bits16(DType t, float v) {
  return static_cast<std::uint16_t>(t == DType::bf16 ? ref::bits_of(ref::from_float<ref::bfloat16>(v))
                                                     : ref::bits_of(ref::from_float<ref::half>(v)));
}

// The inputs of one (op, x dtype, H): x and r as k/8 * 2^e, w in [-2, 2) rounded to x's dtype.
struct EpilogueInputs {
  std::vector<std::uint16_t> x, r, w;
};

EpilogueInputs epilogue_inputs(DType t, std::int64_t M, std::int64_t H) {
  std::uint32_t st = 2024u + static_cast<std::uint32_t>(H);
  const auto next = [&st] {
    st = st * 1664525u + 1013904223u;
    return st >> 8;
  };
  EpilogueInputs in;
  for (std::int64_t i = 0; i < M; ++i) {
    const float scale = std::ldexp(1.f, static_cast<int>(i % 5) - 2);
    for (std::int64_t j = 0; j < H; ++j) {
      in.x.push_back(bits16(t, static_cast<float>(static_cast<int>(next() % 33) - 16) / 8.f * scale));
      in.r.push_back(bits16(t, static_cast<float>(static_cast<int>(next() % 33) - 16) / 8.f * scale));
    }
  }
  for (std::int64_t j = 0; j < H; ++j)
    in.w.push_back(bits16(t, static_cast<float>(next() % 4096) / 1024.f - 2.f));
  return in;
}

// One launch's outputs, as bytes.
struct EpilogueOut {
  std::vector<unsigned char> y, s;
  std::vector<float> rrms;
  float amax = 0.f;
};

// Runs kernel k on case c (M rows, stride H, every tensor of x's dtype but y). Returns false,
// having reported why, when it did not run.
bool run_epilogue_case(const KernelInfo& k, const EpilogueCase& c, std::int64_t M, const EpilogueInputs& in,
                       EpilogueOut& out) {
  const std::int64_t H = c.H;
  const std::size_t xs = 2, ys = dtype_size(c.y);
  const std::size_t off = c.offset ? 1 : 0;  // elements
  const Problem p = Problem::of(c.op, M, H, c.x, c.x, c.x, H, base_align(c), c.conv, c.y);
  if (const auto why = check_common(k, p)) {
    ADD_FAILURE() << k.name << " refuses " << describe(c) << ": " << *why;
    return false;
  }
  const std::size_t n = static_cast<std::size_t>(M * H);
  DeviceBuffer x((n + 1) * xs), r((n + 1) * xs), w((H + 1) * xs), y((n + 1) * ys), sres((n + 1) * xs),
      rrms(M * 4), scale(4), amax(4);
  const float scale_value = 200.f;  // e4m3 saturates past |y| = 2.24; e5m2 does not
  const auto up = [](const DeviceBuffer& b, std::size_t offset_bytes, const void* h, std::size_t bytes) {
    return cudaMemcpy(static_cast<char*>(b.get()) + offset_bytes, h, bytes, cudaMemcpyHostToDevice);
  };
  if (up(x, off * xs, in.x.data(), n * xs) != cudaSuccess ||
      up(r, off * xs, in.r.data(), n * xs) != cudaSuccess ||
      up(w, off * xs, in.w.data(), H * xs) != cudaSuccess || up(scale, 0, &scale_value, 4) != cudaSuccess ||
      cudaMemset(y.get(), 0xff, y.bytes()) != cudaSuccess ||
      cudaMemset(sres.get(), 0xff, sres.bytes()) != cudaSuccess ||
      cudaMemset(amax.get(), 0xff, 4) != cudaSuccess) {
    ADD_FAILURE() << "device buffers for " << describe(c);
    return false;
  }
  const auto at = [](const DeviceBuffer& b, std::size_t offset_bytes) {
    return static_cast<void*>(static_cast<char*>(b.get()) + offset_bytes);
  };
  std::unique_ptr<Plan> plan = k.prepare(p, "");
  cudaError_t e = cudaSuccess;
  // The pointers FwdArgs and AddArgs share.
  const auto bind = [&](auto& a) {
    a.x = at(x, off * xs);
    a.w = at(w, off * xs);
    a.y = at(y, off * ys);
    a.rrms = static_cast<float*>(rrms.get());
    a.scale = static_cast<const float*>(scale.get());
    a.amax = static_cast<float*>(amax.get());
  };
  if (c.op == Op::fwd) {
    FwdArgs a = fwd_args_for(p);
    bind(a);
    e = plan->launch(a, nullptr);
  } else {
    AddArgs a = add_args_for(p);
    bind(a);
    a.r = at(r, off * xs);
    a.s = at(sres, off * xs);
    e = plan->launch(a, nullptr);
  }
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    ADD_FAILURE() << k.name << " " << describe(c) << ": " << cudaGetErrorString(e);
    return false;
  }
  out.y.resize(y.bytes());
  out.s.resize(c.op == Op::add ? sres.bytes() : 0);
  out.rrms.resize(static_cast<std::size_t>(M));
  e = cudaMemcpy(out.y.data(), y.get(), y.bytes(), cudaMemcpyDeviceToHost);
  if (e == cudaSuccess && c.op == Op::add)
    e = cudaMemcpy(out.s.data(), sres.get(), sres.bytes(), cudaMemcpyDeviceToHost);
  if (e == cudaSuccess) e = cudaMemcpy(out.rrms.data(), rrms.get(), M * 4, cudaMemcpyDeviceToHost);
  if (e == cudaSuccess) e = cudaMemcpy(&out.amax, amax.get(), 4, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) {
    ADD_FAILURE() << "copy back " << describe(c) << ": " << cudaGetErrorString(e);
    return false;
  }
  return true;
}

// The first differing element of two outputs of elem_size bytes per element, or -1.
std::int64_t first_difference(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b,
                              std::size_t elem_size) {
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (a[i] != b[i]) return static_cast<std::int64_t>(i / elem_size);
  return a.size() == b.size() ? -1 : 0;
}

TEST(Epilogue, StrategiesMatchNaiveBitwise) {
  RB_REQUIRE_GPU();
  const KernelInfo* naive = find_kernel("naive");
  ASSERT_NE(naive, nullptr);
  int compared = 0;
  for (std::int64_t M : {37, 300})
  for (Op op : {Op::fwd, Op::add})
    for (DType t : {DType::bf16, DType::f16})
      for (std::int64_t H : {1, 127, 4096, 4097}) {
        const EpilogueInputs in = epilogue_inputs(t, M, H);
        for (Convention conv :
             {Convention::fp32, Convention::llama, Convention::gemma, Convention::zero_centered})
          for (DType y : {t, DType::e4m3, DType::e5m2})
            for (bool offset : {false, true}) {
              const EpilogueCase c{op, t, H, conv, y, offset};
              SCOPED_TRACE(describe(c));
              EpilogueOut want;
              if (!run_epilogue_case(*naive, c, M, in, want)) continue;
              for (const char* name : {"warp-row", "row-vector", "chunked"}) {
                const KernelInfo* k = find_kernel(name);
                ASSERT_NE(k, nullptr) << name;
                const Problem p = Problem::of(op, M, H, t, t, t, H, base_align(c), conv, y);
                if (!k->has_op(op) || H > k->max_H(p)) continue;
                EpilogueOut got;
                if (!run_epilogue_case(*k, c, M, in, got)) continue;
                ++compared;
                EXPECT_EQ(std::memcmp(got.rrms.data(), want.rrms.data(), M * 4), 0)
                    << name << ": rrms differs from naive's (the inputs make it exact)";
                const std::int64_t dy = first_difference(got.y, want.y, dtype_size(y));
                EXPECT_EQ(dy, -1) << name << ": y differs from naive's at element " << dy << " (row "
                                  << (dy - (offset ? 1 : 0)) / H << ")";
                if (op == Op::add) {
                  const std::int64_t ds = first_difference(got.s, want.s, 2);
                  EXPECT_EQ(ds, -1) << name << ": s differs from naive's at element " << ds;
                }
                if (is_fp8(y)) {
                  std::uint32_t ga = 0, wa = 0;
                  std::memcpy(&ga, &got.amax, 4);
                  std::memcpy(&wa, &want.amax, 4);
                  EXPECT_EQ(ga, wa) << name << ": amax " << got.amax << ", naive's " << want.amax;
                  EXPECT_GT(want.amax, 0.f);
                }
              }
            }
      }
  EXPECT_GT(compared, 0);
}

// A case whose tensors do not fit the device-memory budget is a skip that says so, and the
// sweep goes on with the cases that fit.
TEST(DeviceMemory, CaseAboveTheBudgetIsSkippedAndTheSweepGoesOn) {
  RB_REQUIRE_GPU();
  RunConfig cfg;
  cfg.time = false;
  cfg.max_device_bytes = 32 << 20;  // 32 MiB: M=64 H=4096 bf16 fits, M=16384 (>= 256 MiB) does not
  Runner runner(open_device(0), cfg);
  std::vector<Record> recs;
  runner.run(expand(small_sweep({Op::fwd, Op::bwd}, {"auto"}, {DType::bf16}, {16384, 64}, {4096})),
             [&](const Record& r) { recs.push_back(r); });
  ASSERT_EQ(recs.size(), 4u);
  for (const Record& r : recs) {
    if (r.M == 16384) {
      EXPECT_EQ(r.status, Status::skip) << describe(r);
      EXPECT_NE(r.reason.find("--max-device-mem"), std::string::npos) << describe(r);
    } else {
      EXPECT_EQ(r.status, Status::pass) << describe(r);
    }
  }
}

// A case past 2^56 elements a matrix (the app refuses it; a caller of the runner may not) is a
// skip that says why, before any byte count could wrap into a small allocation, and the
// sweep goes on. Every kernel, so a plugin's INT64_MAX max_H cannot take it further.
TEST(DeviceMemory, CaseBeyondByteCountsIsSkippedAndTheSweepGoesOn) {
  RB_REQUIRE_GPU();
  RunConfig cfg;
  cfg.time = false;
  Runner runner(open_device(0), cfg);
  std::vector<Record> recs;
  runner.run(expand(small_sweep({Op::fwd, Op::bwd}, {"naive", "auto"}, {DType::f32}, {std::int64_t{1} << 40, 2},
                                {std::int64_t{1} << 55, 64})),
             [&](const Record& r) { recs.push_back(r); });
  ASSERT_EQ(recs.size(), 16u);
  for (const Record& r : recs) {
    if (too_large(r.M, r.H)) {
      EXPECT_EQ(r.status, Status::skip) << describe(r);
      EXPECT_NE(r.reason.find("2^56"), std::string::npos) << describe(r);
      EXPECT_EQ(r.bytes, 0) << describe(r);
      EXPECT_GE(r.stride, r.H) << describe(r);
    } else if (r.M > 0x7fffffff) {
      EXPECT_EQ(r.status, Status::skip) << describe(r);  // the grid's limit on rows
    } else {
      EXPECT_EQ(r.status, Status::pass) << describe(r);
    }
  }
  // The skip rows are rows the tool's own reader takes back (compare, merge).
  EXPECT_EQ(read_csv_text("skips", csv_file_text(recs)).size(), recs.size());
}

TEST(Timing, ProducesBandwidthAgainstCopyCeiling) {
  RB_REQUIRE_GPU();
  const std::vector<Record> recs =
      run_sweep(small_sweep({Op::fwd}, {"row-vector"}, {DType::bf16}, {1, 4096}, {4096}), true);
  ASSERT_EQ(recs.size(), 2u);
  for (const Record& r : recs) {
    EXPECT_EQ(r.status, Status::pass) << describe(r);
    ASSERT_TRUE(r.median_us && r.gbps && r.copy_gbps && r.pct_of_copy) << describe(r);
    EXPECT_GE(*r.samples, 10);
    EXPECT_GT(*r.copy_gbps, 100.0);
    EXPECT_LE(*r.min_us, *r.median_us);
    EXPECT_LE(*r.median_us, *r.max_us);
    EXPECT_NEAR(*r.gbps, r.bytes / (*r.median_us * 1e3), 1e-6 * *r.gbps);
  }
  EXPECT_TRUE(recs[0].graph_us.has_value()) << "M=1 must also be timed as graph replay";
  EXPECT_FALSE(recs[1].graph_us.has_value());
}

// A backward op is timed over all its launches (dx and partials, then the dw reduction),
// captured into a graph at small M like any other op.
TEST(Timing, BackwardIsTimedOverAllItsLaunches) {
  RB_REQUIRE_GPU();
  const std::vector<Record> recs =
      run_sweep(small_sweep({Op::bwd, Op::add_bwd}, {"auto"}, {DType::bf16}, {1, 4096}, {4096}), true);
  ASSERT_EQ(recs.size(), 4u);
  for (const Record& r : recs) {
    EXPECT_EQ(r.status, Status::pass) << describe(r);
    ASSERT_TRUE(r.median_us && r.gbps && r.pct_of_copy) << describe(r);
    EXPECT_EQ(r.graph_us.has_value(), r.M == 1) << describe(r);
  }
}

}  // namespace
}  // namespace rb

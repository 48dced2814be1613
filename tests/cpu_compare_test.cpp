// reports/compare and reports/merge, and the `compare` / `merge` subcommands: the regression
// rule (status changes, bandwidth beyond threshold and noise, missing and new keys), input
// errors (exit 2 naming file:line and column, duplicate keys, different GPUs), the markdown
// order, merging shards, and truncated or garbled CSVs that must never crash the gate. Logic
// is tested through the library; exit codes through the built binary (found, like in
// cpu_cli_test.cpp, at <dir of this test>/../rmsnorm-bench). Suites are named Compare* and
// Merge*. CPU only.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "app/cmd_compare.h"
#include "reports/compare.h"
#include "reports/csv_reader.h"
#include "reports/csv_writer.h"
#include "reports/merge.h"
#include "reports/record.h"
#include "tests/run_bench.h"

namespace fs = std::filesystem;

namespace rb {
namespace {

// ---------------------------------------------------------------------------------------
// Running the binary

using testing_support::bench_exe;
using testing_support::run_bench;
using testing_support::RunResult;

std::string read_file(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// A fresh, empty directory per test, removed afterwards.
class CompareTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) / (std::string("rb_compare_") + info->test_suite_name() + "_" +
                                             info->name() + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::string write_csv(const std::string& name, const std::vector<Record>& rows) const {
    CsvWriter w(path(name));
    for (const Record& r : rows) w.write(r);
    return path(name);
  }

  std::string write_file(const std::string& name, const std::string& text) const {
    std::ofstream(path(name), std::ios::binary) << text;
    return path(name);
  }

  void require_binary() const {
    const fs::path exe = bench_exe();
    ASSERT_FALSE(exe.empty()) << "cannot read /proc/self/exe";
    ASSERT_TRUE(fs::exists(exe)) << "rmsnorm-bench not found at " << exe;
  }

  fs::path dir_;
};

class MergeTest : public CompareTest {};

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// ---------------------------------------------------------------------------------------
// Records

Record row(const std::string& kernel, std::int64_t H, double gbps, double noise_pct,
           Status status = Status::pass) {
  Record r;
  r.gpu = "NVIDIA H200";
  r.cc = "9.0";
  r.kernel = kernel;
  r.picked = kernel == "auto" ? "row-vector" : kernel;
  r.op = "fwd";
  r.dtype = "bf16";
  r.wdtype = "bf16";
  r.M = 16384;
  r.H = H;
  r.stride = H;
  r.layout = "contiguous";
  r.eps = 1e-5;
  r.dist = "normal";
  r.seed = 1;
  r.status = status;
  r.reason = status == Status::fail ? "12 mismatches, worst at (3, 7)" : "";
  r.rows_checked = 16384;
  r.max_abs_err = 0.0078125;
  r.max_rel_err = 0.00390625;
  r.max_ulp = 1;
  r.atol = 1e-2;
  r.rtol = 1e-2;
  r.bytes = 2 * 16384 * H * 2 + H * 2;
  if (status == Status::skip || status == Status::error) return r;  // never timed
  // The time that gives gbps, so the row reads back (the reader checks gbps against it).
  r.median_us = static_cast<double>(r.bytes) / (gbps * 1e3);
  r.min_us = *r.median_us * 0.99;
  r.max_us = *r.median_us * 1.03;
  r.noise_pct = noise_pct;
  r.samples = 20;
  r.gbps = gbps;
  r.copy_gbps = 4275;
  r.pct_of_copy = 100.0 * gbps / 4275;
  return r;
}

// r measured at another bandwidth: its time and the columns derived from it follow.
void set_gbps(Record& r, double gbps) {
  r = row(r.kernel, r.H, gbps, r.noise_pct.value_or(0), r.status);
}

// r as measured on another card: `gpu`, whose copy ceiling is copy_gbps, at pct % of it.
Record on_card(Record r, const std::string& gpu, double copy_gbps, double pct) {
  const double gbps = pct * copy_gbps / 100.0;
  r = row(r.kernel, r.H, gbps, r.noise_pct.value_or(0), r.status);
  r.gpu = gpu;
  r.copy_gbps = copy_gbps;
  r.pct_of_copy = 100.0 * gbps / copy_gbps;
  return r;
}

// r as a --no-check run writes it (harness/runner.cpp): pass, nothing compared with the
// reference (rows_checked 0, no metrics), timed as before.
Record unchecked(Record r) {
  r.status = Status::pass;
  r.reason = "not checked (--no-check)";
  r.rows_checked = 0;
  r.max_abs_err = r.max_rel_err = r.max_ulp = 0;
  r.mismatches = 0;
  r.worst_row = r.worst_col = -1;
  return r;
}

// Four cases with room for each kind of change.
std::vector<Record> baseline_rows() {
  return {row("auto", 4096, 4000, 0.5), row("warp-row", 1024, 3000, 0.5), row("chunked", 65536, 3900, 0.5),
          row("naive", 4097, 800, 0.5)};
}

const CompareRow& find(const CompareResult& r, const Record& rec) {
  const std::string key = case_key(rec);
  for (const CompareRow& cr : r.rows)
    if (cr.key == key) return cr;
  throw std::runtime_error("key not in result: " + key);
}

CompareResult compare_one(const Record& base, const Record& cur, const CompareOptions& o = {}) {
  return compare_records({base}, {cur}, o);
}

// ---------------------------------------------------------------------------------------
// The rule

TEST(CompareRule, ImprovementIsFlaggedAndDoesNotFail) {
  const CompareResult r = compare_one(row("auto", 4096, 4000, 0.5), row("auto", 4096, 4400, 0.5));
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].change, Change::improvement);
  ASSERT_TRUE(r.rows[0].change_pct);
  EXPECT_NEAR(*r.rows[0].change_pct, 10.0, 1e-9);
  EXPECT_EQ(r.regressions(), 0u);
  EXPECT_FALSE(r.failed());
}

TEST(CompareRule, DropWithinNoiseIsNotFlagged) {
  const Record base = row("auto", 4096, 4000, 2.0);
  const Record cur = row("auto", 4096, 3880, 2.0);  // -3%
  const CompareResult r = compare_one(base, cur);
  EXPECT_EQ(r.rows[0].change, Change::unchanged);
  EXPECT_NEAR(*r.rows[0].change_pct, -3.0, 1e-9);
  EXPECT_EQ(*r.rows[0].base_noise_pct, 2.0);
  EXPECT_EQ(*r.rows[0].cur_noise_pct, 2.0);
  // Below even a 1% threshold, the summed noise (4%) still covers a 3% drop...
  CompareOptions strict;
  strict.max_slowdown_pct = 1;
  EXPECT_EQ(compare_one(base, cur, strict).rows[0].change, Change::unchanged);
  // ...while quiet rows make the same drop a regression.
  const CompareResult quiet = compare_one(row("auto", 4096, 4000, 0.5), row("auto", 4096, 3880, 0.5), strict);
  EXPECT_EQ(quiet.rows[0].change, Change::regression);
}

TEST(CompareRule, TenPercentDropWithLowNoiseIsARegression) {
  const CompareResult r = compare_one(row("auto", 4096, 4000, 0.5), row("auto", 4096, 3600, 0.5));
  EXPECT_EQ(r.rows[0].change, Change::regression);
  EXPECT_NEAR(*r.rows[0].change_pct, -10.0, 1e-9);
  EXPECT_EQ(r.regressions(), 1u);
  EXPECT_TRUE(r.failed());
  // A generous threshold lets it through.
  CompareOptions loose;
  loose.max_slowdown_pct = 15;
  EXPECT_EQ(compare_one(row("auto", 4096, 4000, 0.5), row("auto", 4096, 3600, 0.5), loose).rows[0].change,
            Change::unchanged);
}

TEST(CompareRule, DropBeyondThresholdButWithinNoiseIsNotFlagged) {
  // 10% down, but each run was 6% noisy: the summed 12% covers it.
  const CompareResult r = compare_one(row("auto", 4096, 4000, 6), row("auto", 4096, 3600, 6));
  EXPECT_EQ(r.rows[0].change, Change::unchanged);
}

TEST(CompareRule, StoppingToPassIsARegression) {
  for (Status after : {Status::fail, Status::error, Status::skip}) {
    Record cur = row("auto", 4096, 4000, 0.5, after);
    if (after == Status::skip) cur.gbps.reset();
    const CompareResult r = compare_one(row("auto", 4096, 4000, 0.5), cur);
    EXPECT_EQ(r.rows[0].change, Change::regression) << status_name(after);
    EXPECT_TRUE(r.rows[0].status_changed());
    EXPECT_TRUE(contains(r.rows[0].why, std::string("pass -> ") + status_name(after))) << r.rows[0].why;
  }
}

TEST(CompareRule, StartingToPassIsAnImprovement) {
  for (Status before : {Status::fail, Status::error}) {
    const CompareResult r = compare_one(row("auto", 4096, 4000, 0.5, before), row("auto", 4096, 4000, 0.5));
    EXPECT_EQ(r.rows[0].change, Change::improvement) << status_name(before);
  }
}

// A --no-check run says the kernel ran, not that it is right: it must not clear a failure.
TEST(CompareRule, UncheckedPassNeverFixesAFailure) {
  for (Status before : {Status::fail, Status::error}) {
    SCOPED_TRACE(status_name(before));
    const CompareResult r =
        compare_one(row("auto", 4096, 4000, 0.5, before), unchecked(row("auto", 4096, 4000, 0.5)));
    EXPECT_EQ(r.rows[0].change, Change::unchanged);
    EXPECT_TRUE(r.rows[0].status_changed());
    EXPECT_TRUE(contains(r.rows[0].why, std::string(status_name(before)) + " -> pass (not checked)"))
        << r.rows[0].why;
    EXPECT_FALSE(r.failed());
    // Neither a regression nor an improvement, and still shown in both reports.
    const std::string text = compare_text(r, "b.csv", "c.csv");
    EXPECT_TRUE(contains(text, "0 improvement(s)")) << text;
    EXPECT_TRUE(contains(text, " -> pass (not checked)")) << text;
    const std::string md = compare_markdown(r, "b.csv", "c.csv");
    EXPECT_TRUE(contains(md, "Status changes that are neither")) << md;
    EXPECT_TRUE(contains(md, " -> pass (not checked) |")) << md;
  }
  // A checked pass still fixes it; the unchecked row's bandwidth is still judged.
  EXPECT_EQ(
      compare_one(row("auto", 4096, 4000, 0.5, Status::fail), row("auto", 4096, 4000, 0.5)).rows[0].change,
      Change::improvement);
  EXPECT_EQ(compare_one(row("auto", 4096, 4000, 0.5, Status::fail), unchecked(row("auto", 4096, 3000, 0.5)))
                .rows[0]
                .change,
            Change::regression);
}

TEST(CompareRule, CheckedPassToUncheckedIsARegression) {
  const Record checked = row("auto", 4096, 4000, 0.5);
  const CompareResult r = compare_one(checked, unchecked(checked));
  EXPECT_EQ(r.rows[0].change, Change::regression);
  EXPECT_EQ(r.rows[0].why, "pass -> pass (not checked)");
  EXPECT_TRUE(r.failed());
  // Two timing-only runs compare on bandwidth alone.
  EXPECT_EQ(compare_one(unchecked(checked), unchecked(checked)).rows[0].change, Change::unchanged);
  EXPECT_FALSE(compare_one(unchecked(checked), unchecked(checked)).rows[0].status_changed());
  EXPECT_EQ(compare_one(unchecked(checked), unchecked(row("auto", 4096, 3000, 0.5))).rows[0].change,
            Change::regression);
  // Checked again: no regression, shown as a status change; a failure after it is a regression.
  const CompareResult again = compare_one(unchecked(checked), checked);
  EXPECT_EQ(again.rows[0].change, Change::unchanged);
  EXPECT_TRUE(again.rows[0].status_changed());
  EXPECT_EQ(compare_one(unchecked(checked), row("auto", 4096, 4000, 0.5, Status::fail)).rows[0].change,
            Change::regression);
}

// A timing-only gate (--allow-unchecked): checked -> unchecked is a status change judged on
// bandwidth; a failure still never becomes an improvement through it.
TEST(CompareRule, AllowUncheckedJudgesBandwidthOnly) {
  CompareOptions o;
  o.allow_unchecked = true;
  const Record checked = row("auto", 4096, 4000, 0.5);
  const CompareResult same = compare_one(checked, unchecked(checked), o);
  EXPECT_EQ(same.rows[0].change, Change::unchanged);
  EXPECT_TRUE(same.rows[0].status_changed());
  EXPECT_FALSE(same.failed());
  EXPECT_EQ(compare_one(checked, unchecked(row("auto", 4096, 3000, 0.5)), o).rows[0].change, Change::regression);
  EXPECT_NE(compare_one(row("auto", 4096, 4000, 0.5, Status::fail), unchecked(checked), o).rows[0].change,
            Change::improvement);
}

TEST(CompareRule, UntimedRowsAreComparedByStatusOnly) {
  Record base = row("auto", 4096, 4000, 0.5);
  Record cur = row("auto", 4096, 1000, 0.5);
  cur.gbps.reset();
  const CompareResult r = compare_one(base, cur);
  EXPECT_EQ(r.rows[0].change, Change::unchanged);
  EXPECT_FALSE(r.rows[0].change_pct);
}

TEST(CompareRule, MissingKeyIsARegressionUnlessAllowed) {
  const std::vector<Record> base = baseline_rows();
  std::vector<Record> cur = base;
  cur.erase(cur.begin() + 1);
  const CompareResult r = compare_records(base, cur, {});
  EXPECT_EQ(find(r, base[1]).change, Change::missing);
  EXPECT_EQ(r.regressions(), 1u);
  EXPECT_TRUE(r.failed());

  CompareOptions allow;
  allow.allow_missing = true;
  const CompareResult allowed = compare_records(base, cur, allow);
  EXPECT_EQ(find(allowed, base[1]).change, Change::missing);
  EXPECT_EQ(allowed.count(Change::missing), 1u);
  EXPECT_EQ(allowed.regressions(), 0u);
  EXPECT_TRUE(contains(compare_markdown(allowed, "b.csv", "c.csv"), case_label(base[1])));
}

TEST(CompareRule, NewKeyIsListedNotARegression) {
  const std::vector<Record> base = baseline_rows();
  std::vector<Record> cur = base;
  const Record extra = row("row-vector", 8192, 4100, 0.5);
  cur.push_back(extra);
  const CompareResult r = compare_records(base, cur, {});
  EXPECT_EQ(find(r, extra).change, Change::added);
  EXPECT_EQ(r.count(Change::added), 1u);
  EXPECT_EQ(r.regressions(), 0u);
  EXPECT_EQ(r.rows.back().key, case_key(extra));  // new keys come after the baseline's
  EXPECT_TRUE(contains(compare_markdown(r, "b.csv", "c.csv"), case_label(extra)));
  EXPECT_TRUE(contains(compare_text(r, "b.csv", "c.csv"), case_label(extra)));
}

TEST(CompareRule, IdenticalInputsAreAllUnchanged) {
  const std::vector<Record> base = baseline_rows();
  const CompareResult r = compare_records(base, base, {});
  EXPECT_EQ(r.rows.size(), base.size());
  EXPECT_EQ(r.count(Change::unchanged), base.size());
  EXPECT_EQ(r.regressions(), 0u);
  for (const CompareRow& cr : r.rows) EXPECT_EQ(*cr.change_pct, 0.0);
}

TEST(CompareRule, DuplicateKeyIsAnInputError) {
  std::vector<Record> cur = baseline_rows();
  cur.push_back(cur[2]);
  try {
    compare_records(baseline_rows(), cur, {});
    FAIL() << "no CompareError";
  } catch (const CompareError& e) {
    EXPECT_EQ(e.side(), CompareError::Side::current);
    EXPECT_TRUE(contains(e.what(), case_label(cur[2]))) << e.what();
    EXPECT_TRUE(contains(e.what(), "twice")) << e.what();
  }
  EXPECT_THROW(compare_records(cur, baseline_rows(), {}), CompareError);
}

TEST(CompareRule, DifferentGpuIsAnInputErrorUnlessIgnored) {
  std::vector<Record> cur = baseline_rows();
  for (Record& r : cur) r.gpu = "NVIDIA H100 80GB HBM3";
  try {
    compare_records(baseline_rows(), cur, {});
    FAIL() << "no CompareError";
  } catch (const CompareError& e) {
    EXPECT_TRUE(contains(e.what(), "NVIDIA H200")) << e.what();
    EXPECT_TRUE(contains(e.what(), "NVIDIA H100 80GB HBM3")) << e.what();
  }
  CompareOptions ignore;
  ignore.ignore_gpu = true;
  const CompareResult r = compare_records(baseline_rows(), cur, ignore);
  EXPECT_EQ(r.count(Change::unchanged), cur.size());
}

// The baseline's four rows again on a card with 71% of the H200's copy ceiling, each at the
// same % of copy but the chunked row, 10% lower.
std::vector<Record> rows_on_h100(const std::vector<Record>& base) {
  std::vector<Record> cur;
  for (const Record& b : base)
    cur.push_back(
        on_card(b, "NVIDIA H100 80GB HBM3", 3050, *b.pct_of_copy * (b.kernel == "chunked" ? 0.9 : 1.0)));
  return cur;
}

TEST(CompareRule, PctOfCopyJudgesRowsOfDifferentGpusByTheirOwnCeiling) {
  const std::vector<Record> base = baseline_rows();
  const std::vector<Record> cur = rows_on_h100(base);
  CompareOptions o;
  o.ignore_gpu = true;
  // In GB/s every row lost the cards' difference, 28.7%.
  const CompareResult by_gbps = compare_records(base, cur, o);
  EXPECT_EQ(by_gbps.count(Change::regression), base.size());
  EXPECT_TRUE(contains(compare_text(by_gbps, "b.csv", "c.csv"), "note: the files name different GPUs"));
  EXPECT_TRUE(contains(compare_markdown(by_gbps, "b.csv", "c.csv"), "- Note: the files name different GPUs"));
  // In % of copy only the row that lost against its own card's ceiling.
  o.metric = Metric::pct_of_copy;
  const CompareResult by_pct = compare_records(base, cur, o);
  EXPECT_EQ(by_pct.count(Change::regression), 1u);
  EXPECT_EQ(by_pct.count(Change::unchanged), base.size() - 1);
  const CompareRow& chunked = find(by_pct, base[2]);
  EXPECT_EQ(chunked.change, Change::regression);
  ASSERT_TRUE(chunked.change_pct);
  EXPECT_NEAR(*chunked.change_pct, -10.0, 1e-9);
  EXPECT_TRUE(contains(chunked.why, "-10.0% in % of copy (91.2 -> 82.1;")) << chunked.why;
  const std::string text = compare_text(by_pct, "b.csv", "c.csv");
  EXPECT_FALSE(contains(text, "note: the files name")) << text;
  const std::string md = compare_markdown(by_pct, "b.csv", "c.csv");
  EXPECT_TRUE(contains(md, "| case | status | % of copy baseline | % of copy current | change |")) << md;
  EXPECT_TRUE(contains(md, "in % of copy (each row against its own run's copy ceiling)")) << md;
  // On one card the two metrics agree: the same regression, the same change.
  std::vector<Record> same = base;
  set_gbps(same[2], 3900 * 0.9);
  CompareOptions one;
  one.metric = Metric::pct_of_copy;
  const CompareResult r = compare_records(base, same, one);
  EXPECT_EQ(r.count(Change::regression), 1u);
  EXPECT_NEAR(*find(r, base[2]).change_pct, *find(compare_records(base, same, {}), base[2]).change_pct, 1e-9);
}

TEST(CompareRule, MarkdownPutsVerdictThenRegressionsThenImprovementsThenUnchanged) {
  const std::vector<Record> base = baseline_rows();
  std::vector<Record> cur = base;
  set_gbps(cur[0], 3000);  // regression
  set_gbps(cur[1], 3600);  // improvement
  cur[3].status = Status::fail;                       // regression by status
  cur.push_back(row("row-vector", 8192, 4100, 0.5));  // new
  const CompareResult r = compare_records(base, cur, {});
  EXPECT_EQ(r.regressions(), 2u);
  const std::string md = compare_markdown(r, "base.csv", "cur.csv");
  const std::size_t verdict = md.find("FAIL: 2 regressions");
  const std::size_t regressions = md.find("## Regressions (2)");
  const std::size_t improvements = md.find("## Improvements (1)");
  const std::size_t unchanged = md.find("## Unchanged (1)");
  const std::size_t added = md.find("## New in current (1)");
  ASSERT_NE(verdict, std::string::npos) << md;
  ASSERT_NE(regressions, std::string::npos) << md;
  ASSERT_NE(improvements, std::string::npos) << md;
  ASSERT_NE(unchanged, std::string::npos) << md;
  ASSERT_NE(added, std::string::npos) << md;
  EXPECT_LT(verdict, regressions);
  EXPECT_LT(regressions, improvements);
  EXPECT_LT(improvements, unchanged);
  EXPECT_LT(unchanged, added);
  // Each changed case sits in its own section; the status change comes before the slowdown.
  const std::size_t fail_row = md.find(case_label(base[3]));
  const std::size_t slow_row = md.find(case_label(base[0]));
  const std::size_t fast_row = md.find(case_label(base[1]));
  EXPECT_TRUE(regressions < fail_row && fail_row < slow_row && slow_row < improvements) << md;
  EXPECT_TRUE(improvements < fast_row && fast_row < unchanged) << md;
  EXPECT_TRUE(contains(md, "-25.0%")) << md;

  const std::string pass = compare_markdown(compare_records(base, base, {}), "a", "b");
  EXPECT_TRUE(contains(pass, "PASS: no regression")) << pass;
  EXPECT_TRUE(contains(pass, "## Unchanged (4)")) << pass;
}

TEST(CompareRule, TextEndsWithTheVerdict) {
  std::vector<Record> cur = baseline_rows();
  set_gbps(cur[0], 3000);
  const std::string text = compare_text(compare_records(baseline_rows(), cur, {}), "base.csv", "cur.csv");
  EXPECT_TRUE(contains(text, "REGRESSION")) << text;
  EXPECT_TRUE(contains(text, case_label(cur[0]))) << text;
  EXPECT_EQ(text.substr(text.rfind('\n', text.size() - 2) + 1), "FAIL: 1 regression\n") << text;
}

// ---------------------------------------------------------------------------------------
// The CLI: exit codes and messages

TEST_F(CompareTest, CliImprovementExitsZero) {
  require_binary();
  std::vector<Record> cur = baseline_rows();
  set_gbps(cur[0], 4400);
  const RunResult r =
      run_bench({"compare", write_csv("base.csv", baseline_rows()), write_csv("cur.csv", cur)});
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "1 improvement")) << r.output;
  EXPECT_TRUE(contains(r.output, "PASS")) << r.output;
}

TEST_F(CompareTest, CliRegressionExitsOneAndWritesMarkdown) {
  require_binary();
  std::vector<Record> cur = baseline_rows();
  set_gbps(cur[0], 3600);  // -10%, noise 0.5% each
  const std::string md = path("report.md");
  const RunResult r =
      run_bench({"compare", write_csv("base.csv", baseline_rows()), write_csv("cur.csv", cur), "--md", md});
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "REGRESSION")) << r.output;
  EXPECT_TRUE(contains(r.output, case_label(cur[0]))) << r.output;
  const std::string text = read_file(md);
  EXPECT_TRUE(contains(text, "FAIL: 1 regression")) << text;
  EXPECT_TRUE(contains(text, "-10.0%")) << text;
  // A looser gate passes the same files.
  EXPECT_EQ(run_bench({"compare", path("base.csv"), path("cur.csv"), "--max-slowdown", "12"}).status, 0);
}

TEST_F(CompareTest, CliPassToFailExitsOne) {
  require_binary();
  std::vector<Record> cur = baseline_rows();
  cur[2].status = Status::fail;
  const RunResult r =
      run_bench({"compare", write_csv("base.csv", baseline_rows()), write_csv("cur.csv", cur)});
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "pass -> fail")) << r.output;
}

TEST_F(CompareTest, CliMissingKeyExitsOneUnlessAllowed) {
  require_binary();
  std::vector<Record> cur = baseline_rows();
  cur.pop_back();
  const std::string base = write_csv("base.csv", baseline_rows());
  const std::string current = write_csv("cur.csv", cur);
  const RunResult strict = run_bench({"compare", base, current});
  EXPECT_EQ(strict.status, 1) << strict.output;
  EXPECT_TRUE(contains(strict.output, "MISSING")) << strict.output;
  const RunResult allowed = run_bench({"compare", base, current, "--allow-missing"});
  EXPECT_EQ(allowed.status, 0) << allowed.output;
  EXPECT_TRUE(contains(allowed.output, "1 missing (allowed)")) << allowed.output;
}

TEST_F(CompareTest, CliNewKeyExitsZero) {
  require_binary();
  std::vector<Record> cur = baseline_rows();
  cur.push_back(row("row-vector", 8192, 4100, 0.5));
  const RunResult r =
      run_bench({"compare", write_csv("base.csv", baseline_rows()), write_csv("cur.csv", cur)});
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "1 new")) << r.output;
}

TEST_F(CompareTest, CliIdenticalFilesExitZero) {
  require_binary();
  const std::string base = write_csv("base.csv", baseline_rows());
  const RunResult r = run_bench({"compare", base, base});
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "0 regression(s)")) << r.output;
  EXPECT_TRUE(contains(r.output, "4 unchanged")) << r.output;
}

TEST_F(CompareTest, CliMalformedLineExitsTwoNamingFileLineAndColumn) {
  require_binary();
  const std::string base = write_csv("base.csv", baseline_rows());
  // Line 3 (the second data row) has "abc" where H belongs.
  std::vector<Record> rows = baseline_rows();
  std::string text = csv_header() + "\n" + csv_row(rows[0]) + "\n";
  Record bad = rows[1];
  bad.H = 777777;
  std::string line = csv_row(bad);
  line.replace(line.find(",777777,"), 8, ",abc,");
  text += line + "\n" + csv_row(rows[2]) + "\n";
  const std::string cur = write_file("cur.csv", text);
  const RunResult r = run_bench({"compare", base, cur});
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, cur + ":3")) << r.output;
  EXPECT_TRUE(contains(r.output, "column H")) << r.output;
  EXPECT_TRUE(contains(r.output, "abc")) << r.output;
}

TEST_F(CompareTest, CliWrongSchemaExitsTwo) {
  require_binary();
  const std::string base = write_csv("base.csv", baseline_rows());
  // A row of another schema version.
  Record other = baseline_rows()[0];
  other.schema = "rmsnorm-bench/4";
  const RunResult row_schema = run_bench({"compare", base, write_csv("v4.csv", {other})});
  EXPECT_EQ(row_schema.status, 2) << row_schema.output;
  EXPECT_TRUE(contains(row_schema.output, "schema")) << row_schema.output;
  EXPECT_TRUE(contains(row_schema.output, "rmsnorm-bench/4")) << row_schema.output;
  // A header that is not ours.
  const std::string foreign = write_file("foreign.csv", "name,value\nx,1\n");
  const RunResult header = run_bench({"compare", foreign, base});
  EXPECT_EQ(header.status, 2) << header.output;
  EXPECT_TRUE(contains(header.output, foreign)) << header.output;
}

TEST_F(CompareTest, CliDifferentGpuExitsTwoUnlessIgnored) {
  require_binary();
  std::vector<Record> cur = baseline_rows();
  for (Record& r : cur) r.gpu = "NVIDIA H100 80GB HBM3";
  const std::string base = write_csv("base.csv", baseline_rows());
  const std::string current = write_csv("cur.csv", cur);
  const RunResult r = run_bench({"compare", base, current});
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "NVIDIA H200")) << r.output;
  EXPECT_TRUE(contains(r.output, "NVIDIA H100 80GB HBM3")) << r.output;
  const RunResult ignored = run_bench({"compare", base, current, "--ignore-gpu"});
  EXPECT_EQ(ignored.status, 0) << ignored.output;
  EXPECT_TRUE(contains(ignored.output, "4 unchanged")) << ignored.output;
}

TEST_F(CompareTest, CliMetricPctOfCopyAcrossGpus) {
  require_binary();
  const std::string base = write_csv("base.csv", baseline_rows());
  const std::string current = write_csv("cur.csv", rows_on_h100(baseline_rows()));
  const RunResult gbps = run_bench({"compare", base, current, "--ignore-gpu"});
  EXPECT_EQ(gbps.status, 1) << gbps.output;
  EXPECT_TRUE(contains(gbps.output, "4 regression(s)")) << gbps.output;
  EXPECT_TRUE(contains(gbps.output, "--metric pct-of-copy")) << gbps.output;
  const RunResult pct = run_bench({"compare", base, current, "--ignore-gpu", "--metric", "pct-of-copy"});
  EXPECT_EQ(pct.status, 1) << pct.output;
  EXPECT_TRUE(contains(pct.output, "1 regression(s), 0 improvement(s), 3 unchanged")) << pct.output;
  EXPECT_TRUE(contains(pct.output, "in % of copy")) << pct.output;
  // Without --ignore-gpu the GPUs still refuse, whatever the metric.
  EXPECT_EQ(run_bench({"compare", base, current, "--metric", "pct-of-copy"}).status, 2);
  const RunResult bad = run_bench({"compare", base, current, "--metric", "pct"});
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_TRUE(contains(bad.output, "--metric")) << bad.output;
}

TEST_F(CompareTest, CliDuplicateKeyExitsTwoNamingTheFile) {
  require_binary();
  std::vector<Record> cur = baseline_rows();
  cur.push_back(cur[1]);
  const std::string current = write_csv("cur.csv", cur);
  const RunResult r = run_bench({"compare", write_csv("base.csv", baseline_rows()), current});
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, current)) << r.output;
  EXPECT_TRUE(contains(r.output, case_label(cur[1]))) << r.output;
}

// Lines of the file, not data row numbers: a blank line in between counts.
TEST_F(CompareTest, CliDuplicateKeyNamesFileAndBothLines) {
  require_binary();
  const std::vector<Record> rows = baseline_rows();
  const std::string current =
      write_file("cur.csv", csv_header() + "\n" + csv_row(rows[0]) + "\n" + csv_row(rows[1]) + "\n\n" +
                                csv_row(rows[2]) + "\n" + csv_row(rows[1]) + "\n");
  const std::string base = write_csv("base.csv", rows);
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"compare", base, current}, {"compare", current, base}}) {
    const RunResult r = run_bench(args);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_TRUE(
        contains(r.output, current + ":6: case " + case_label(rows[1]) + " appears twice, on lines 3 and 6"))
        << r.output;
  }
}

// A corrupted key column is refused, not read as another case that --allow-missing then lets
// drop out of the gate.
TEST_F(CompareTest, CliCorruptKeyColumnIsAnInputErrorEvenWithAllowMissing) {
  require_binary();
  std::vector<Record> cur = baseline_rows();
  cur[1].op = "bogus";
  const std::string current = write_csv("cur.csv", cur);
  const RunResult r =
      run_bench({"compare", write_csv("base.csv", baseline_rows()), current, "--allow-missing"});
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, current + ":3: column op: 'bogus' is out of range")) << r.output;
  EXPECT_FALSE(contains(r.output, "PASS")) << r.output;
}

TEST_F(CompareTest, CliUncheckedRunNeverClearsAFailure) {
  require_binary();
  std::vector<Record> base = baseline_rows();
  base[3] = row("naive", 4097, 800, 0.5, Status::fail);
  std::vector<Record> cur;
  for (const Record& r : baseline_rows()) cur.push_back(unchecked(r));
  const std::string md = path("diff.md");
  const RunResult r =
      run_bench({"compare", write_csv("base.csv", base), write_csv("cur.csv", cur), "--md", md});
  EXPECT_EQ(r.status, 1) << r.output;  // three checked passes no longer checked
  EXPECT_TRUE(contains(r.output, "3 regression(s), 0 improvement(s), 1 unchanged")) << r.output;
  EXPECT_TRUE(contains(r.output, case_label(cur[0]) + ": pass -> pass (not checked)")) << r.output;
  EXPECT_TRUE(contains(r.output, case_label(cur[3]) + ": fail -> pass (not checked)")) << r.output;
  EXPECT_TRUE(contains(read_file(md), "| fail -> pass (not checked) |")) << read_file(md);
  // The failing case alone: not fixed, and no regression either.
  const RunResult one = run_bench({"compare", write_csv("b1.csv", {base[3]}), write_csv("c1.csv", {cur[3]})});
  EXPECT_EQ(one.status, 0) << one.output;
  EXPECT_TRUE(contains(one.output, "0 improvement(s)")) << one.output;
  EXPECT_TRUE(contains(one.output, "fail -> pass (not checked)")) << one.output;
}

// --md names an input (by its path, another path to it, a symlink or a hard link): the report
// would replace it.
TEST_F(CompareTest, CliMdThatIsAnInputIsRefused) {
  require_binary();
  const std::string base = write_csv("base.csv", baseline_rows());
  std::vector<Record> rows = baseline_rows();
  set_gbps(rows[0], 3000);
  const std::string cur = write_csv("cur.csv", rows);
  const std::string base_text = read_file(base), cur_text = read_file(cur);
  fs::create_directories(dir_ / "sub");
  fs::create_symlink(base, path("link.csv"));
  fs::create_hard_link(cur, path("hard.csv"));
  for (const std::string& md : {base, cur, path("sub/../base.csv"), path("link.csv"), path("hard.csv")}) {
    const RunResult r = run_bench({"compare", base, cur, "--md", md});
    EXPECT_EQ(r.status, 2) << md << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "--md: '" + md + "' is the same file as ")) << r.output;
    EXPECT_FALSE(contains(r.output, "FAIL")) << r.output;
  }
  // The baseline named through the link, the report on its target.
  EXPECT_EQ(run_bench({"compare", path("link.csv"), cur, "--md", base}).status, 2);
  EXPECT_EQ(read_file(base), base_text);
  EXPECT_EQ(read_file(cur), cur_text);
  EXPECT_TRUE(fs::is_symlink(path("link.csv")));
}

// An --md that cannot be written is refused before any verdict is printed.
TEST_F(CompareTest, CliUnwritableMdExitsTwoBeforeAnyVerdict) {
  require_binary();
  const std::string base = write_csv("base.csv", baseline_rows());
  fs::create_directories(dir_ / "adir");
  write_file("afile", "x");
  for (const std::string& md : {path("adir"), path("afile/report.md")}) {
    const RunResult r = run_bench({"compare", base, base, "--md", md});
    EXPECT_EQ(r.status, 2) << md << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "--md: cannot write '" + md + "'")) << r.output;
    EXPECT_FALSE(contains(r.output, "PASS")) << r.output;
  }
  std::vector<Record> slower = baseline_rows();
  set_gbps(slower[0], 3000);
  const RunResult r = run_bench({"compare", base, write_csv("cur.csv", slower), "--md", path("adir")});
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_FALSE(contains(r.output, "FAIL")) << r.output;
}

// Writes text into the FIFO at path once a reader opens it, then closes it: one reader gets
// the text. The open is retried without blocking, so a reader that never comes cannot hang the
// test.
std::thread fifo_writer(const std::string& path, const std::string& text) {
  return std::thread([path, text] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(70);
    int fd = -1;
    while ((fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0 && errno == ENXIO &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (fd < 0) return;
    ::fcntl(fd, F_SETFL, 0);  // blocking writes from here on
    for (std::size_t done = 0; done < text.size();) {
      const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    ::close(fd);
  });
}

// `compare base.csv <(cat cur.csv)` and a named FIFO: the input is read once (it was opened
// twice: the pipe read as empty the second time, and the FIFO's second open never returned).
TEST_F(CompareTest, CliReadsInputsFromAPipeAndAFifo) {
  require_binary();
  const std::string base = write_csv("base.csv", baseline_rows());
  const std::string text = read_file(base);
  ASSERT_LT(text.size(), 4096u);  // fits the pipe's buffer: written whole before the reader starts
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fds[1]);
  const RunResult piped = run_bench({"compare", base, "/dev/fd/" + std::to_string(fds[0])});
  ::close(fds[0]);
  EXPECT_EQ(piped.status, 0) << piped.output;
  EXPECT_TRUE(contains(piped.output, "4 unchanged")) << piped.output;

  const std::string fifo = path("fifo.csv");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer = fifo_writer(fifo, text);
  const RunResult fifoed = run_bench({"compare", fifo, base});
  writer.join();
  EXPECT_EQ(fifoed.status, 0) << fifoed.output;
  EXPECT_TRUE(contains(fifoed.output, "4 unchanged")) << fifoed.output;
}

TEST_F(CompareTest, CliBadOptionsExitTwo) {
  require_binary();
  const std::string base = write_csv("base.csv", baseline_rows());
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"compare", base},
                                             {"compare", base, path("nope.csv")},
                                             {"compare", base, base, "--max-slowdown", "-1"},
                                             {"compare", base, base, "--max-slowdown", "nan"},
                                             {"compare", base, base, "--max-slowdown", "2000"},
                                             {"compare", base, base, "--max-slowdown", "fast"}}) {
    const RunResult r = run_bench(args);
    EXPECT_EQ(r.status, 2) << args.back() << "\n" << r.output;
  }
  const RunResult missing = run_bench({"compare", base, path("nope.csv")});
  EXPECT_TRUE(contains(missing.output, "nope.csv")) << missing.output;
  const RunResult slowdown = run_bench({"compare", base, base, "--max-slowdown", "nan"});
  EXPECT_TRUE(contains(slowdown.output, "--max-slowdown")) << slowdown.output;
}

TEST_F(CompareTest, UnreadableInputsExitTwoWithoutTheParser) {
  // run_compare directly, skipping CLI11's ExistingFile: the reader itself must refuse.
  CompareCmdOptions o;
  o.baseline = write_csv("base.csv", baseline_rows());
  o.current = path("does-not-exist.csv");
  EXPECT_EQ(run_compare(o), 2);
  o.current = dir_.string();  // a directory
  EXPECT_EQ(run_compare(o), 2);
  o.current = write_file("empty.csv", "");
  EXPECT_EQ(run_compare(o), 2);
  o.current = o.baseline;
  EXPECT_EQ(run_compare(o), 0);
}

// ---------------------------------------------------------------------------------------
// Truncated and garbled inputs: always 0, 1 or 2, never a signal; 2 unless still valid.

// The exit code compare must give, computed in-process with the library.
int expected_exit(const std::string& base_text, const std::string& cur_text) {
  std::vector<Record> base, cur;
  try {
    base = read_csv_text("base", base_text);
    cur = read_csv_text("cur", cur_text);
  } catch (const CsvError&) {
    return 2;
  }
  try {
    return compare_records(base, cur, {}).failed() ? 1 : 0;
  } catch (const CompareError&) {
    return 2;
  }
}

TEST_F(CompareTest, TruncatedAndGarbledInputsNeverCrash) {
  require_binary();
  std::vector<Record> rows = baseline_rows();
  rows.push_back(row("auto", 4096, 4000, 0.5, Status::fail));
  rows.back().dist = "outlier";
  rows.back().reason = "NaN where reference is finite, \"quoted\"";
  Record skip = row("warp-row", 65536, 0, 0, Status::skip);
  skip.reason = "H > 2048";
  skip.median_us.reset();
  skip.gbps.reset();
  skip.noise_pct.reset();
  rows.push_back(skip);
  const std::string base_path = write_csv("base.csv", rows);
  const std::string valid = read_file(base_path);
  ASSERT_GT(valid.size(), 200u);

  std::mt19937 rng(20261129);
  std::vector<std::pair<std::string, std::string>> cases;  // (what, text)
  std::uniform_int_distribution<std::size_t> offset(0, valid.size() - 1);
  for (int i = 0; i < 40; ++i) {
    const std::size_t cut = offset(rng);
    cases.emplace_back("cut at byte " + std::to_string(cut), valid.substr(0, cut));
  }
  const char kSpecials[] = ",\"\n\r\0x9.-e";  // the NUL included
  const std::string specials(kSpecials, sizeof kSpecials - 1);
  for (int i = 0; i < 60; ++i) {
    std::string text = valid;
    const int flips = 1 + static_cast<int>(rng() % 3);
    std::string what = "flipped";
    for (int f = 0; f < flips; ++f) {
      const std::size_t at = offset(rng);
      // Half random bytes, half the characters that matter to a CSV reader.
      const char c = (rng() % 2) ? static_cast<char>(rng() % 256) : specials[rng() % specials.size()];
      text[at] = c;
      what += " @" + std::to_string(at) + "=" + std::to_string(static_cast<unsigned char>(c));
    }
    cases.emplace_back(what, text);
  }

  int still_valid = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& [what, text] = cases[i];
    const std::string garbled = write_file("garbled" + std::to_string(i) + ".csv", text);
    // Garbled as CURRENT, and every fourth case as BASELINE too.
    std::vector<std::pair<std::vector<std::string>, int>> runs = {
        {{"compare", base_path, garbled}, expected_exit(valid, text)}};
    if (i % 4 == 0) runs.push_back({{"compare", garbled, base_path}, expected_exit(text, valid)});
    for (const auto& [args, expected] : runs) {
      const RunResult r = run_bench(args);
      EXPECT_EQ(r.signal, 0) << what << ": killed by signal " << r.signal << "\n" << r.output;
      EXPECT_TRUE(r.status == 0 || r.status == 1 || r.status == 2) << what << ": exit " << r.status << "\n"
                                                                   << r.output;
      EXPECT_EQ(r.status, expected) << what << " (" << args[1] << " vs " << args[2] << ")\n" << r.output;
      if (expected != 2) ++still_valid;
    }
  }
  std::printf("[          ] %d of %zu garbled runs were still valid input\n", still_valid,
              cases.size() + (cases.size() + 3) / 4);
  // Most damage must be caught; a few cuts and flips leave a valid file (e.g. a shorter number).
  EXPECT_LT(still_valid, static_cast<int>(cases.size()) / 2);
}

// ---------------------------------------------------------------------------------------
// Schema 1 against schema 2

TEST_F(CompareTest, Schema1BaselineAgainstItsSchema2Rewrite) {
  // The baseline of 2026-11-29, kept as measured (schema 1) beside the current one.
  const std::string v1_path = std::string(RB_SOURCE_DIR) + "/reports/baselines/h200-2026-11-29.csv";
  ASSERT_EQ(read_file(v1_path).rfind("schema,gpu,cc,kernel,picked,op,", 0), 0u) << "not schema 1";
  const std::vector<Record> v1 = read_csv(v1_path);
  const std::string v2_path = write_csv("h200-v2.csv", v1);
  ASSERT_EQ(read_file(v2_path).rfind("schema,gpu,cc,kernel,picked,provider,provider_version,op,", 0), 0u);
  const std::vector<Record> v2 = read_csv(v2_path);
  ASSERT_EQ(v2.size(), v1.size());
  for (std::size_t i = 0; i < v1.size(); ++i) ASSERT_EQ(case_key(v2[i]), case_key(v1[i])) << i;

  for (const auto& [base, cur] : {std::pair(v1, v2), std::pair(v2, v1)}) {
    const CompareResult r = compare_records(base, cur, {});
    EXPECT_EQ(r.regressions(), 0u);
    EXPECT_EQ(r.count(Change::missing), 0u);
    EXPECT_EQ(r.count(Change::added), 0u);
    EXPECT_EQ(r.count(Change::unchanged), v1.size());
  }
  // Identical rows from the two schemas are one row to merge.
  EXPECT_EQ(merge_records({{"v1.csv", v1}, {"v2.csv", v2}}).size(), v1.size());

  require_binary();
  const RunResult cli = run_bench({"compare", v1_path, v2_path});
  EXPECT_EQ(cli.status, 0) << cli.output;
  EXPECT_TRUE(contains(cli.output, "0 missing")) << cli.output;
  EXPECT_TRUE(contains(cli.output, "0 new")) << cli.output;
}

TEST_F(MergeTest, CliMergesSchema1IntoSchema2) {
  require_binary();
  const std::string v1 = write_file(
      "v1.csv",
      "schema,gpu,cc,kernel,picked,op,dtype,wdtype,rdtype,M,H,stride,layout,eps,dist,seed,status,reason,"
      "rows_checked,max_abs_err,max_rel_err,max_ulp,mismatches,worst_row,worst_col,atol,rtol,median_us,"
      "min_us,max_us,noise_pct,samples,graph_us,bytes,gbps,copy_gbps,pct_of_copy\n"
      "rmsnorm-bench/1,NVIDIA H200,9.0,naive,naive,fwd,bf16,bf16,,16384,8192,8192,contiguous,1e-05,normal,1,"
      "pass,,16384,0.0078125,0.00390625,1,0,-1,-1,0.01,0.01,178.962432,177,180,0.5,20,,536887296,3000,4275,"
      "70.17543859649123\n");
  Record vendor = baseline_rows()[0];
  vendor.kernel = "cudnn-fwd";
  vendor.provider = "cudnn";
  vendor.provider_version = "9.10.2";
  const std::string v2 = write_csv("v2.csv", {vendor});
  const std::string out = path("all.csv");
  const RunResult r = run_bench({"merge", v1, v2, "-o", out});
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string text = read_file(out);
  EXPECT_EQ(text.substr(0, text.find('\n')), csv_header());
  const std::vector<Record> merged = read_csv(out);
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].kernel, "naive");
  EXPECT_EQ(merged[0].provider, "");
  EXPECT_EQ(merged[1].provider, "cudnn");
  EXPECT_EQ(merged[1].provider_version, "9.10.2");
  EXPECT_EQ(names_in(dir_), (std::vector<std::string>{"all.csv", "v1.csv", "v2.csv"}));
}

// ---------------------------------------------------------------------------------------
// merge

TEST(MergeRecords, DisjointInputsConcatenateInOrder) {
  const std::vector<Record> all = baseline_rows();
  const std::vector<Record> a(all.begin(), all.begin() + 2), b(all.begin() + 2, all.end());
  const std::vector<Record> merged = merge_records({{"a.csv", a}, {"b.csv", b}});
  ASSERT_EQ(merged.size(), all.size());
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(csv_row(merged[i]), csv_row(all[i])) << i;
}

TEST(MergeRecords, IdenticalDuplicatesCollapse) {
  const std::vector<Record> all = baseline_rows();
  const std::vector<Record> merged = merge_records({{"a.csv", all}, {"b.csv", {all[1], all[3]}}});
  ASSERT_EQ(merged.size(), all.size());
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(csv_row(merged[i]), csv_row(all[i])) << i;
}

TEST(MergeRecords, ConflictNamesTheCaseBothFilesAndTheColumn) {
  const std::vector<Record> all = baseline_rows();
  Record other = all[1];
  set_gbps(other, 3123.5);
  try {
    merge_records({{"shard0.csv", all}, {"shard1.csv", {other}}});
    FAIL() << "no MergeError";
  } catch (const MergeError& e) {
    const std::string m = e.what();
    EXPECT_TRUE(contains(m, case_label(other))) << m;
    EXPECT_TRUE(contains(m, "shard0.csv")) << m;
    EXPECT_TRUE(contains(m, "shard1.csv")) << m;
    EXPECT_TRUE(contains(m, "gbps '3000' vs '3123.5'")) << m;
  }
  // Within one input, too; and a column outside the key (here gpu) counts.
  Record elsewhere = all[0];
  elsewhere.gpu = "NVIDIA H100";
  EXPECT_THROW(merge_records({{"one.csv", {all[0], elsewhere}}}), MergeError);
}

TEST(MergeRecords, UpdateReplacesInPlaceAndAppendsTheNew) {
  const std::vector<Record> all = baseline_rows();
  Record remeasured = all[2];
  set_gbps(remeasured, 4100);
  const Record added = row("staged", 8192, 3500, 0.5);
  std::size_t replaced = 99;
  const std::vector<Record> merged = merge_records({{"base.csv", all}, {"new.csv", {remeasured, all[3], added}}},
                                                   OnConflict::later_wins, &replaced);
  EXPECT_EQ(replaced, 1u);  // all[3] is the same row again: kept, not counted as replaced
  ASSERT_EQ(merged.size(), all.size() + 1);
  for (std::size_t i = 0; i < all.size(); ++i)
    EXPECT_EQ(csv_row(merged[i]), csv_row(i == 2 ? remeasured : all[i])) << i;
  EXPECT_EQ(csv_row(merged.back()), csv_row(added));
  // A third input replaces the second's row in turn; the default still refuses it.
  Record again = remeasured;
  set_gbps(again, 4200);
  const std::vector<Record> twice =
      merge_records({{"a.csv", all}, {"b.csv", {remeasured}}, {"c.csv", {again}}}, OnConflict::later_wins, &replaced);
  EXPECT_EQ(replaced, 2u);
  ASSERT_EQ(twice.size(), all.size());
  EXPECT_EQ(csv_row(twice[2]), csv_row(again));
  EXPECT_THROW(merge_records({{"base.csv", all}, {"new.csv", {remeasured}}}), MergeError);
}

TEST(MergeRecords, UpdateStillRefusesTwoRowsOfOneCaseInOneInput) {
  const std::vector<Record> all = baseline_rows();
  Record a = all[1], b = all[1];
  set_gbps(a, 3100);
  set_gbps(b, 3200);
  // In the first input, and in a later one after its first row replaced the earlier input's.
  EXPECT_THROW(merge_records({{"one.csv", {all[1], a}}}, OnConflict::later_wins), MergeError);
  try {
    merge_records({{"base.csv", all}, {"new.csv", {a, b}}}, OnConflict::later_wins);
    FAIL() << "no MergeError";
  } catch (const MergeError& e) {
    const std::string m = e.what();
    EXPECT_TRUE(contains(m, "new.csv:2 and new.csv:3")) << m;
    EXPECT_FALSE(contains(m, "base.csv")) << m;
  }
}

TEST_F(MergeTest, CliUpdateRefreshesABaselineInPlace) {
  require_binary();
  const std::vector<Record> all = baseline_rows();
  Record remeasured = all[0];
  set_gbps(remeasured, 4300);
  const Record added = row("staged", 8192, 3500, 0.5);
  const std::string base = write_csv("base.csv", all);
  const std::string fresh = write_csv("new.csv", {added, remeasured});
  // Without --update the same inputs are a conflict, and the baseline is left as it was.
  RunResult r = run_bench({"merge", base, fresh, "-o", base});
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_EQ(read_csv(base).size(), all.size());
  r = run_bench({"merge", "--update", base, fresh, "-o", base});  // the output is an input
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "merged 5 rows from 2 file(s)")) << r.output;
  EXPECT_TRUE(contains(r.output, "1 replaced by a later file's row, 0 identical duplicate(s) dropped")) << r.output;
  const std::vector<Record> merged = read_csv(base);
  ASSERT_EQ(merged.size(), all.size() + 1);
  EXPECT_EQ(csv_row(merged[0]), csv_row(remeasured));
  for (std::size_t i = 1; i < all.size(); ++i) EXPECT_EQ(csv_row(merged[i]), csv_row(all[i])) << i;
  EXPECT_EQ(csv_row(merged.back()), csv_row(added));
}

TEST_F(MergeTest, CliMergesAndReadsBack) {
  require_binary();
  const std::vector<Record> all = baseline_rows();
  const std::string a = write_csv("a.csv", {all[0], all[1]});
  const std::string b = write_csv("b.csv", {all[2], all[3], all[1]});  // all[1] repeated
  const std::string out = path("all.csv");
  const RunResult r = run_bench({"merge", a, b, "-o", out});
  EXPECT_EQ(r.status, 0) << r.output;
  const std::vector<Record> merged = read_csv(out);
  ASSERT_EQ(merged.size(), all.size());
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(csv_row(merged[i]), csv_row(all[i])) << i;
  EXPECT_FALSE(fs::exists(out + ".tmp." + std::to_string(::getpid())));
}

TEST_F(MergeTest, CliConflictExitsTwoNamingTheCase) {
  require_binary();
  const std::vector<Record> all = baseline_rows();
  Record other = all[2];
  set_gbps(other, 2000);
  const std::string a = write_csv("a.csv", all);
  const std::string b = write_csv("b.csv", {other});
  const std::string out = path("all.csv");
  const RunResult r = run_bench({"merge", a, b, "-o", out});
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, case_label(other))) << r.output;
  EXPECT_TRUE(contains(r.output, a)) << r.output;
  EXPECT_TRUE(contains(r.output, b)) << r.output;
  EXPECT_FALSE(fs::exists(out)) << "a failed merge left " << out;
}

// Both conflicting rows as FILE:LINE, blank lines counted.
TEST_F(MergeTest, CliConflictNamesFileAndLine) {
  require_binary();
  const std::vector<Record> all = baseline_rows();
  Record other = all[2];
  set_gbps(other, 2000);
  const std::string a = write_csv("a.csv", all);  // all[2] on line 4
  const std::string b = write_file(
      "b.csv", csv_header() + "\n\n" + csv_row(all[0]) + "\n\n" + csv_row(other) + "\n");  // line 5
  const RunResult r = run_bench({"merge", a, b, "-o", path("all.csv")});
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, a + ":4 and " + b + ":5 differ in ")) << r.output;
}

TEST_F(MergeTest, CliTruncatedInputExitsTwoNamingTheFile) {
  require_binary();
  const std::string a = write_csv("a.csv", baseline_rows());
  const std::string full = read_file(a);
  const std::string cut = write_file("cut.csv", full.substr(0, full.size() - 40));
  const RunResult r = run_bench({"merge", a, cut, "-o", path("all.csv")});
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, cut + ":5")) << r.output;
  EXPECT_FALSE(fs::exists(path("all.csv")));
}

TEST_F(MergeTest, CliNeedsOutputAndInputs) {
  require_binary();
  const std::string a = write_csv("a.csv", baseline_rows());
  EXPECT_EQ(run_bench({"merge", a}).status, 2);
  EXPECT_EQ(run_bench({"merge", "-o", path("all.csv")}).status, 2);
  EXPECT_EQ(run_bench({"merge", path("nope.csv"), "-o", path("all.csv")}).status, 2);
}

}  // namespace
}  // namespace rb

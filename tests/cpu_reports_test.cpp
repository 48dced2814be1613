// reports/: CSV round trip and reader errors, case keys, markdown layout, atomic writes and
// the terminal summary. CPU only.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "reports/atomic_file.h"
#include "reports/columns.h"
#include "reports/csv_reader.h"
#include "reports/csv_writer.h"
#include "reports/markdown.h"
#include "reports/record.h"
#include "reports/terminal.h"

namespace fs = std::filesystem;

namespace rb {
namespace {

// A fresh, empty directory per test, removed afterwards.
class ReportsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           (std::string("rb_reports_") + info->name() + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::string write_file(const std::string& name, const std::string& text) const {
    std::ofstream(path(name), std::ios::binary) << text;
    return path(name);
  }

  fs::path dir_;
};

std::string read_file(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Record timed_pass() {
  Record r;
  r.gpu = "NVIDIA H200";
  r.cc = "9.0";
  r.kernel = "auto";
  r.picked = "row-vector";
  r.provider = "builtin";
  r.op = "fwd";
  r.dtype = "bf16";
  r.wdtype = "fp32";
  r.M = 16384;
  r.H = 4096;
  r.stride = 4100;
  r.layout = "strided";
  r.eps = 1e-6;
  r.dist = "normal";
  r.seed = std::numeric_limits<std::uint64_t>::max();  // needs all 64 unsigned bits
  r.status = Status::pass;
  r.rows_checked = 16384;
  r.max_abs_err = 0.1 + 0.2;  // 0.30000000000000004: only a shortest round-trip keeps it
  r.max_rel_err = 3.0517578125e-05;
  r.max_ulp = 1;
  r.mismatches = 0;
  r.worst_row = 7;
  r.worst_col = 4095;
  r.atol = 1e-2;
  r.rtol = 1e-2;
  r.median_us = 65.4321;
  r.min_us = 64.999;
  r.max_us = 70.125;
  r.noise_pct = 0.31;
  r.samples = 12;
  r.graph_us = 63.75;
  r.bytes = 268451840;
  r.copy_gbps = 4275;
  // Derived as the runner derives them: the reader checks both against their inputs.
  r.gbps = static_cast<double>(r.bytes) / (*r.median_us * 1e3);
  r.pct_of_copy = 100.0 * *r.gbps / *r.copy_gbps;
  return r;
}

Record skipped() {
  Record r;
  r.gpu = "NVIDIA H200";
  r.cc = "9.0";
  r.kernel = "warp-row";
  r.picked = "warp-row";
  r.provider = "cudnn";
  r.provider_version = "9.10.2";
  r.op = "add";
  r.dtype = "fp16";
  r.wdtype = "fp16";
  r.rdtype = "fp32";
  r.M = 1;
  r.H = 65536;
  r.stride = 65536;
  r.layout = "contiguous";
  r.eps = 1e-5;
  r.dist = "large";
  r.seed = 0;
  r.status = Status::skip;
  r.reason = "H > 2048, needs \"chunked\", or a cluster";
  r.rows_checked = 0;
  r.worst_row = -1;
  r.worst_col = -1;
  r.bytes = 0;
  return r;  // every timing optional unset
}

Record failed() {
  Record r = timed_pass();
  r.kernel = "plugin:naive";
  r.picked = "plugin:naive";
  r.provider = "plugin";
  r.provider_version = "0.3, \"beta\"";  // quoted on the way out
  r.H = 4097;
  r.stride = 4097;
  r.layout = "misaligned";
  r.dist = "zero-row";
  r.status = Status::fail;
  r.reason = "NaN where reference is finite\nfirst at (3, 4096)";  // line break: flattened
  r.max_abs_err = std::numeric_limits<double>::infinity();
  r.max_rel_err = std::numeric_limits<double>::quiet_NaN();
  r.max_ulp = std::numeric_limits<double>::infinity();
  r.mismatches = 4097;
  r.worst_row = 3;
  r.worst_col = 4096;
  r.median_us.reset();
  r.min_us.reset();
  r.max_us.reset();
  r.noise_pct.reset();
  r.samples.reset();
  r.graph_us.reset();
  r.gbps.reset();
  r.copy_gbps.reset();
  r.pct_of_copy.reset();
  return r;
}

// Equal, or both NaN.
void expect_same_double(double a, double b, const char* what) {
  if (std::isnan(a)) {
    EXPECT_TRUE(std::isnan(b)) << what;
  } else {
    EXPECT_EQ(a, b) << what;
  }
}

void expect_same(const Record& a, const Record& b) {
  EXPECT_EQ(a.schema, b.schema);
  EXPECT_EQ(a.convention, b.convention);
  EXPECT_EQ(a.ydtype, b.ydtype);
  EXPECT_EQ(a.y_scale, b.y_scale);
  EXPECT_EQ(a.gpu, b.gpu);
  EXPECT_EQ(a.cc, b.cc);
  EXPECT_EQ(a.kernel, b.kernel);
  EXPECT_EQ(a.picked, b.picked);
  EXPECT_EQ(a.provider, b.provider);
  EXPECT_EQ(a.provider_version, b.provider_version);
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.dtype, b.dtype);
  EXPECT_EQ(a.wdtype, b.wdtype);
  EXPECT_EQ(a.rdtype, b.rdtype);
  EXPECT_EQ(a.M, b.M);
  EXPECT_EQ(a.H, b.H);
  EXPECT_EQ(a.stride, b.stride);
  EXPECT_EQ(a.layout, b.layout);
  EXPECT_EQ(a.eps, b.eps);
  EXPECT_EQ(a.dist, b.dist);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.rows_checked, b.rows_checked);
  expect_same_double(a.max_abs_err, b.max_abs_err, "max_abs_err");
  expect_same_double(a.max_rel_err, b.max_rel_err, "max_rel_err");
  expect_same_double(a.max_ulp, b.max_ulp, "max_ulp");
  EXPECT_EQ(a.mismatches, b.mismatches);
  EXPECT_EQ(a.worst_row, b.worst_row);
  EXPECT_EQ(a.worst_col, b.worst_col);
  EXPECT_EQ(a.atol, b.atol);
  EXPECT_EQ(a.rtol, b.rtol);
  EXPECT_EQ(a.median_us, b.median_us);
  EXPECT_EQ(a.min_us, b.min_us);
  EXPECT_EQ(a.max_us, b.max_us);
  EXPECT_EQ(a.noise_pct, b.noise_pct);
  EXPECT_EQ(a.samples, b.samples);
  EXPECT_EQ(a.graph_us, b.graph_us);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.gbps, b.gbps);
  EXPECT_EQ(a.copy_gbps, b.copy_gbps);
  EXPECT_EQ(a.pct_of_copy, b.pct_of_copy);
}

const char* kHeader =
    "schema,gpu,cc,kernel,picked,provider,provider_version,op,dtype,wdtype,rdtype,M,H,stride,"
    "layout,eps,dist,seed,convention,ydtype,y_scale,status,reason,rows_checked,max_abs_err,max_rel_err,"
    "max_ulp,mismatches,worst_row,worst_col,atol,rtol,median_us,min_us,max_us,noise_pct,samples,graph_us,"
    "bytes,gbps,copy_gbps,pct_of_copy";

// Schema 2: no convention, ydtype or y_scale.
const char* kHeaderV2 =
    "schema,gpu,cc,kernel,picked,provider,provider_version,op,dtype,wdtype,rdtype,M,H,stride,"
    "layout,eps,dist,seed,status,reason,rows_checked,max_abs_err,max_rel_err,max_ulp,mismatches,"
    "worst_row,worst_col,atol,rtol,median_us,min_us,max_us,noise_pct,samples,graph_us,bytes,gbps,"
    "copy_gbps,pct_of_copy";

// Schema 1: no provider columns.
const char* kHeaderV1 =
    "schema,gpu,cc,kernel,picked,op,dtype,wdtype,rdtype,M,H,stride,layout,eps,dist,seed,"
    "status,reason,rows_checked,max_abs_err,max_rel_err,max_ulp,mismatches,worst_row,worst_col,"
    "atol,rtol,median_us,min_us,max_us,noise_pct,samples,graph_us,bytes,gbps,copy_gbps,"
    "pct_of_copy";

// A valid file with one data row, for the error tests to damage.
std::string valid_csv() { return std::string(kHeader) + "\n" + csv_row(timed_pass()) + "\n"; }

std::string replace_once(std::string s, const std::string& from, const std::string& to) {
  const std::size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

// The CsvError thrown by reading path; fails the test when nothing or something else is thrown.
CsvError read_error(const std::string& path) {
  try {
    read_csv(path);
  } catch (const CsvError& e) {
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected CsvError, got: " << e.what();
    return CsvError(path, -1, "", "wrong exception");
  }
  ADD_FAILURE() << "expected CsvError reading " << path;
  return CsvError(path, -1, "", "nothing thrown");
}

// ---------------------------------------------------------------- record / CSV

TEST(Record, StatusNamesRoundTrip) {
  for (Status s : {Status::pass, Status::fail, Status::skip, Status::error}) {
    ASSERT_TRUE(parse_status(status_name(s)).has_value());
    EXPECT_EQ(*parse_status(status_name(s)), s);
  }
  EXPECT_STREQ(status_name(Status::error), "error");
  EXPECT_FALSE(parse_status("PASS").has_value());
  EXPECT_FALSE(parse_status("").has_value());
}

TEST(Record, ColumnsAreTheSchemaInOrder) {
  std::string joined;
  for (const std::string& c : csv_columns()) joined += (joined.empty() ? "" : ",") + c;
  EXPECT_EQ(joined, kHeader);
  EXPECT_EQ(csv_columns().size(), 42u);
  EXPECT_EQ(csv_header(), kHeader);
}

TEST(Record, CaseKeyIgnoresPickedAndProviderAndIncludesSeed) {
  Record a = timed_pass();
  EXPECT_EQ(case_key(a),
            "auto|fwd|bf16|fp32||16384|4096|4100|strided|1e-06|normal|18446744073709551615|fp32||");
  Record b = a;
  b.picked = "warp-row";
  b.provider = "cudnn";
  b.provider_version = "9.10.2";
  b.status = Status::fail;
  b.gbps = 1.0;
  EXPECT_EQ(case_key(a), case_key(b));
  b.seed = 1;
  EXPECT_NE(case_key(a), case_key(b));
  b = a;
  b.eps = 1e-5;
  EXPECT_NE(case_key(a), case_key(b));
  b = a;
  b.rdtype = "fp32";
  EXPECT_NE(case_key(a), case_key(b));
}

TEST(Record, RowFieldsFollowTheHeader) {
  const std::string row = csv_row(skipped());
  EXPECT_EQ(row,
            "rmsnorm-bench/3,NVIDIA H200,9.0,warp-row,warp-row,cudnn,9.10.2,add,fp16,fp16,fp32,1,65536,"
            "65536,contiguous,1e-05,large,0,fp32,,,skip,\"H > 2048, needs \"\"chunked\"\", or a "
            "cluster\",0,0,0,0,0,-1,-1,0,0,,,,,,,0,,,");
}

TEST_F(ReportsTest, CsvRoundTripsEveryField) {
  const std::vector<Record> written = {timed_pass(), skipped(), failed()};
  const std::string file = path("run.csv");
  {
    CsvWriter w(file);
    for (const Record& r : written) w.write(r);
  }
  const std::string text = read_file(file);
  EXPECT_EQ(text.substr(0, text.find('\n')), kHeader);

  const std::vector<Record> back = read_csv(file);
  ASSERT_EQ(back.size(), written.size());
  for (std::size_t i = 0; i < written.size(); ++i) {
    SCOPED_TRACE(i);
    Record expected = written[i];
    if (i == 2) expected.reason = "NaN where reference is finite first at (3, 4096)";
    expect_same(back[i], expected);
    EXPECT_EQ(case_key(back[i]), case_key(written[i]));
  }
  EXPECT_FALSE(back[1].median_us.has_value());
  EXPECT_FALSE(back[1].samples.has_value());
  EXPECT_EQ(back[1].reason, "H > 2048, needs \"chunked\", or a cluster");
  EXPECT_EQ(back[0].eps, 1e-6);
  EXPECT_EQ(back[0].max_abs_err, 0.1 + 0.2);
  EXPECT_TRUE(std::isinf(back[2].max_abs_err));
  EXPECT_TRUE(std::isnan(back[2].max_rel_err));
}

TEST_F(ReportsTest, CsvRowsAreOnDiskBeforeTheWriterCloses) {
  const std::string file = path("stream.csv");
  CsvWriter w(file);
  w.write(timed_pass());
  const std::vector<Record> so_far = read_csv(file);
  ASSERT_EQ(so_far.size(), 1u);
  EXPECT_EQ(so_far[0].kernel, "auto");
  w.write(skipped());
  EXPECT_EQ(read_csv(file).size(), 2u);
}

TEST_F(ReportsTest, CsvWriterNamesAnUncreatablePath) {
  const std::string file = path("no/such/dir/run.csv");
  try {
    CsvWriter w(file);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
  }
}

TEST_F(ReportsTest, ReaderSkipsBlankLinesAndAcceptsCrLf) {
  std::string text = valid_csv() + "\n" + csv_row(skipped()) + "\n";
  std::string crlf;
  for (char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  const std::vector<Record> back = read_csv(write_file("crlf.csv", crlf));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].reason, skipped().reason);
}

TEST_F(ReportsTest, ReaderAcceptsInMemoryText) {
  const std::vector<Record> back = read_csv_text("mem.csv", valid_csv());
  ASSERT_EQ(back.size(), 1u);
  expect_same(back[0], timed_pass());
}

// ---------------------------------------------------------------- column table

std::string joined_names(const std::vector<const Column*>& columns) {
  std::string s;
  for (const Column* c : columns) s += (s.empty() ? "" : ",") + std::string(c->name);
  return s;
}

const Column& column(const std::string& name) {
  for (const Column& c : kRecordColumns)
    if (name == c.name) return c;
  throw std::runtime_error("no column " + name);
}

TEST(ColumnTable, SchemasAndCounts) {
  EXPECT_EQ(column_count(1), 37u);
  EXPECT_EQ(column_count(2), 39u);
  EXPECT_EQ(column_count(3), 42u);
  EXPECT_EQ(column_count(0), 0u);
  EXPECT_EQ(column_count(kSchemaVersion + 1), 0u);
  EXPECT_TRUE(schema_columns(kSchemaVersion + 1).empty());
  EXPECT_EQ(joined_names(schema_columns(1)), kHeaderV1);
  EXPECT_EQ(joined_names(schema_columns(2)), kHeaderV2);
  EXPECT_EQ(joined_names(schema_columns(3)), kHeader);
  EXPECT_EQ(std::string(kSchema), schema_name(kSchemaVersion));
  std::set<std::string> names;
  for (const Column& c : kRecordColumns) EXPECT_TRUE(names.insert(c.name).second) << c.name;
}

TEST(ColumnTable, KeyIsKernelToYScaleWithoutPickedOrProvider) {
  std::vector<std::string> key;
  for (const Column& c : kRecordColumns)
    if (c.in_key) key.push_back(c.name);
  EXPECT_EQ(key, (std::vector<std::string>{"kernel", "op", "dtype", "wdtype", "rdtype", "M", "H",
                                           "stride", "layout", "eps", "dist", "seed", "convention", "ydtype",
                                           "y_scale"}));
}

TEST(ColumnTable, KindsFollowTheMembers) {
  EXPECT_EQ(column("provider").kind(), ColumnKind::text);
  EXPECT_EQ(column("M").kind(), ColumnKind::int64);
  EXPECT_EQ(column("seed").kind(), ColumnKind::uint64);
  EXPECT_EQ(column("eps").kind(), ColumnKind::real);
  EXPECT_EQ(column("median_us").kind(), ColumnKind::optional_real);
  EXPECT_EQ(column("samples").kind(), ColumnKind::optional_int64);
  EXPECT_EQ(column("status").kind(), ColumnKind::status);
}

// A value of c's kind that differs from what r holds.
std::string other_value(const Column& c, const Record& r) {
  switch (c.kind()) {
    case ColumnKind::text:
      return column_text(c, r) + "x";
    case ColumnKind::int64:
    case ColumnKind::optional_int64:
      return column_text(c, r) == "12345" ? "12346" : "12345";
    case ColumnKind::uint64:
      return column_text(c, r) == "777" ? "778" : "777";
    case ColumnKind::real:
    case ColumnKind::optional_real:
      return column_text(c, r) == "0.125" ? "0.25" : "0.125";
    case ColumnKind::status:
      return r.status == Status::error ? "pass" : "error";
  }
  return "";
}

TEST(ColumnTable, EveryColumnRoundTripsThroughItsText) {
  for (const Record& r : {timed_pass(), skipped(), failed()}) {
    for (const Column& c : kRecordColumns) {
      SCOPED_TRACE(c.name);
      Record back;
      set_column(c, back, column_text(c, r));
      EXPECT_EQ(column_text(c, back), column_text(c, r));
    }
  }
}

// The table drives the writer and the key: changing any one field changes the row, and
// changes the key exactly when the column is a key column; distinct keys get distinct labels.
TEST(ColumnTable, EveryColumnReachesTheRowAndOnlyKeyColumnsTheKey) {
  const Record a = timed_pass();
  for (const Column& c : kRecordColumns) {
    SCOPED_TRACE(c.name);
    Record b = a;
    set_column(c, b, other_value(c, a));
    EXPECT_NE(column_text(c, b), column_text(c, a));
    EXPECT_NE(csv_row(b), csv_row(a));
    EXPECT_EQ(case_key(b) != case_key(a), c.in_key);
    if (c.in_key) {
      EXPECT_NE(case_label(b), case_label(a));
    }
  }
}

TEST(ColumnTable, SetColumnIsStrict) {
  Record r;
  const auto message = [&](const char* name, const std::string& text) {
    try {
      set_column(column(name), r, text);
    } catch (const ColumnValueError& e) {
      return std::string(e.what());
    }
    return std::string("nothing thrown");
  };
  EXPECT_EQ(message("M", "abc"), "'abc' is not an integer");
  EXPECT_EQ(message("M", ""), "empty, expected an integer");
  EXPECT_EQ(message("seed", "-1"), "'-1' is not an integer");
  EXPECT_EQ(message("eps", "1e-5x"), "'1e-5x' is not a number");
  EXPECT_EQ(message("status", "ok"), "unknown status 'ok' (expected pass, fail, skip or error)");
  set_column(column("median_us"), r, "");
  EXPECT_FALSE(r.median_us.has_value());
}

TEST(Record, CaseLabelReadsLikeTheRunnersLabel) {
  Record r = timed_pass();
  r.wdtype = "bf16";
  r.stride = r.H;
  r.layout = "contiguous";
  r.eps = 1e-5;
  r.seed = 1;
  EXPECT_EQ(case_label(r), "fwd/auto/bf16/bf16/M=16384/H=4096/contiguous/normal/eps=1e-05/seed=1");
  r.op = "add-fwd";
  r.rdtype = "fp32";
  r.stride = 4160;
  r.layout = "strided";
  EXPECT_EQ(case_label(r),
            "add-fwd/auto/bf16/bf16/r=fp32/M=16384/H=4096/strided/normal/eps=1e-05/stride=4160/"
            "seed=1");
}

// ---------------------------------------------------------------- schema 1 files

// skipped() as a schema 1 writer wrote it.
const char* kSkippedV1Row =
    "rmsnorm-bench/1,NVIDIA H200,9.0,warp-row,warp-row,add,fp16,fp16,fp32,1,65536,"
    "65536,contiguous,1e-05,large,0,skip,\"H > 2048, needs \"\"chunked\"\", or a "
    "cluster\",0,0,0,0,0,-1,-1,0,0,,,,,,,0,,,";

TEST_F(ReportsTest, ReadsSchema1WithEmptyProvider) {
  const std::string file =
      write_file("v1.csv", std::string(kHeaderV1) + "\n" + kSkippedV1Row + "\n");
  const std::vector<Record> back = read_csv(file);
  ASSERT_EQ(back.size(), 1u);
  Record expected = skipped();
  expected.provider.clear();
  expected.provider_version.clear();
  expect_same(back[0], expected);  // schema upgraded to kSchema
  EXPECT_EQ(back[0].schema, kSchema);
  EXPECT_EQ(case_key(back[0]), case_key(skipped()));
  // Written back out, it is a schema 3 row.
  EXPECT_EQ(csv_row(back[0]).rfind("rmsnorm-bench/3,NVIDIA H200,9.0,warp-row,warp-row,,,add,", 0), 0u)
      << csv_row(back[0]);
}

// A schema 2 row reads as an fp32-convention row with y in x's dtype, with the same key as
// its schema 3 rewrite.
TEST_F(ReportsTest, ReadsSchema2AsTheFp32Convention) {
  std::string row = csv_row(skipped());
  row = replace_once(row, "rmsnorm-bench/3,", "rmsnorm-bench/2,");
  row = replace_once(row, ",0,fp32,,,skip,", ",0,skip,");
  const std::vector<Record> back = read_csv(write_file("v2.csv", std::string(kHeaderV2) + "\n" + row + "\n"));
  ASSERT_EQ(back.size(), 1u);
  expect_same(back[0], skipped());
  EXPECT_EQ(back[0].convention, "fp32");
  EXPECT_TRUE(back[0].ydtype.empty());
  EXPECT_FALSE(back[0].y_scale.has_value());
  EXPECT_EQ(case_key(back[0]), case_key(skipped()));
  Record gemma = skipped();
  gemma.convention = "gemma";
  EXPECT_NE(case_key(gemma), case_key(skipped()));
  Record fp8 = skipped();
  fp8.ydtype = "e4m3";
  fp8.y_scale = 2.0;
  EXPECT_NE(case_key(fp8), case_key(skipped()));
}

TEST_F(ReportsTest, Schema1RowsMustMatchTheirHeader) {
  // A schema 2 row under a schema 1 header: two columns too many.
  const CsvError wide = read_error(
      write_file("wide.csv", std::string(kHeaderV1) + "\n" + csv_row(timed_pass()) + "\n"));
  EXPECT_EQ(wide.line(), 2) << wide.what();
  EXPECT_NE(std::string(wide.what()).find("too many columns (expected 37)"), std::string::npos)
      << wide.what();
  // A row saying schema 1 under a schema 2 header.
  Record old = timed_pass();
  old.schema = "rmsnorm-bench/1";
  const CsvError mixed =
      read_error(write_file("mixed.csv", std::string(kHeader) + "\n" + csv_row(old) + "\n"));
  EXPECT_EQ(mixed.line(), 2) << mixed.what();
  EXPECT_EQ(mixed.column(), "schema") << mixed.what();
  // A schema 1 header with a schema 2 schema value in the row.
  std::string row = kSkippedV1Row;
  row.replace(0, 15, "rmsnorm-bench/2");
  const CsvError newer =
      read_error(write_file("newer.csv", std::string(kHeaderV1) + "\n" + row + "\n"));
  EXPECT_EQ(newer.column(), "schema") << newer.what();
  EXPECT_NE(std::string(newer.what()).find("expected 'rmsnorm-bench/1'"), std::string::npos)
      << newer.what();
}

TEST_F(ReportsTest, Schema1HeaderMismatchNamesTheColumn) {
  const std::string header = replace_once(kHeaderV1, "min_us,max_us", "max_us,min_us");
  const std::string file = write_file("v1bad.csv", header + "\n" + kSkippedV1Row + "\n");
  const CsvError e = read_error(file);
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(e.column(), "min_us") << e.what();
  EXPECT_NE(std::string(e.what()).find("rmsnorm-bench/1"), std::string::npos) << e.what();
}

TEST_F(ReportsTest, Schema2HeaderMismatchNamesTheColumn) {
  const std::string file =
      write_file("v2bad.csv", replace_once(valid_csv(), ",provider,", ",vendor,"));
  const CsvError e = read_error(file);
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(e.column(), "provider") << e.what();
  EXPECT_NE(std::string(e.what()).find(file + ":1: column provider: header has 'vendor'"),
            std::string::npos)
      << e.what();
}

TEST_F(ReportsTest, LeadingBlankLinesBeforeASchema1Header) {
  const std::vector<Record> back =
      read_csv(write_file("blank.csv", std::string("\n  \n") + kHeaderV1 + "\n" + kSkippedV1Row + "\n"));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].kernel, "warp-row");
}

TEST(Baseline, CommittedH200BaselineLoads) {
  const std::vector<Record> rows = read_csv(std::string(RB_SOURCE_DIR) + "/reports/baselines/h200.csv");
  ASSERT_GT(rows.size(), 1000u);
  std::set<std::string> keys;
  for (const Record& r : rows) {
    EXPECT_EQ(r.schema, kSchema);
    EXPECT_EQ(r.provider, "builtin") << case_label(r);  // the built-in kernels' sweep
    EXPECT_TRUE(r.provider_version.empty()) << case_label(r);
    EXPECT_EQ(r.gpu, "NVIDIA H200");
    keys.insert(case_key(r));
  }
  EXPECT_EQ(keys.size(), rows.size());
}

// ---------------------------------------------------------------- reader errors

TEST_F(ReportsTest, MissingFileIsACsvErrorNamingIt) {
  const std::string file = path("absent.csv");
  const CsvError e = read_error(file);
  EXPECT_EQ(e.file(), file);
  EXPECT_EQ(e.line(), 0);
  EXPECT_NE(std::string(e.what()).find(file + ": cannot open"), std::string::npos) << e.what();
}

TEST_F(ReportsTest, WrongSchemaNamesLineAndColumn) {
  const std::string file = write_file(
      "schema.csv", replace_once(valid_csv(), "\nrmsnorm-bench/3,", "\nrmsnorm-bench/4,"));
  const CsvError e = read_error(file);
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.column(), "schema");
  EXPECT_NE(std::string(e.what()).find(file + ":2: column schema: "), std::string::npos)
      << e.what();
  EXPECT_NE(std::string(e.what()).find("rmsnorm-bench/4"), std::string::npos) << e.what();
}

TEST_F(ReportsTest, WrongHeaderNamesTheColumn) {
  // Swapped columns would map by name in fccp; the header order is the schema, so refuse.
  const std::string file =
      write_file("header.csv", replace_once(valid_csv(), "min_us,max_us", "max_us,min_us"));
  const CsvError e = read_error(file);
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(e.column(), "min_us");
  EXPECT_NE(std::string(e.what()).find(file + ":1: column min_us: "), std::string::npos)
      << e.what();

  const CsvError old = read_error(write_file("old.csv", "schema,gpu,cc\nx,y,z\n"));
  EXPECT_EQ(old.line(), 1);
}

TEST_F(ReportsTest, TruncatedLineNamesTheLine) {
  std::string text = valid_csv() + csv_row(skipped()) + "\n";
  const std::string last = csv_row(failed());
  text += last.substr(0, last.size() / 2) + "\n";  // a write cut short
  const std::string file = write_file("truncated.csv", text);
  const CsvError e = read_error(file);
  EXPECT_EQ(e.line(), 4);
  EXPECT_NE(std::string(e.what()).find(file + ":4: "), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("too few columns"), std::string::npos) << e.what();
}

TEST_F(ReportsTest, GarbledNumberNamesLineAndColumn) {
  const std::string file =
      write_file("garbled.csv", replace_once(valid_csv(), ",16384,4096,", ",abc,4096,"));
  const CsvError e = read_error(file);
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.column(), "M");
  EXPECT_NE(std::string(e.what()).find(file + ":2: column M: 'abc'"), std::string::npos)
      << e.what();
}

TEST_F(ReportsTest, OtherMalformedRowsAreCsvErrors) {
  const std::string pct = "," + format_double(*timed_pass().pct_of_copy);
  struct Case {
    std::string name, from, to, column;
  };
  const std::vector<Case> cases = {
      {"trailing", ",16384,4096,", ",16384x,4096,", "M"},
      {"float_in_int", ",16384,4096,", ",16384.5,4096,", "M"},
      {"negative_seed", ",18446744073709551615,", ",-1,", "seed"},
      {"seed_overflow", ",18446744073709551615,", ",18446744073709551616,", "seed"},
      {"bad_double", ",1e-06,", ",1e-06e,", "eps"},
      {"empty_required", ",1e-06,", ",,", "eps"},
      {"bad_optional", ",65.4321,", ",fast,", "median_us"},
      {"unknown_status", ",pass,", ",passed,", "status"},
      {"extra_column", pct + "\n", pct + ",1\n", ""},
      {"unclosed_quote", ",NVIDIA H200,", ",\"NVIDIA H200,", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string file = write_file(c.name + ".csv", replace_once(valid_csv(), c.from, c.to));
    const CsvError e = read_error(file);
    EXPECT_EQ(e.line(), 2) << e.what();
    EXPECT_EQ(e.column(), c.column) << e.what();
    EXPECT_NE(std::string(e.what()).find(file + ":2: "), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------- impossible values

// The CsvError of reading a one-row file holding r; fails the test when r is accepted.
CsvError row_error(const Record& r) {
  try {
    read_csv_text("bad.csv", std::string(kHeader) + "\n" + csv_row(r) + "\n");
  } catch (const CsvError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted: " << csv_row(r);
  return CsvError("bad.csv", -1, "", "nothing thrown");
}

struct ImpossibleRow {
  std::string name;
  std::function<void(Record&)> damage;  // applied to timed_pass()
  std::string column;
  std::string message;  // a part of the message: the value and the accepted range
};

// Each damaged row is refused at bad.csv:2, naming its column and the message's part.
void expect_each_refused(const std::vector<ImpossibleRow>& cases) {
  for (const ImpossibleRow& c : cases) {
    SCOPED_TRACE(c.name);
    Record r = timed_pass();
    c.damage(r);
    const CsvError e = row_error(r);
    EXPECT_EQ(e.line(), 2) << e.what();
    EXPECT_EQ(e.column(), c.column) << e.what();
    EXPECT_NE(std::string(e.what()).find("bad.csv:2: column " + c.column + ": "), std::string::npos) << e.what();
    EXPECT_NE(e.message().find(c.message), std::string::npos) << e.what();
  }
}

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// Every rule of the column table refuses at least one value here; a rule that stops refusing
// fails its case.
TEST(ReaderDomain, ImpossibleValuesNameColumnValueAndRange) {
  const std::vector<ImpossibleRow> cases = {
      // device
      {"cc_text", [](Record& r) { r.cc = "sm90"; }, "cc",
       "'sm90' is out of range (accepted: empty or major.minor, e.g. 9.0)"},
      {"cc_no_minor", [](Record& r) { r.cc = "9."; }, "cc", "'9.' is out of range"},
      {"cc_two_dots", [](Record& r) { r.cc = "9.0.1"; }, "cc", "'9.0.1' is out of range"},
      // shape
      {"M_zero", [](Record& r) { r.M = 0; }, "M", "0 is out of range (accepted: >= 1)"},
      {"H_negative", [](Record& r) { r.H = -4096; }, "H", "-4096 is out of range (accepted: >= 1)"},
      {"stride_below_H", [](Record& r) { r.stride = 4095; }, "stride", "4095 is out of range (accepted: >= H = 4096)"},
      {"eps_zero", [](Record& r) { r.eps = 0; }, "eps", "0 is out of range (accepted: finite and > 0)"},
      {"eps_nan", [](Record& r) { r.eps = kNaN; }, "eps", "nan is out of range"},
      {"eps_inf", [](Record& r) { r.eps = kInf; }, "eps", "inf is out of range"},
      // schema 3: convention and the fp8 y
      {"convention_unknown", [](Record& r) { r.convention = "gemma2"; }, "convention",
       "'gemma2' is out of range (accepted: fp32, llama, gemma, zero-centered)"},
      {"ydtype_not_fp8", [](Record& r) { r.ydtype = "bf16"; }, "ydtype",
       "'bf16' is out of range (accepted: empty (x's dtype) or an fp8 dtype: e4m3, e5m2)"},
      {"y_scale_without_fp8", [](Record& r) { r.y_scale = 2.0; }, "y_scale", "set while ydtype is empty"},
      {"fp8_without_scale", [](Record& r) { r.ydtype = "e4m3"; }, "y_scale", "empty while ydtype is fp8"},
      {"y_scale_zero",
       [](Record& r) {
         r.ydtype = "e5m2";
         r.y_scale = 0.0;
       },
       "y_scale", "0 is out of range (accepted: finite and > 0)"},
      // validation metrics
      {"rows_checked_negative", [](Record& r) { r.rows_checked = -1; }, "rows_checked", "-1 is out of range"},
      {"rows_checked_above_M", [](Record& r) { r.rows_checked = 16385; }, "rows_checked",
       "16385 is out of range (accepted: <= M = 16384)"},
      {"abs_err_negative", [](Record& r) { r.max_abs_err = -0.5; }, "max_abs_err", "-0.5 is out of range"},
      {"abs_err_inf_in_pass", [](Record& r) { r.max_abs_err = kInf; }, "max_abs_err",
       "inf is out of range (accepted: finite and >= 0 where status is pass"},
      {"rel_err_nan_in_pass", [](Record& r) { r.max_rel_err = kNaN; }, "max_rel_err", "nan is out of range"},
      {"ulp_minus_inf_in_fail",
       [](Record& r) {
         r.status = Status::fail;
         r.max_ulp = -kInf;
       },
       "max_ulp", "-inf is out of range (accepted: finite and >= 0, inf or nan)"},
      {"mismatches_negative", [](Record& r) { r.mismatches = -3; }, "mismatches", "-3 is out of range"},
      {"mismatches_in_pass", [](Record& r) { r.mismatches = 12; }, "mismatches",
       "12 is out of range (accepted: 0 where status is pass)"},
      {"worst_row_below_none", [](Record& r) { r.worst_row = -2; }, "worst_row", "-2 is out of range (accepted: >= -1)"},
      {"worst_row_past_M", [](Record& r) { r.worst_row = 16384; }, "worst_row",
       "16384 is out of range (accepted: -1 or below M = 16384)"},
      {"worst_col_past_H", [](Record& r) { r.worst_col = 4096; }, "worst_col",
       "4096 is out of range (accepted: -1 or below H = 4096)"},
      {"atol_negative", [](Record& r) { r.atol = -1e-2; }, "atol", "-0.01 is out of range (accepted: finite and >= 0)"},
      {"rtol_nan", [](Record& r) { r.rtol = kNaN; }, "rtol", "nan is out of range"},
      // timing: each column's own domain
      {"median_negative", [](Record& r) { r.median_us = -65.4321; }, "median_us", "-65.4321 is out of range (accepted: finite and > 0)"},
      {"min_zero", [](Record& r) { r.min_us = 0.0; }, "min_us", "0 is out of range"},
      {"max_inf", [](Record& r) { r.max_us = kInf; }, "max_us", "inf is out of range"},
      {"noise_inf", [](Record& r) { r.noise_pct = kInf; }, "noise_pct", "inf is out of range (accepted: finite and >= 0)"},
      {"noise_negative", [](Record& r) { r.noise_pct = -0.31; }, "noise_pct", "-0.31 is out of range"},
      {"samples_zero", [](Record& r) { r.samples = 0; }, "samples", "0 is out of range (accepted: >= 1)"},
      {"graph_nan", [](Record& r) { r.graph_us = kNaN; }, "graph_us", "nan is out of range"},
      {"bytes_negative", [](Record& r) { r.bytes = -1; }, "bytes", "-1 is out of range (accepted: >= 0)"},
      {"gbps_nan", [](Record& r) { r.gbps = kNaN; }, "gbps", "nan is out of range (accepted: finite and > 0)"},
      {"gbps_inf", [](Record& r) { r.gbps = kInf; }, "gbps", "inf is out of range"},
      {"copy_gbps_zero", [](Record& r) { r.copy_gbps = 0.0; }, "copy_gbps", "0 is out of range"},
      {"pct_negative", [](Record& r) { r.pct_of_copy = -1471.0; }, "pct_of_copy", "-1471 is out of range"},
      // timing: across columns
      {"median_below_min", [](Record& r) { r.median_us = 60.0; }, "median_us",
       "60 is out of range (accepted: min_us = 64.999 <= median_us <= max_us = 70.125)"},
      {"median_above_max", [](Record& r) { r.max_us = 65.0; }, "median_us", "max_us = 65)"},
      {"timed_skip",
       [](Record& r) {
         r.status = Status::skip;
       },
       "median_us", "in a skip row (accepted: empty; only pass and fail rows are timed)"},
      {"median_without_rest", [](Record& r) { r.min_us.reset(); }, "min_us", "empty while median_us is set"},
      {"rest_without_median", [](Record& r) { r.median_us.reset(); }, "min_us", "set while median_us is empty"},
      {"samples_missing", [](Record& r) { r.samples.reset(); }, "samples", "empty while median_us is set"},
      {"copy_missing", [](Record& r) { r.copy_gbps.reset(); }, "copy_gbps", "empty while median_us is set"},
      {"graph_untimed",
       [](Record& r) {
         r.median_us.reset();
         r.min_us.reset();
         r.max_us.reset();
         r.noise_pct.reset();
         r.samples.reset();
         r.gbps.reset();
         r.copy_gbps.reset();
         r.pct_of_copy.reset();
       },
       "graph_us", "set while median_us is empty"},
      {"gbps_off", [](Record& r) { r.gbps = *r.gbps * (1 + 1e-6); }, "gbps", "does not match bytes / median_us / 1e3"},
      {"bytes_off", [](Record& r) { r.bytes /= 2; }, "gbps", "does not match bytes / median_us / 1e3 = 134225920"},
      {"pct_off", [](Record& r) { r.pct_of_copy = *r.pct_of_copy + 1; }, "pct_of_copy",
       "does not match 100 * gbps / copy_gbps"},
  };
  expect_each_refused(cases);
}

// The key's text columns take only what a run writes (core/names.h's names): a corrupted key
// would otherwise read as another case, and drop out of `compare --allow-missing` unseen.
TEST(ReaderDomain, KeyTextColumnsTakeOnlyNamesARunWrites) {
  const auto add = [](Record& r) {
    r.op = "add";
    r.rdtype = "fp32";
  };
  const std::vector<ImpossibleRow> cases = {
      {"kernel_empty", [](Record& r) { r.kernel.clear(); }, "kernel",
       "'' is out of range (accepted: a kernel's name"},
      {"op_unknown", [](Record& r) { r.op = "bogus"; }, "op",
       "'bogus' is out of range (accepted: fwd, bwd, add, add-bwd)"},
      {"dtype_fp64", [](Record& r) { r.dtype = "fp64"; }, "dtype",
       "'fp64' is out of range (accepted: fp32, fp16, bf16)"},
      {"dtype_fp8", [](Record& r) { r.dtype = "e4m3"; }, "dtype",
       "'e4m3' is out of range (accepted: fp32, fp16, bf16)"},
      {"dtype_empty", [](Record& r) { r.dtype.clear(); }, "dtype", "'' is out of range"},
      {"wdtype_same", [](Record& r) { r.wdtype = "same"; }, "wdtype",
       "'same' is out of range (accepted: fp32, fp16, bf16)"},
      {"rdtype_unknown",
       [&](Record& r) {
         add(r);
         r.rdtype = "zz";
       },
       "rdtype", "'zz' is out of range (accepted: fp32, fp16, bf16)"},
      {"rdtype_without_residual", [](Record& r) { r.rdtype = "fp32"; }, "rdtype",
       "'fp32' is out of range (accepted: empty where op is fwd; only add, add-bwd have a residual stream)"},
      {"rdtype_missing",
       [&](Record& r) {
         add(r);
         r.rdtype.clear();
       },
       "rdtype", "empty while op is add"},
      {"layout_unknown", [](Record& r) { r.layout = "weird"; }, "layout",
       "'weird' is out of range (accepted: contiguous, strided, misaligned, skewed)"},
      {"dist_unknown", [](Record& r) { r.dist = "xx"; }, "dist",
       "'xx' is out of range (accepted: normal, large, tiny, offset, outlier, zero-row)"},
  };
  expect_each_refused(cases);
}

// provider takes the registry's and the peers' providers only (or nothing: a schema 1 row),
// and agrees with the kernel's prefix: before, any text read, and a row whose provider was
// mistyped lost its vendor label in the report unseen.
TEST(ReaderDomain, ProviderIsOneARunWrites) {
  const std::vector<ImpossibleRow> cases = {
      {"provider_unknown", [](Record& r) { r.provider = "nvidia"; }, "provider",
       "'nvidia' is out of range (accepted: empty or builtin, cudnn, cublas, plugin, peer)"},
      {"provider_case", [](Record& r) { r.provider = "cuDNN"; }, "provider", "'cuDNN' is out of range"},
      {"plugin_kernel_builtin",
       [](Record& r) {
         r.kernel = "plugin:mine";
         r.provider = "builtin";
       },
       "provider", "'builtin' is out of range (accepted: plugin for kernel plugin:mine)"},
      {"peer_provider_plain_kernel",
       [](Record& r) {
         r.kernel = "liger";
         r.provider = "peer";
       },
       "provider", "'peer' for kernel liger, whose name lacks the 'peer:' prefix"},
  };
  expect_each_refused(cases);
}

// Every name a run can write in those columns reads: each op (a residual dtype exactly where it
// has a residual stream), dtype, layout and distribution, and kernel names that are not
// built-in (a plugin's, a peer's from scripts/peers.py, a cuDNN engine variant).
TEST(ReaderDomain, EveryNameARunWritesReads) {
  std::vector<Record> rows;
  const auto with = [&](const std::function<void(Record&)>& set) {
    Record r = timed_pass();
    set(r);
    r.seed = rows.size();  // distinct keys
    rows.push_back(r);
  };
  for (const std::string op : {"fwd", "bwd", "add", "add-bwd"}) {
    with([&](Record& r) {
      r.op = op;
      r.rdtype = op == "add" || op == "add-bwd" ? "bf16" : "";
    });
  }
  for (const char* d : {"fp32", "fp16", "bf16"}) with([&](Record& r) { r.dtype = r.wdtype = d; });
  for (const char* l : {"contiguous", "strided", "misaligned"}) with([&](Record& r) { r.layout = l; });
  for (const char* d : {"normal", "large", "tiny", "offset", "outlier", "zero-row"}) {
    with([&](Record& r) { r.dist = d; });
  }
  for (const auto& [k, provider] : std::vector<std::pair<std::string, std::string>>{
           {"plugin:my-kernel", "plugin"},
           {"peer:liger", "peer"},
           {"cudnn@eng3_k24=0_k30=1", "cudnn"},
           {"cublas", "cublas"},
           {"mutant-eps-outside", "builtin"}}) {
    with([&](Record& r) {
      r.kernel = r.picked = k;
      r.provider = provider;
    });
  }
  for (const Record& r : rows)
    EXPECT_FALSE(find_violation(r)) << csv_row(r) << ": " << find_violation(r)->message;
  EXPECT_EQ(read_csv_text("names.csv", csv_file_text(rows)).size(), rows.size());
}

// The limits of the rules: what a run really writes still reads.
TEST(ReaderDomain, PossibleEdgeValuesRead) {
  std::vector<Record> rows;
  Record fail = timed_pass();
  fail.status = Status::fail;
  fail.mismatches = 4;
  fail.max_abs_err = kInf;  // NaN written where the reference was finite
  fail.max_rel_err = kInf;
  fail.max_ulp = kNaN;
  rows.push_back(fail);
  Record unchecked = timed_pass();  // --no-check: no metrics, no worst element
  unchecked.rows_checked = 0;
  unchecked.max_abs_err = unchecked.max_rel_err = unchecked.max_ulp = 0;
  unchecked.worst_row = unchecked.worst_col = -1;
  unchecked.graph_us.reset();  // a large launch: no graph timing
  unchecked.noise_pct = 0.0;
  unchecked.min_us = unchecked.max_us = *unchecked.median_us;
  unchecked.seed = 0;
  rows.push_back(unchecked);
  Record edge = timed_pass();
  edge.M = edge.H = edge.stride = 1;
  edge.rows_checked = 1;
  edge.worst_row = edge.worst_col = 0;
  edge.atol = edge.rtol = 0;
  edge.bytes = 10;
  edge.gbps = static_cast<double>(edge.bytes) / (*edge.median_us * 1e3);
  edge.pct_of_copy = 100.0 * *edge.gbps / *edge.copy_gbps;
  rows.push_back(edge);
  Record error = skipped();
  error.status = Status::error;
  rows.push_back(error);
  for (const Record& r : rows) EXPECT_FALSE(find_violation(r)) << csv_row(r) << ": " << find_violation(r)->message;
  const std::vector<Record> back = read_csv_text("edge.csv", csv_file_text(rows));
  ASSERT_EQ(back.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(csv_row(back[i]), csv_row(rows[i])) << i;
}

// A writer rounding to 15 significant digits stays within the 1e-9 of the derived columns.
TEST(ReaderDomain, DerivedColumnsTolerateShortRounding) {
  Record r = timed_pass();
  r.gbps = std::stod(fmt::format("{:.15g}", *r.gbps));
  r.pct_of_copy = std::stod(fmt::format("{:.15g}", *r.pct_of_copy));
  EXPECT_FALSE(find_violation(r));
}

// Every CSV under reports/ (baselines, vendor and peers runs, strategy and auto tables, of
// schemas 1 to 3): the reader's rules must hold for what runs really wrote.
TEST(ReaderDomain, CommittedReportsLoad) {
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(std::string(RB_SOURCE_DIR) + "/reports"))
    if (entry.is_regular_file() && entry.path().extension() == ".csv") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  for (const char* file : {"/reports/baselines/h200.csv", "/reports/baselines/h200-2026-11-29.csv",
                           "/reports/peers/all.csv", "/reports/vendor/h200-cudnn-engines.csv"}) {
    EXPECT_NE(std::find(files.begin(), files.end(), std::string(RB_SOURCE_DIR) + file), files.end()) << file;
  }
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    try {
      EXPECT_FALSE(read_csv(file).empty());
    } catch (const CsvError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

TEST_F(ReportsTest, EmptyFileIsACsvError) {
  const CsvError e = read_error(write_file("empty.csv", ""));
  EXPECT_EQ(e.line(), 1);
  EXPECT_NE(std::string(e.what()).find("header"), std::string::npos) << e.what();
}

// A binary file is not "empty": fccp reads lines as C strings, so a NUL would cut its line
// short (here the whole file, read as a blank line).
TEST_F(ReportsTest, BinaryFileIsRefusedAsBinary) {
  const CsvError e = read_error(write_file("bin.csv", std::string("\x00\x01\x02", 3)));
  EXPECT_EQ(e.line(), 1);
  EXPECT_NE(e.message().find("NUL byte: binary data, not a CSV file"), std::string::npos) << e.what();
  EXPECT_EQ(e.message().find("empty"), std::string::npos) << e.what();
  // Further down, the NUL's own line is named.
  const CsvError later = read_error(write_file("later.csv", valid_csv() + std::string("x\0y\n", 4)));
  EXPECT_EQ(later.line(), 3) << later.what();
}

// A header with a column too few or too many names the column, not "truncated line?".
TEST_F(ReportsTest, HeaderLackingOrAddingAColumnNamesIt) {
  const std::string row = csv_row(timed_pass());
  const CsvError missing =
      read_error(write_file("miss.csv", replace_once(kHeader, ",gpu,", ",") + "\n" + row + "\n"));
  EXPECT_EQ(missing.line(), 1) << missing.what();
  EXPECT_NE(missing.message().find("header does not match schema rmsnorm-bench/3: missing column gpu"),
            std::string::npos)
      << missing.what();
  EXPECT_EQ(missing.message().find("too few"), std::string::npos) << missing.what();

  const CsvError two = read_error(write_file(
      "two.csv", replace_once(replace_once(kHeader, ",gpu,", ","), ",median_us,", ",") + "\n" + row + "\n"));
  EXPECT_NE(two.message().find("missing columns gpu, median_us"), std::string::npos) << two.what();

  const CsvError extra = read_error(write_file("extra.csv", std::string(kHeader) + ",x\n" + row + ",1\n"));
  EXPECT_EQ(extra.line(), 1) << extra.what();
  EXPECT_NE(extra.message().find("unknown column 'x'"), std::string::npos) << extra.what();

  // A schema 1 file is measured against schema 1: it lacks gpu alone, not the newer columns.
  const CsvError v1 =
      read_error(write_file("v1.csv", replace_once(kHeaderV1, ",gpu,", ",") + "\n" + kSkippedV1Row + "\n"));
  EXPECT_NE(v1.message().find("header does not match schema rmsnorm-bench/1: missing column gpu"),
            std::string::npos)
      << v1.what();

  // After blank lines, the header's own line; a name twice is named.
  const CsvError late =
      read_error(write_file("late.csv", "\n\n" + replace_once(kHeader, ",gpu,", ",") + "\n"));
  EXPECT_EQ(late.line(), 3) << late.what();
  const CsvError twice = read_error(write_file("twice.csv", replace_once(kHeader, ",cc,", ",gpu,") + "\n"));
  EXPECT_EQ(twice.line(), 1) << twice.what();
  EXPECT_EQ(twice.column(), "gpu") << twice.what();
  EXPECT_NE(twice.message().find("twice"), std::string::npos) << twice.what();

  const CsvError quote = read_error(write_file("quote.csv", "\nschema,\"gpu,cc\n"));
  EXPECT_EQ(quote.line(), 2) << quote.what();
  EXPECT_NE(quote.message().find("unterminated quoted field"), std::string::npos) << quote.what();

  const CsvError foreign = read_error(write_file("foreign.csv", "name,value\nx,1\n"));
  EXPECT_NE(foreign.message().find("not an rmsnorm-bench CSV"), std::string::npos) << foreign.what();
}

// The input is read once: a pipe yields its bytes a single time (the reader used to open the
// file twice, once for the header and once for the rows, and found the pipe empty).
TEST_F(ReportsTest, ReaderReadsAPipe) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string text = valid_csv() + csv_row(skipped()) + "\n";
  ASSERT_LT(text.size(), 4096u);  // fits the pipe's buffer: written before it is read
  ASSERT_EQ(::write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fds[1]);
  std::vector<Record> back;
  std::vector<std::int64_t> lines;
  try {
    back = read_csv("/dev/fd/" + std::to_string(fds[0]), &lines);
  } catch (const CsvError& e) {
    ADD_FAILURE() << e.what();
  }
  ::close(fds[0]);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].reason, skipped().reason);
  EXPECT_EQ(lines, (std::vector<std::int64_t>{2, 3}));
}

// ---------------------------------------------------------------- markdown

RunContext context() {
  RunContext c;
  c.gpu = "NVIDIA H200";
  c.cc = "9.0";
  c.driver = "580.65";
  c.cuda_runtime = "13.0";
  c.tool_version = "0.1.0";
  c.commit = "abc1234";
  c.command_line = "rmsnorm-bench run --H 4096 --dtype bf16";
  c.started_at = "2026-12-01T10:00:00Z";
  c.copy_gbps = 4275;
  c.sms = 132;
  c.l2_mb = 60;
  return c;
}

// Rows of one (op, dtype, wdtype): two kernels, two H, two M, a worse eps, a failure.
std::vector<Record> sweep() {
  std::vector<Record> rs;
  const auto add = [&](const std::string& kernel, std::int64_t m, std::int64_t h, double gbps,
                       double eps, Status status) {
    Record r = timed_pass();
    r.kernel = kernel;
    r.picked = kernel == "auto" ? "warp-row" : kernel;
    r.M = m;
    r.H = h;
    r.eps = eps;
    r.status = status;
    r.gbps = gbps;
    r.pct_of_copy = 100.0 * gbps / 4275;
    if (m > 256) r.graph_us.reset();  // as the runner does: graph replay for small M only
    rs.push_back(r);
  };
  add("naive", 16384, 1024, 1500, 1e-6, Status::pass);
  add("naive", 16384, 1024, 1600, 1e-5, Status::pass);  // best of the cell
  add("naive", 16384, 4096, 3950, 1e-6, Status::pass);
  add("auto", 16384, 1024, 2900, 1e-6, Status::pass);
  add("auto", 16384, 4096, 9999, 1e-6, Status::fail);  // fast but wrong: no number shown
  add("naive", 1, 4096, 12, 1e-6, Status::pass);
  rs.back().worst_row = 0;
  Record f = failed();
  rs.push_back(f);
  Record e = failed();
  e.status = Status::error;
  e.reason = "cudaErrorIllegalAddress | launch";
  e.worst_row = -1;
  e.worst_col = -1;
  rs.push_back(e);
  rs.push_back(skipped());
  rs.push_back(skipped());
  Record other = skipped();
  other.reason = "needs 16-byte rows";
  rs.push_back(other);
  return rs;
}

TEST(Markdown, ContextTotalsAndSectionOrder) {
  const std::string md = markdown_report(context(), sweep());
  for (const char* want :
       {"# rmsnorm-bench report", "NVIDIA H200", "cc 9.0", "132 SMs", "60 MB L2", "580.65", "13.0",
        "0.1.0", "abc1234", "`rmsnorm-bench run --H 4096 --dtype bf16`", "2026-12-01T10:00:00Z",
        "4275 GB/s", "11 cases: 5 pass, 2 fail, 3 skip, 1 error"}) {
    EXPECT_NE(md.find(want), std::string::npos) << want << "\n" << md;
  }
  const std::size_t failures = md.find("## Failures");
  const std::size_t first_table = md.find("| kernel | H=");
  const std::size_t skips = md.find("## Skips");
  ASSERT_NE(failures, std::string::npos) << md;
  ASSERT_NE(first_table, std::string::npos) << md;
  ASSERT_NE(skips, std::string::npos) << md;
  EXPECT_LT(failures, first_table);
  EXPECT_LT(first_table, skips);
}

TEST(Markdown, FailuresShowWhereAndHowBad) {
  const std::string md = markdown_report(context(), sweep());
  const std::string failures =
      md.substr(md.find("## Failures"), md.find("## Bandwidth") - md.find("## Failures"));
  // A kernel not built in is named with its provider.
  EXPECT_NE(failures.find("| fail | plugin:naive (plugin 0.3, \"beta\") | fwd | bf16/fp32 | 16384 | 4097 | misaligned | "
                          "zero-row | 1e-06 | NaN where reference is finite first at (3, 4096) "
                          "| inf |"),
            std::string::npos)
      << failures;
  EXPECT_NE(failures.find("| 4097 | (3, 4096) |"), std::string::npos) << failures;
  EXPECT_NE(failures.find("| error |"), std::string::npos) << failures;
  EXPECT_NE(failures.find("cudaErrorIllegalAddress \\| launch"), std::string::npos) << failures;
  EXPECT_NE(failures.find("auto → warp-row | fwd | bf16/fp32 | 16384 | 4096"), std::string::npos)
      << failures;
}

TEST(Markdown, BandwidthTablesPerMWithBestCell) {
  const std::string md = markdown_report(context(), sweep());
  const std::size_t big = md.find("### fwd bf16/fp32, M = 16384");
  const std::size_t small = md.find("### fwd bf16/fp32, M = 1\n");
  ASSERT_NE(big, std::string::npos) << md;
  ASSERT_NE(small, std::string::npos) << md;
  EXPECT_LT(small, big);  // ascending M
  const std::string big_table = md.substr(big, md.find("## Skips") - big);
  // H=4097 ran only as a failure: its column exists and shows no number.
  EXPECT_NE(big_table.find("| kernel | H=1024 | H=4096 | H=4097 |"), std::string::npos) << md;
  EXPECT_NE(big_table.find("| naive | 1600 (37.4%) | 3950 (92.4%) | — |"), std::string::npos) << md;
  EXPECT_NE(big_table.find("| auto | 2900 (67.8%) warp-row | — | — |"), std::string::npos) << md;
  EXPECT_EQ(big_table.find("9999"), std::string::npos) << md;
  EXPECT_EQ(big_table.find("1500"), std::string::npos) << md;
  const std::string small_table = md.substr(small, big - small);
  // Small M: the per-launch time from graph replay stands beside the (launch-bound) GB/s.
  EXPECT_NE(small_table.find("| naive | 12 (0.3%); 63.75 us/launch in a graph |"), std::string::npos) << md;
}

TEST(Markdown, SkipsAreGroupedWithCounts) {
  const std::string md = markdown_report(context(), sweep());
  const std::string skips = md.substr(md.find("## Skips"));
  EXPECT_NE(skips.find("| warp-row | H > 2048, needs \"chunked\", or a cluster | 2 |"),
            std::string::npos)
      << skips;
  EXPECT_NE(skips.find("| warp-row | needs 16-byte rows | 1 |"), std::string::npos) << skips;
}

TEST(Markdown, EscaperAndCodeSpans) {
  EXPECT_EQ(md_escape("a|b\nc\rd"), "a\\|b c d");
  EXPECT_EQ(md_escape(""), "");
  EXPECT_EQ(md_code("x y"), "`x y`");
  EXPECT_EQ(md_code("a `b` c"), "`` a `b` c ``");
  EXPECT_EQ(md_code("two\nlines"), "`two lines`");
  EXPECT_EQ(md_escape(md_code("p|q")), "`p\\|q`");
}

// Rows of one shape from built-in, mutant and vendor kernels, plus a shape with no vendor.
std::vector<Record> vendor_sweep() {
  std::vector<Record> rs;
  const auto add = [&](const std::string& kernel, const std::string& provider,
                       const std::string& version, std::int64_t h, double gbps, double ulp,
                       Status status = Status::pass) {
    Record r = timed_pass();
    r.kernel = kernel;
    r.picked = kernel;
    r.provider = provider;
    r.provider_version = version;
    r.H = h;
    r.gbps = gbps;
    r.pct_of_copy = 100.0 * gbps / 4275;
    r.max_ulp = ulp;
    r.status = status;
    rs.push_back(r);
  };
  add("warp-row", "builtin", "", 4096, 3800, 1);
  add("row-vector", "builtin", "", 4096, 3950, 2);      // best built-in
  add("mutant-no-eps", "builtin", "", 4096, 4200, 9);   // a mutant: never the best built-in
  add("cudnn-fwd", "cudnn", "9.10.2", 4096, 3700, 1);   // best vendor
  add("cublas-fwd", "cublas", "12.9", 4096, 3100, 0);
  add("cublas-fwd", "cublas", "12.9", 4096, 5000, 0, Status::fail);  // fast but wrong
  add("plugin-x", "plugin", "0.1", 4096, 4100, 0);      // neither built in nor a vendor
  add("row-vector", "builtin", "", 1024, 2000, 1);      // no vendor at this H
  return rs;
}

TEST(Markdown, VendorVsBuiltinPerShape) {
  const std::string md = markdown_report(context(), vendor_sweep());
  const std::size_t at = md.find("## Vendor vs built-in");
  ASSERT_NE(at, std::string::npos) << md;
  EXPECT_LT(md.find("## Bandwidth"), at);
  EXPECT_LT(at, md.find("## Skips"));
  const std::string section = md.substr(at, md.find("## Skips") - at);
  EXPECT_NE(section.find("| fwd | bf16/fp32 | 16384 | 4096 | strided | normal | 1e-06 | row-vector | "
                         "3950 | 92.4% | 2.0 | cudnn-fwd (cudnn 9.10.2) | 3700 | 86.5% | 1.0 | 1.07x |"),
            std::string::npos)
      << section;
  EXPECT_EQ(section.find("H=1024"), std::string::npos) << section;
  EXPECT_EQ(section.find("| 1024 |"), std::string::npos) << section;  // no vendor there
  EXPECT_EQ(section.find("mutant-"), std::string::npos) << section;
  EXPECT_EQ(section.find("plugin"), std::string::npos) << section;
  EXPECT_EQ(section.find("5000"), std::string::npos) << section;
  // The bandwidth table names the vendor kernels with provider and version.
  EXPECT_NE(md.find("| cudnn-fwd (cudnn 9.10.2) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| row-vector |"), std::string::npos) << md;
}

TEST(Markdown, NoVendorSectionWithoutBothSides) {
  EXPECT_EQ(markdown_report(context(), sweep()).find("Vendor vs built-in"), std::string::npos);
  std::vector<Record> only_vendor;
  for (const Record& r : vendor_sweep())
    if (r.provider != "builtin") only_vendor.push_back(r);
  EXPECT_EQ(markdown_report(context(), only_vendor).find("Vendor vs built-in"), std::string::npos);
  // The only built-in row of a shape is a mutant: no pair.
  std::vector<Record> mutant_only;
  for (const Record& r : vendor_sweep())
    if (r.provider != "builtin" || r.kernel.rfind("mutant-", 0) == 0) mutant_only.push_back(r);
  EXPECT_EQ(markdown_report(context(), mutant_only).find("Vendor vs built-in"), std::string::npos);
}

TEST(Markdown, EmptyRunSaysSo) {
  const std::string md = markdown_report(RunContext{}, {});
  EXPECT_NE(md.find("0 cases: 0 pass, 0 fail, 0 skip, 0 error"), std::string::npos) << md;
  EXPECT_NE(md.find("## Failures\n\nNone."), std::string::npos) << md;
  EXPECT_NE(md.find("## Skips\n\nNone."), std::string::npos) << md;
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST_F(ReportsTest, AtomicWriteReplacesAndLeavesNoTempFile) {
  const std::string file = path("report.md");
  write_file_atomic(file, "old\n");
  write_file_atomic(file, "# new\n");
  EXPECT_EQ(read_file(file), "# new\n");
  EXPECT_EQ(names_in(dir_), std::vector<std::string>{"report.md"});
  write_file_atomic(file, "");
  EXPECT_EQ(read_file(file), "");
  // The old name forwards to the same function.
  write_markdown_atomic(file, "again\n");
  EXPECT_EQ(read_file(file), "again\n");
  EXPECT_EQ(names_in(dir_), std::vector<std::string>{"report.md"});
}

TEST_F(ReportsTest, AtomicWriteFailureNamesThePath) {
  const std::string file = path("missing-dir/report.md");
  try {
    write_file_atomic(file, "x");
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(ReportsTest, AtomicWriteOverADirectoryFailsAndCleansUp) {
  fs::create_directories(path("report.md/inside"));
  EXPECT_THROW(write_file_atomic(path("report.md"), "x"), std::runtime_error);
  EXPECT_EQ(names_in(dir_), std::vector<std::string>{"report.md"});
  EXPECT_TRUE(fs::is_directory(path("report.md/inside")));
}

// A write cut short (the file size limit stands in for a full disk) leaves the old file as
// it was and no temporary file beside it.
TEST_F(ReportsTest, AtomicWriteCutShortKeepsTheOldFile) {
  const std::string file = path("merged.csv");
  write_file_atomic(file, "old contents\n");
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  rlimit small = saved;
  small.rlim_cur = 4096;
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of a signal
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  bool threw = false;
  std::string what;
  try {
    write_file_atomic(file, std::string(100000, 'x'));
  } catch (const std::runtime_error& e) {
    threw = true;
    what = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_TRUE(threw);
  EXPECT_NE(what.find(file), std::string::npos) << what;
  EXPECT_EQ(read_file(file), "old contents\n");
  EXPECT_EQ(names_in(dir_), std::vector<std::string>{"merged.csv"});
}

// A FIFO (as /dev/null or /dev/stdout: not a regular file) is written through, not replaced
// by a regular file: renaming over /dev/null as root had made it one (`merge ... -o
// /dev/null`), and as another user the temporary file beside it could not be created.
TEST_F(ReportsTest, AtomicWriteThroughAFifoKeepsIt) {
  const std::string fifo = path("out.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // The read end opened first without blocking, so the write's open finds a reader, and a
  // write that replaced the FIFO instead leaves nothing to read rather than hanging.
  const int rd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(rd, 0);
  write_file_atomic(fifo, "a,b\n1,2\n");
  char buf[64];
  const ssize_t n = ::read(rd, buf, sizeof buf);
  ::close(rd);
  EXPECT_EQ(n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string(), "a,b\n1,2\n");
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_EQ(names_in(dir_), std::vector<std::string>{"out.fifo"});
}

TEST_F(ReportsTest, AtomicWriteIntoAnUnwritableDirectory) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into a read-only directory anyway";
  fs::create_directories(path("ro"));
  const std::string file = path("ro/report.md");
  std::ofstream(file) << "old\n";
  ASSERT_EQ(::chmod(path("ro").c_str(), 0555), 0);
  EXPECT_THROW(write_file_atomic(file, "new\n"), std::runtime_error);
  ::chmod(path("ro").c_str(), 0755);
  EXPECT_EQ(read_file(file), "old\n");
  EXPECT_EQ(names_in(path("ro")), std::vector<std::string>{"report.md"});
}

// ---------------------------------------------------------------- terminal

TEST(Terminal, SummaryTableListsTimedRowsAndCounts) {
  const std::vector<Record> rs = sweep();
  const std::string table = summary_table(rs);
  EXPECT_NE(table.find("5 pass, 2 fail, 3 skip, 1 error\n"), std::string::npos) << table;
  EXPECT_NE(table.find("auto→warp-row"), std::string::npos) << table;
  EXPECT_NE(table.find("FAIL"), std::string::npos) << table;
  EXPECT_NE(table.find("ERROR"), std::string::npos) << table;
  EXPECT_NE(table.find("92.4%"), std::string::npos) << table;
  EXPECT_NE(table.find("65.43"), std::string::npos) << table;
  EXPECT_EQ(table.find("warp-row  add"), std::string::npos) << table;  // skips: counted only

  // Header + 8 listed rows + counts, each row in input order, columns aligned.
  std::vector<std::string> lines;
  std::istringstream in(table);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 10u) << table;
  EXPECT_EQ(lines[0].rfind("kernel", 0), 0u) << table;
  // Alignment is in terminal columns (code points): "µ", "→" and "—" take several bytes.
  const auto column_of = [](const std::string& line, const std::string& word) {
    const std::size_t at = line.rfind(word);
    EXPECT_NE(at, std::string::npos) << word;
    EXPECT_EQ(at + word.size(), line.size()) << line;
    std::size_t col = 0;
    for (std::size_t i = 0; i < at; ++i) col += (line[i] & 0xC0) != 0x80;
    return col;
  };
  const std::size_t status_col = column_of(lines[0], "status");
  EXPECT_EQ(column_of(lines[1], "pass"), status_col) << table;
  EXPECT_EQ(column_of(lines[5], "FAIL"), status_col) << table;
  EXPECT_EQ(column_of(lines[8], "ERROR"), status_col) << table;
  EXPECT_EQ(column_of(lines[8], "—  ERROR") + 1 + 2, status_col) << table;
  EXPECT_NE(lines[4].find("auto→warp-row  fwd"), std::string::npos) << table;
}

TEST(Terminal, SummaryOfNothingIsJustCounts) {
  EXPECT_EQ(summary_table({skipped()}), "0 pass, 0 fail, 1 skip, 0 error\n");
}

TEST(Terminal, ProgressLineIsOneShortLine) {
  const std::string line = progress_line(12, 240, timed_pass());
  EXPECT_EQ(line, "[ 12/240] fwd bf16 auto→row-vector M=16384 H=4096 pass 4103 GB/s (96.0%)");
  EXPECT_EQ(progress_line(3, 9, failed()), "[3/9] fwd bf16 plugin:naive M=16384 H=4097 FAIL");
}

}  // namespace
}  // namespace rb

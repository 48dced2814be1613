// bisect on the host: ULP distances, the analysis on synthetic sides (the reference under
// one convention dressed as a kernel, or with one stage broken by hand), the .npy files, and
// the reproducer's replay of the reference side without a GPU. Suites are named Bisect*.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "app/cmd_bisect.h"
#include "harness/bisect.h"
#include "harness/bisect_run.h"
#include "harness/device.h"
#include "harness/host_types.h"
#include "reports/npy.h"
#include "tests/bisect_cases.h"
#include "tests/run_bench.h"

namespace fs = std::filesystem;

namespace rb {
namespace {

std::uint32_t bits_of_bf16(float f) {
  const ref::bfloat16 b = ref::from_float<ref::bfloat16>(f);
  return ref::bits_of(b);
}

TEST(BisectUlp, DistanceCountsRepresentableSteps) {
  EXPECT_EQ(ulp_distance(DType::bf16, bits_of_bf16(1.0f), bits_of_bf16(1.0f)), 0u);
  EXPECT_EQ(ulp_distance(DType::bf16, bits_of_bf16(1.0f), bits_of_bf16(1.0078125f)), 1u);  // 1 + 2^-7
  EXPECT_EQ(ulp_distance(DType::bf16, 0x0000, 0x8000), 0u);  // +0 and -0
  EXPECT_EQ(ulp_distance(DType::bf16, 0x0001, 0x8001), 2u);  // across zero
  EXPECT_EQ(ulp_distance(DType::e4m3, 0x38, 0x39), 1u);
  EXPECT_EQ(ulp_distance(DType::f32, 0x3f800000u, 0x3f800003u), 3u);
}

TEST(BisectUlp, HistogramBuckets) {
  UlpHistogram h;
  for (std::uint64_t u : {0, 0, 1, 2, 3, 4, 5, 16, 17, 300, 5000}) h.add(u);
  EXPECT_EQ(h.counts[0], 2);
  EXPECT_EQ(h.counts[1], 1);
  EXPECT_EQ(h.counts[2], 1);
  EXPECT_EQ(h.counts[3], 2);  // 3-4
  EXPECT_EQ(h.counts[4], 1);  // 5-8
  EXPECT_EQ(h.counts[5], 1);  // 9-16
  EXPECT_EQ(h.counts[6], 1);  // 17-64
  EXPECT_EQ(h.counts[8], 1);  // 257-4096
  EXPECT_EQ(h.counts[9], 1);  // more
  EXPECT_EQ(h.total, 11);
  EXPECT_EQ(h.max, 5000u);
}

Case fwd_case(std::int64_t M, std::int64_t H) { return testing_support::bf16_fwd_case(M, H, Dist::normal, 7); }

// A "kernel" whose outputs are the reference's under `conv` (as a kernel following it would
// store them), against the reference under `against`.
BisectResult dressed(Case c, Convention conv, Convention against, const std::string& kernel = "naive") {
  const BisectSide a{kernel, conv}, b{BisectSide::kReferenceSide, against};
  const Case ca = side_case(c, a), cb = side_case(c, b);
  const TensorBytes in = generate_inputs(ca);
  return bisect_outputs(ca, a, cb, b, in, reference_outputs(ca, in), reference_outputs(cb, in));
}

TEST(BisectAnalysis, SameConventionAgrees) {
  const BisectResult r = dressed(fwd_case(8, 1000), Convention::fp32, Convention::fp32);
  EXPECT_FALSE(r.diverge);
  EXPECT_EQ(r.stage, Stage::none);
  ASSERT_FALSE(r.fit_a.empty());
  EXPECT_EQ(r.fit_a.front().conv, Convention::fp32);
  EXPECT_DOUBLE_EQ(r.fit_a.front().exact_fraction, 1.0);
  EXPECT_EQ(r.outputs.front().a_vs_b.exact(), r.outputs.front().a_vs_b.total);
}

TEST(BisectAnalysis, LlamaKernelAgainstGemmaReferenceIsTheWeightStage) {
  const BisectResult r = dressed(fwd_case(8, 4097), Convention::llama, Convention::gemma);
  EXPECT_TRUE(r.diverge);
  EXPECT_EQ(r.stage, Stage::weight) << r.stage_detail;
  ASSERT_FALSE(r.fit_a.empty());
  EXPECT_EQ(r.fit_a.front().conv, Convention::llama);
}

TEST(BisectAnalysis, DetectsTheConventionAKernelFollows) {
  // llama and fp32 differ by at most about one bf16 ulp: within the tolerance, but the
  // replay under every convention still tells which one the kernel follows.
  for (Convention conv : all_of<Convention>()) {
    const BisectResult r = dressed(fwd_case(4, 1024), conv, conv);
    ASSERT_FALSE(r.fit_a.empty());
    EXPECT_EQ(r.fit_a.front().conv, conv) << convention_name(conv);
    EXPECT_DOUBLE_EQ(r.fit_a.front().exact_fraction, 1.0);
    EXPECT_LT(r.fit_a[1].exact_fraction, 0.99) << "the runner-up reproduces as well: no evidence";
  }
}

TEST(BisectAnalysis, GemmaAgainstZeroCenteredPartsAtTheWeight) {
  const BisectResult r = dressed(fwd_case(8, 4096), Convention::gemma, Convention::zero_centered);
  ASSERT_FALSE(r.fit_a.empty());
  EXPECT_EQ(r.fit_a.front().conv, Convention::gemma);
  if (r.diverge) {
    EXPECT_EQ(r.stage, Stage::weight) << r.stage_detail;
  }
}

// The reference's outputs with one stage broken by hand.
struct Broken {
  Case c = fwd_case(8, 4099);
  BisectSide a{"naive", Convention::fp32}, b{BisectSide::kReferenceSide, Convention::fp32};
  TensorBytes in, out_a, out_b;
  Broken() {
    in = generate_inputs(c);
    out_a = reference_outputs(c, in);
    out_b = out_a;
  }
  void set_y(std::int64_t row, std::int64_t col, float v) {
    const ref::bfloat16 b = ref::from_float<ref::bfloat16>(v);
    std::memcpy(out_a[Tensor::y].data() + 2 * static_cast<std::size_t>(row * c.H + col), &b, 2);
  }
  float y(std::int64_t row, std::int64_t col) const {
    ref::bfloat16 b;
    std::memcpy(&b, out_b.at(Tensor::y).data() + 2 * static_cast<std::size_t>(row * c.H + col), 2);
    return static_cast<float>(b);
  }
  BisectResult run() const { return bisect_outputs(c, a, c, b, in, out_a, out_b); }
};

TEST(BisectAnalysis, WrongRrmsIsTheRrmsStage) {
  Broken k;
  for (std::int64_t row = 2; row < 4; ++row) {
    float r;
    std::memcpy(&r, k.out_a[Tensor::rrms].data() + 4 * row, 4);
    r *= 1.01f;
    std::memcpy(k.out_a[Tensor::rrms].data() + 4 * row, &r, 4);
    for (std::int64_t col = 0; col < k.c.H; ++col) k.set_y(row, col, k.y(row, col) * 1.01f);
  }
  const BisectResult r = k.run();
  EXPECT_TRUE(r.diverge);
  EXPECT_EQ(r.stage, Stage::rrms) << r.stage_detail;
  ASSERT_TRUE(r.first_row);
  EXPECT_EQ(r.first_row->row, 2);
}

TEST(BisectAnalysis, TailColumnsAreTheTailStage) {
  Broken k;  // H = 4099: 3 tail columns past the last 8-element vector
  for (std::int64_t row = 0; row < k.c.M; ++row)
    for (std::int64_t col = k.c.H - 3; col < k.c.H; ++col) k.set_y(row, col, k.y(row, col) * 1.5f + 1.0f);
  const BisectResult r = k.run();
  EXPECT_TRUE(r.diverge);
  EXPECT_EQ(r.stage, Stage::tail) << r.stage_detail;
  EXPECT_EQ(r.outputs.front().first.col, k.c.H - 3);
}

TEST(BisectAnalysis, RrmsOverExtraTailColumnsIsTheTailStage) {
  // rrms summed over H + 5 columns (reading into the next row), as a kernel that loads whole
  // vectors past H would: attributed to the tail, not to the sum of squares in general.
  Broken k;
  const Case& c = k.c;
  for (std::int64_t row = 0; row + 1 < c.M; ++row) {
    double s = 0;
    for (std::int64_t j = 0; j < c.H + 5; ++j) {
      const std::int64_t rr = row + j / c.H, cc = j % c.H;
      ref::bfloat16 b;
      std::memcpy(&b, k.in.at(Tensor::x).data() + 2 * static_cast<std::size_t>(rr * c.H + cc), 2);
      s += static_cast<double>(static_cast<float>(b)) * static_cast<float>(b);
    }
    const float r = static_cast<float>(1.0 / std::sqrt(s / static_cast<double>(c.H) + c.eps));
    std::memcpy(k.out_a[Tensor::rrms].data() + 4 * row, &r, 4);
  }
  const BisectResult r = k.run();
  EXPECT_TRUE(r.diverge);
  EXPECT_EQ(r.stage, Stage::tail) << r.stage_detail;
}

TEST(BisectAnalysis, ShiftedWeightIsTheWeightStage) {
  Broken k;
  TensorBytes in = k.in;  // y computed with w rotated by one column; rrms unchanged
  std::vector<unsigned char>& w = in[Tensor::w];
  std::rotate(w.begin(), w.begin() + 2, w.end());
  k.out_a[Tensor::y] = reference_outputs(k.c, in).at(Tensor::y);
  const BisectResult r = k.run();
  EXPECT_TRUE(r.diverge);
  EXPECT_EQ(r.stage, Stage::weight) << r.stage_detail;
}

TEST(BisectAnalysis, RoundedResidualBeforeSquaringIsTheResidualStage) {
  Case c = fwd_case(8, 1024);
  c.op = Op::add;
  // llama squares s rounded to the residual dtype (bf16); fp32 squares the exact sum. Both
  // store the same s.
  const BisectResult r = dressed(c, Convention::llama, Convention::fp32);
  EXPECT_TRUE(r.diverge);
  EXPECT_EQ(r.stage, Stage::residual_sum) << r.stage_detail;
}

TEST(BisectAnalysis, Fp8OutputAgreesWithItsReference) {
  Case c = fwd_case(4, 257);
  c.y8 = DType::e4m3;
  c.y_scale = 300;
  const BisectResult r = dressed(c, Convention::fp32, Convention::fp32);
  EXPECT_FALSE(r.diverge);
  ASSERT_EQ(r.outputs.size(), 3u);  // y, rrms, amax
  EXPECT_EQ(r.outputs[0].dtype, DType::e4m3);
}

// ---- files -----------------------------------------------------------------------------------

class BisectFiles : public ::testing::Test {
 protected:
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() / ("rb-bisect-test-" + std::to_string(::getpid()) + "-" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  // A reproducer of naive (fp32) against the reference, bf16 fwd M=3 H=17, written as the
  // bisect writes one; each side's outputs are the reference's (no GPU needed).
  void write_identical_pair() {
    BisectOptions o;
    o.kernel = "naive";
    o.against = "reference";
    Case c = fwd_case(3, 17);
    c.kernel = "naive";
    const TensorBytes in = generate_inputs(c);
    write_reproducer(dir.string(), o, c, in, reference_outputs(c, in), reference_outputs(c, in));
  }
  std::string case_text() const {
    std::ifstream f(dir / "case.ini");
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  }
  void set_case_text(const std::string& text) const { std::ofstream(dir / "case.ini") << text; }
  testing_support::RunResult replay() const {
    return testing_support::run_bench({"bisect", "--replay", dir.string()});
  }
};

// A .npy file of `header` (the dict, unpadded) and `data`, as numpy would lay it out.
void write_raw_npy(const fs::path& path, std::string header, std::size_t data_bytes) {
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  f << "\x93NUMPY" << '\x01' << '\x00' << static_cast<char>(header.size() & 0xff)
    << static_cast<char>(header.size() >> 8) << header << std::string(data_bytes, '\0');
}

TEST_F(BisectFiles, NpyRoundTrip) {
  NpyArray a{"<f4", {2, 3}, std::vector<unsigned char>(24)};
  for (std::size_t i = 0; i < a.data.size(); ++i) a.data[i] = static_cast<unsigned char>(i * 7);
  write_npy((dir / "a.npy").string(), a);
  const NpyArray b = read_npy((dir / "a.npy").string());
  EXPECT_EQ(b.descr, "<f4");
  EXPECT_EQ(b.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(b.data, a.data);
  NpyArray one{"|u1", {5}, std::vector<unsigned char>(5, 9)};
  write_npy((dir / "one.npy").string(), one);
  EXPECT_EQ(read_npy((dir / "one.npy").string()).shape, (std::vector<std::int64_t>{5}));
  // The header is padded so the data starts on a 64-byte boundary (numpy's rule).
  EXPECT_EQ(fs::file_size(dir / "a.npy") % 64, 24u % 64);
}

TEST_F(BisectFiles, NpyRefusesWhatItCannotRead) {
  std::ofstream(dir / "bad.npy") << "not numpy";
  EXPECT_THROW(read_npy((dir / "bad.npy").string()), NpyError);
  NpyArray a{"<f4", {4}, std::vector<unsigned char>(16)};
  write_npy((dir / "t.npy").string(), a);
  fs::resize_file(dir / "t.npy", fs::file_size(dir / "t.npy") - 4);
  EXPECT_THROW(read_npy((dir / "t.npy").string()), NpyError);
  EXPECT_THROW(write_npy((dir / "x.npy").string(), NpyArray{">f4", {1}, std::vector<unsigned char>(4)}), NpyError);
  EXPECT_THROW(write_npy((dir / "x.npy").string(), NpyArray{"<f4", {2}, std::vector<unsigned char>(4)}), NpyError);
}

// A shape whose byte count overflows 64 bits: 2^62 x 4 float32 wraps to 0 bytes, which an
// unchecked product would take as matching an empty data section.
TEST_F(BisectFiles, NpyRefusesAShapeWhoseSizeOverflows) {
  const std::string huge = "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }";
  write_raw_npy(dir / "empty.npy", huge, 0);
  EXPECT_THROW(read_npy((dir / "empty.npy").string()), NpyError);
  write_raw_npy(dir / "some.npy", huge, 50);
  try {
    read_npy((dir / "some.npy").string());
    ADD_FAILURE() << "an overflowing shape was read";
  } catch (const NpyError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("some.npy"), std::string::npos) << m;
    EXPECT_NE(m.find("more than 2^64"), std::string::npos) << m;
  }
  EXPECT_THROW(write_npy((dir / "w.npy").string(), NpyArray{"<f4", {std::int64_t{1} << 62, 4}, {}}),
               NpyError);
}

// A reproducer whose side B is the reference replays bit-exactly on a machine without a GPU
// (the kernel side's saved outputs are analysed as they are); a tampered reference output
// does not.
TEST_F(BisectFiles, ReplayOfTheReferenceSideNeedsNoGpu) {
  std::string why;
  if (cuda_device_available(&why)) GTEST_SKIP() << "a GPU is present: the replay reruns the kernel side";
  BisectOptions o;
  o.kernel = "naive";
  o.convention = "llama";
  o.against = "reference";
  o.against_convention = "gemma";
  Case c = fwd_case(2, 33);
  c.kernel = "naive";
  c.conv = Convention::llama;
  const TensorBytes in = generate_inputs(c);
  Case cb = c;
  cb.conv = Convention::gemma;
  write_reproducer(dir.string(), o, c, in, reference_outputs(c, in), reference_outputs(cb, in));
  const auto r = testing_support::run_bench({"bisect", "--replay", dir.string()});
  EXPECT_EQ(r.status, 1) << r.output;  // they diverge (llama against gemma)
  EXPECT_NE(r.output.find("B y: bit-exact"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("fp64 reference y: bit-exact"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("weight product"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("NOT REPRODUCED"), std::string::npos) << r.output;

  // Tamper with the saved reference side: the replay says so and exits 1.
  NpyArray b = read_npy((dir / "b_y.npy").string());
  b.data[0] ^= 1;
  write_npy((dir / "b_y.npy").string(), b);
  const auto t = testing_support::run_bench({"bisect", "--replay", dir.string()});
  EXPECT_EQ(t.status, 1) << t.output;
  EXPECT_NE(t.output.find("NOT REPRODUCED"), std::string::npos) << t.output;
}

TEST_F(BisectFiles, ReplayOfAnIdenticalPairExitsZero) {
  std::string why;
  if (cuda_device_available(&why)) GTEST_SKIP() << "a GPU is present: the replay reruns the kernel side";
  write_identical_pair();
  const auto r = replay();
  EXPECT_EQ(r.status, 0) << r.output;
}

// The replay reads every file before any GPU work, the saved fp64 reference included: a bad
// one is a usage error (exit 2) naming it, on any machine.
TEST_F(BisectFiles, ReplayRefusesAnUnreadableReferenceFile) {
  write_identical_pair();
  std::ofstream(dir / "ref_y.npy") << "garbage\n";
  const auto r = replay();
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("rmsnorm-bench bisect: " + (dir / "ref_y.npy").string()), std::string::npos)
      << r.output;
}

TEST_F(BisectFiles, ReplayRefusesAReferenceFileOfTheWrongDtypeOrShape) {
  write_identical_pair();
  const NpyArray ref = read_npy((dir / "ref_y.npy").string());  // <f8 of (3, 17)
  // float32 of the right shape: the bytes of half the elements, not a different reference.
  write_npy((dir / "ref_y.npy").string(),
            {"<f4", ref.shape,
             std::vector<unsigned char>(ref.data.begin(), ref.data.begin() + ref.data.size() / 2)});
  auto r = replay();
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("ref_y.npy: holds <f4 of shape (3, 17), the case needs <f8 of shape (3, 17)"),
            std::string::npos)
      << r.output;
  write_npy((dir / "ref_y.npy").string(), {"<f8", {17, 3}, ref.data});
  r = replay();
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("ref_y.npy: holds <f8 of shape (17, 3), the case needs <f8 of shape (3, 17)"),
            std::string::npos)
      << r.output;
}

// A case file the bisect wrote names x's dtype as rdtype for an op without a residual stream,
// and replays; one edited to a dtype option the case cannot read is refused, naming the file.
TEST_F(BisectFiles, ReplayRefusesADtypeOptionTheCaseDoesNotRead) {
  write_identical_pair();
  const std::string good = case_text(), x_dtype = "rdtype=\"bf16\"";
  const std::size_t at = good.find(x_dtype);
  ASSERT_NE(at, std::string::npos) << good;
  set_case_text(good.substr(0, at) + "rdtype=\"fp32\"" + good.substr(at + x_dtype.size()));
  const auto r = replay();
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(
      r.output.find("case.ini: --rdtype fp32: a residual stream is add's and add-bwd's only, not of fwd"),
      std::string::npos)
      << r.output;
}

// case.ini: every key once, each a key of the case; a refusal names the file and line.
TEST_F(BisectFiles, ReplayRefusesAMissingRepeatedOrUnknownKey) {
  write_identical_pair();
  const std::string good = case_text();  // 2 comment lines, then kernel= on line 3 ... seed= on line 18
  const std::size_t kernel_at = good.find("kernel=");
  ASSERT_NE(kernel_at, std::string::npos);
  set_case_text(good.substr(0, kernel_at) + good.substr(good.find('\n', kernel_at) + 1));
  auto r = replay();
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("case.ini: no kernel="), std::string::npos) << r.output;

  set_case_text(good + "M=\"2\"\n");  // M= is on line 13
  r = replay();
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("case.ini:19: M given again (first on line 13)"), std::string::npos) << r.output;

  set_case_text(good + "bogus=\"1\"\n");
  r = replay();
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("case.ini:19: 'bogus=\"1\"': no such key"), std::string::npos) << r.output;
}

// A side that cannot run the saved case is refused as on the command line (exit 2), before
// any GPU work, on a machine without a GPU too.
TEST_F(BisectFiles, ReplayRefusesASideThatCannotRunTheCase) {
  write_identical_pair();
  std::string text = case_text();
  text.replace(text.find("kernel=\"naive\""), std::strlen("kernel=\"naive\""), "kernel=\"cublas\"");
  text.replace(text.find("convention=\"fp32\""), std::strlen("convention=\"fp32\""), "convention=\"llama\"");
  set_case_text(text);
  const auto r = replay();
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("case.ini: cublas cannot run this case"), std::string::npos) << r.output;
}

// --replay takes the case from DIR/case.ini: the case options, and the options of a bisect's
// output, are refused with it rather than ignored; --device (the GPU it reruns on) is not.
TEST_F(BisectFiles, ReplayRefusesTheOptionsItDoesNotUse) {
  write_identical_pair();
  for (const std::vector<std::string>& extra : {std::vector<std::string>{"--kernel", "auto"},
                                                {"--H", "99"},
                                                {"--op", "bwd"},
                                                {"--against", "reference"}}) {
    std::vector<std::string> args{"bisect", "--replay", dir.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = testing_support::run_bench(args);
    EXPECT_EQ(r.status, 2) << extra[0] << ": " << r.output;
    EXPECT_NE(r.output.find(extra[0] + ": not with --replay, which takes the case from " + dir.string() +
                            "/case.ini"),
              std::string::npos)
        << r.output;
  }
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--out", (dir / "o").string()}, {"--no-shrink"}, {"--plots"}}) {
    std::vector<std::string> args{"bisect", "--replay", dir.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = testing_support::run_bench(args);
    EXPECT_EQ(r.status, 2) << extra[0] << ": " << r.output;
    EXPECT_NE(r.output.find(extra[0] + ": not with --replay"), std::string::npos) << r.output;
  }
  const auto r = testing_support::run_bench({"bisect", "--replay", dir.string(), "--device", "0"});
  EXPECT_NE(r.status, 2) << r.output;
}

// Without a GPU the bisect exits 3 and leaves no --out directory it created behind; an --out
// that cannot be written is still refused first (exit 2).
TEST_F(BisectFiles, NoGpuLeavesNoEmptyOutDirectory) {
  std::string why;
  if (cuda_device_available(&why)) GTEST_SKIP() << "a GPU is present: the bisect runs and writes --out";
  auto r =
      testing_support::run_bench({"bisect", "--kernel", "naive", "--out", (dir / "new" / "out").string()});
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_FALSE(fs::exists(dir / "new")) << r.output;
  fs::create_directories(dir / "kept");
  r = testing_support::run_bench({"bisect", "--kernel", "naive", "--out", (dir / "kept").string()});
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_TRUE(fs::is_directory(dir / "kept")) << "an --out that was there before is not removed";
  std::ofstream(dir / "file") << "x";
  r = testing_support::run_bench({"bisect", "--kernel", "naive", "--out", (dir / "file" / "out").string()});
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--out"), std::string::npos) << r.output;
}

TEST(BisectCli, BadInputExitsTwoBeforeAnyGpuWork) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"bisect", "--kernel", "no-such-kernel"},
        std::vector<std::string>{"bisect", "--against", "auto"},
        std::vector<std::string>{"bisect", "--kernel", "auto", "--convention", "nope"},
        std::vector<std::string>{"bisect", "--kernel", "cublas", "--convention", "llama"},
        std::vector<std::string>{"bisect", "--kernel", "auto", "--H", "0"},
        std::vector<std::string>{"bisect", "--replay", "/nonexistent-dir"}}) {
    const auto r = testing_support::run_bench(args);
    EXPECT_EQ(r.status, 2) << r.output;
  }
}

}  // namespace
}  // namespace rb

// `bisect --kernel A --against B [case options]`: where two kernels (or a kernel and the fp64
// reference under a convention) part, on the same inputs; a minimal reproducer directory;
// `bisect --replay DIR` reruns one (the reference side needs no GPU). Exit 0 they agree
// within the tolerance, 1 they diverge (or a replay did not reproduce), 2 usage, 3 no GPU,
// 4 CUDA error.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "harness/bisect.h"

namespace rb {

struct BisectOptions {
  std::string kernel;
  std::string against = "reference";
  std::string convention = "fp32";
  std::string against_convention;  // empty: --convention
  std::string op = "fwd";
  std::string dtype = "bf16";
  std::string wdtype = "same";
  std::string rdtype = "same";
  std::string ydtype = "same";
  double y_scale = 1.0;
  std::int64_t M = 64;
  std::int64_t H = 4096;
  double eps = 1e-5;
  std::string dist = "normal";
  std::string layout = "contiguous";
  std::uint64_t seed = 0x5eed;
  std::string out_dir = "bisect";
  bool no_shrink = false;
  bool plots = false;
  int device = 0;
  std::string replay;  // a reproducer directory
  std::string command_line;
};

CLI::App* setup_bisect(CLI::App& app, BisectOptions& o);
int run_bisect_command(const BisectOptions& o);

// Writes a reproducer directory for case c (A's case: its convention is o's): case.ini (o's
// sides and c's fields), every input as <tensor>.npy, each side's outputs as a_<tensor>.npy
// and b_<tensor>.npy, the fp64 reference under A's convention as ref_<tensor>.npy (float64),
// and command.txt. numpy has no bf16 or fp8: those hold their bits ('<u2', '|u1').
void write_reproducer(const std::string& dir, const BisectOptions& o, const Case& c, const TensorBytes& inputs,
                      const TensorBytes& out_a, const TensorBytes& out_b);

}  // namespace rb

// The mutants the registry must hold (kernels/mutants/): the classic RMSNorm bugs, one each
// (forward, residual add, backward). The CLI's tests and the registry's share this list.
#pragma once

#include <string>
#include <vector>

namespace rb::test {

inline const std::vector<std::string> kMutantNames = {
    "mutant-half-accum",       "mutant-eps-outside",          "mutant-weight-row-offset",
    "mutant-tail-store",       "mutant-tail-load",            "mutant-mean-sub",
    "mutant-pad-denominator",  "mutant-no-eps",               "mutant-stride-ignored",
    "mutant-warp-sum-only",    "mutant-residual-storage-dtype", "mutant-saved-rms",
    "mutant-residual-not-updated", "mutant-norm-of-x",        "mutant-dw-wrong-axis",
    "mutant-no-correction",    "mutant-dw-storage-accum",     "mutant-saved-as-rms",
    "mutant-correction-without-w", "mutant-dw-unnormalized", "mutant-one-row-a-block",
    "mutant-dw-partial-overwrite", "mutant-offset-32bit", "mutant-residual-in-place",
    "mutant-amax-plain-store", "mutant-amax-after-scale", "mutant-fp8-no-saturate"};

// The mutants only the wide preset (tensors past 4 GiB) can catch: the validation sweeps'
// tensors are far smaller, so their GPU test is the wide one (tests/gpu_kernels_test.cpp).
inline const std::vector<std::string> kWideOnlyMutants = {"mutant-offset-32bit"};

}  // namespace rb::test

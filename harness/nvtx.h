// RAII NVTX range (header-only NVTX 3 from the CUDA toolkit): costs nothing without a tool
// attached, names every case and launch in Nsight.
#pragma once

#include <nvtx3/nvToolsExt.h>

#include <string>

namespace rb {

class NvtxRange {
 public:
  explicit NvtxRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace rb

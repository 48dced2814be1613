// The CUDA device a run uses: opened once, described once (name, cc, SMs, L2, driver).
#pragma once

#include <cstdint>
#include <string>

namespace rb {

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::string cc;  // "9.0"
  int sms = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t total_mem = 0;
  std::string driver;   // "13.0"
  std::string runtime;  // "13.0"
};

// Selects and describes device `index`. Throws NoDeviceError naming the CUDA error when no
// driver or device is usable, or when index is out of range.
DeviceInfo open_device(int index);

// True when a CUDA device can be opened; `why` receives the CUDA error otherwise.
bool cuda_device_available(std::string* why);

}  // namespace rb

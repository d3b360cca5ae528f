// The GPU the CUDA backend runs on: whether one is usable, and what it is. Errors are kNoDevice
// (the CLI's exit 4) with the CUDA runtime's own reason.
#pragma once

#include <cstdint>
#include <string>

#include "util/status.h"

namespace memopt::cuda {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  uint64_t total_bytes = 0;
  uint64_t free_bytes = 0;      ///< cudaMemGetInfo when probed
  std::string runtime_version;  ///< "13.0"
  std::string driver_version;
};

/// Opens device `index` (creating its context). kNoDevice when the runtime finds no GPU, the
/// driver is missing or too old, or `index` is out of range.
Expected<DeviceInfo> ProbeDevice(int index = 0);

/// "NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB, CUDA 13.0 runtime / 13.0 driver)"
std::string Describe(const DeviceInfo& info);

}  // namespace memopt::cuda

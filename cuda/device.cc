#include "device.h"

#include <cuda_runtime_api.h>

#include <fmt/format.h>

#include "util/bytes.h"

namespace memopt::cuda {

namespace {

std::string VersionText(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

Status NoDevice(const std::string& what, cudaError_t err) {
  return Status(ErrorCode::kNoDevice, fmt::format("no usable GPU: {} failed: {} ({})", what, cudaGetErrorString(err),
                                                  cudaGetErrorName(err)));
}

}  // namespace

Expected<DeviceInfo> ProbeDevice(int index) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) return NoDevice("cudaGetDeviceCount", err);
  if (count == 0) return Status(ErrorCode::kNoDevice, "no usable GPU: the CUDA runtime sees no device");
  if (index < 0 || index >= count) {
    return Status(ErrorCode::kNoDevice,
                  fmt::format("no usable GPU: device {} does not exist ({} device{} present)", index, count,
                              count == 1 ? "" : "s"));
  }
  if ((err = cudaSetDevice(index)) != cudaSuccess) return NoDevice("cudaSetDevice", err);
  cudaDeviceProp prop{};
  if ((err = cudaGetDeviceProperties(&prop, index)) != cudaSuccess) return NoDevice("cudaGetDeviceProperties", err);
  DeviceInfo info;
  info.index = index;
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.total_bytes = prop.totalGlobalMem;
  size_t free_bytes = 0, total_bytes = 0;
  if ((err = cudaMemGetInfo(&free_bytes, &total_bytes)) != cudaSuccess) return NoDevice("cudaMemGetInfo", err);
  info.free_bytes = free_bytes;
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  info.runtime_version = VersionText(runtime);
  info.driver_version = VersionText(driver);
  return info;
}

std::string Describe(const DeviceInfo& info) {
  return fmt::format("{} (sm_{}{}, {} SMs, {}, CUDA {} runtime / {} driver)", info.name, info.cc_major, info.cc_minor,
                     info.sm_count, HumanBytes(static_cast<int64_t>(info.total_bytes)), info.runtime_version,
                     info.driver_version);
}

}  // namespace memopt::cuda

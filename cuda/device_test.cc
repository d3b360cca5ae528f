// The probe: an error naming the reason where there is no GPU (always checked), the device
// description where there is one (skipped elsewhere).
#include "device.h"

#include <catch2/catch.hpp>

#include "test_skip.h"

namespace memopt::cuda {
namespace {

TEST_CASE("cuda device: probe finds a usable GPU or says why there is none", "[cuda]") {
  auto info = ProbeDevice(0);
  if (info.ok()) {
    CHECK_FALSE(info->name.empty());
    return;
  }
  CHECK(info.status().code() == ErrorCode::kNoDevice);
  CHECK(info.status().message().rfind("no usable GPU: ", 0) == 0);
}

TEST_CASE("cuda device: probe names the GPU", "[cuda][gpu]") {
  auto info = ProbeDevice(0);
  if (!info.ok()) {
    memopt::testing::MarkSkipped(info.status().message());
    return;
  }
  CHECK_FALSE(info->name.empty());
  CHECK(info->cc_major >= 7);
  CHECK(info->total_bytes > 0);
  CHECK(info->free_bytes <= info->total_bytes);
  CHECK(Describe(*info).find(info->name) == 0);
  auto missing = ProbeDevice(1 << 20);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message().find("does not exist") != std::string::npos);
}

}  // namespace
}  // namespace memopt::cuda

// Runs wherever a GPU is; elsewhere each case says why it did nothing.
#include "device.h"

#include <catch2/catch.hpp>

namespace memopt::cuda {
namespace {

TEST_CASE("cuda device: probe names the GPU or says why there is none", "[cuda][gpu]") {
  auto info = ProbeDevice(0);
  if (!info.ok()) {
    CHECK(info.status().code() == ErrorCode::kNoDevice);
    CHECK(info.status().message().rfind("no usable GPU: ", 0) == 0);
    WARN("skipped: " << info.status().message());
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

// DevicePool and DeviceTensor on a real GPU: exact requested bytes, reuse of freed blocks, and
// upload/download round trips of awkward sizes. Skips with the probe's reason without a GPU.
#include <cstring>

#include <catch2/catch.hpp>

#include "helpers/cuda_test_util.h"
#include "device_tensor.h"

namespace memopt::cuda {
namespace {

TEST_CASE("cuda pool: without a GPU, creating a pool is a kNoDevice error, not a crash (host side)", "[cuda]") {
  auto pool = DevicePool::Create();
  if (testing::NoGpuReason().empty()) {
    CHECK(pool.ok());
    return;
  }
  REQUIRE_FALSE(pool.ok());
  CHECK(pool.status().code() == ErrorCode::kNoDevice);
  CHECK(pool.status().message().rfind("no usable GPU: cudaMemGetInfo failed: ", 0) == 0);
}

TEST_CASE("cuda pool: blocks return to the pool when the last handle goes", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  auto pool = DevicePool::Create();
  INFO(pool.status().message());
  REQUIRE(pool.ok());
  std::shared_ptr<DevicePool> p = *pool;
  {
    auto a = DeviceTensor::Empty(p, DataType::kFloat, {1023});
    REQUIRE(a.ok());
    DeviceTensor copy = *a;  // shares the block
    CHECK(p->stats().requested == 1023 * 4);
    *a = DeviceTensor();
    CHECK(p->stats().requested == 1023 * 4);  // the copy still holds it
  }
  CHECK(p->stats().requested == 0);
  CHECK(p->stats().peak_requested == 1023 * 4);
  auto b = DeviceTensor::Empty(p, DataType::kFloat16, {2000});  // 4000 bytes: same 4096-byte class
  REQUIRE(b.ok());
  CHECK(p->stats().reuses == 1);
  CHECK(p->stats().raw_allocations == 1);
  auto free_now = p->FreeBytesNow();
  REQUIRE(free_now.ok());
  CHECK(*free_now <= p->free_bytes_at_start());
}

TEST_CASE("cuda tensor: upload and download round-trip every size and type", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  auto pool = DevicePool::Create();
  REQUIRE(pool.ok());
  uint32_t seed = 1;
  for (DataType t : {DataType::kFloat, DataType::kFloat16, DataType::kBfloat16, DataType::kInt64, DataType::kBool}) {
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{1023}, int64_t{4097}}) {
      Tensor host = testing::RandomTensor(t, {n}, seed++);
      auto dev = DeviceTensor::Upload(*pool, host);
      REQUIRE(dev.ok());
      CHECK(dev->bytes() == host.bytes());
      auto back = dev->Download();
      REQUIRE(back.ok());
      REQUIRE(back->Describe() == host.Describe());
      CHECK(std::memcmp(back->raw(), host.raw(), static_cast<size_t>(host.bytes())) == 0);
    }
  }
}

}  // namespace
}  // namespace memopt::cuda

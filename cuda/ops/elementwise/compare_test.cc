// Equal on the GPU against the CPU kernel, bit for bit (bool outputs): same shapes and broadcast
// ones, float types and int64, with operands that agree on some elements (random values alone
// would never be equal). Skipped with the probe's reason without a GPU.
#include <catch2/catch.hpp>

#include <cstring>

#include "helpers/cuda_test_util.h"

namespace memopt::cuda {
namespace {

using memopt::testing::KernelCall;
using testing::CompareWithCpu;
using testing::RandomTensor;

/// `b` with its first elements replaced by the matching elements of `a` read with `a_stride`
/// (so that Equal finds some equal pairs under broadcasting too).
Tensor Agreeing(const Tensor& a, Tensor b, int64_t count) {
  const int64_t size = a.bytes() / a.numel();
  for (int64_t i = 0; i < count && i < b.numel() && i < a.numel(); ++i) {
    std::memcpy(static_cast<char*>(b.raw()) + i * size, static_cast<const char*>(a.raw()) + i * size,
                static_cast<size_t>(size));
  }
  return b;
}

TEST_CASE("cuda elementwise: Equal matches the CPU, broadcasting included", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  uint32_t seed = 900;
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{7}, {7}}, {{3, 1023}, {3, 1023}}, {{4, 6}, {6}}, {{4, 1}, {1, 6}}, {{2, 3, 5}, {}}, {{5}, {2, 3, 5}}};
  for (DataType t : testing::kFloatTypes) {
    for (const auto& [sa, sb] : shapes) {
      KernelCall call("", "Equal");
      Tensor a = RandomTensor(t, sa, seed++);
      call.Input(a);
      call.Input(Agreeing(a, RandomTensor(t, sb, seed++), 3));
      INFO("Equal " << call.inputs[0]->Describe() << " vs " << call.inputs[1]->Describe());
      CompareWithCpu(call, 0.0);
    }
  }
  KernelCall ints("", "Equal");
  Tensor a(DataType::kInt64, {2, 4}), b(DataType::kInt64, {4});
  for (int64_t i = 0; i < 8; ++i) a.data<int64_t>()[i] = i % 3;
  for (int64_t i = 0; i < 4; ++i) b.data<int64_t>()[i] = i;
  ints.Input(a).Input(b);
  CompareWithCpu(ints, 0.0);
}

}  // namespace
}  // namespace memopt::cuda

// com.microsoft DivGrad on the GPU against the CPU kernel: same shapes, a broadcast divisor (a
// normalisation's [N, 1]), a broadcast numerator, a scalar and a bias row over a batch, each output
// alone and both, in float32, float16 and bfloat16. Both backends add the terms in double in dY's
// order. Skipped with the probe's reason without a GPU.
#include <catch2/catch.hpp>

#include "elem_type.h"
#include "helpers/cuda_test_util.h"

namespace memopt::cuda {
namespace {

using memopt::testing::KernelCall;
using testing::CompareWithCpu;
using testing::RandomTensor;

TEST_CASE("cuda elementwise: DivGrad matches the CPU, broadcast reductions included", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  uint32_t seed = 1100;
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{7}, {7}}, {{6, 300}, {6, 1}}, {{1, 300}, {6, 300}}, {{4, 5}, {}}, {{8, 3, 64}, {64}}, {{2, 1, 5}, {1, 3, 1}}};
  for (DataType t : testing::kFloatTypes) {
    for (const auto& [sa, sb] : shapes) {
      std::vector<int64_t> sy = *BroadcastShapes(sa, sb);
      for (const char* outputs : {"both", "dA", "dB"}) {
        KernelCall call("com.microsoft", "DivGrad", 0);
        call.Output(std::string(outputs) == "dB" ? "" : "dA").Output(std::string(outputs) == "dA" ? "" : "dB");
        call.Input(RandomTensor(t, sy, seed++));
        call.Input(RandomTensor(t, sa, seed++));
        call.Input(RandomTensor(t, sb, seed++));
        INFO("DivGrad " << outputs << ": A " << call.inputs[1]->Describe() << ", B " << call.inputs[2]->Describe());
        CompareWithCpu(call, testing::TypeTol(t));
      }
    }
  }
}

}  // namespace
}  // namespace memopt::cuda

// Neg and Exp on the GPU against the CPU kernels, in float32, float16 and bfloat16 on random
// non-zero inputs (Neg bit for bit; Exp within the type's rounding, the CPU's vectorised exp and
// CUDA's expf may differ in the last place). Skipped with the probe's reason without a GPU.
#include <catch2/catch.hpp>

#include "helpers/cuda_test_util.h"

namespace memopt::cuda {
namespace {

using memopt::testing::KernelCall;
using testing::CompareWithCpu;
using testing::RandomTensor;

TEST_CASE("cuda elementwise: Neg and Exp match the CPU", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  uint32_t seed = 700;
  for (DataType t : testing::kFloatTypes) {
    for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{1}, {7}, {3, 1023}, {2, 4097}}) {
      KernelCall neg("", "Neg");
      neg.Input(RandomTensor(t, shape, seed++));
      INFO("Neg " << neg.inputs[0]->Describe());
      CompareWithCpu(neg, 0.0);
      KernelCall exp("", "Exp");
      exp.Input(RandomTensor(t, shape, seed++));
      INFO("Exp " << exp.inputs[0]->Describe());
      CompareWithCpu(exp, testing::TypeTol(t));
    }
  }
}

}  // namespace
}  // namespace memopt::cuda

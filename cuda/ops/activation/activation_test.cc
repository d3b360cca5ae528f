// The activation CUDA kernels (Relu, ReluGrad, the Gelu family and its gradients) against the CPU
// reference kernels on random non-zero inputs of awkward sizes, in float32, float16 and bfloat16;
// skipped with the probe's reason where no GPU is usable.
#include <algorithm>

#include <catch2/catch.hpp>

#include "helpers/cuda_test_util.h"
#include "elem_type.h"

namespace memopt::cuda {
namespace {

using memopt::testing::KernelCall;
using testing::CompareWithCpu;
using testing::RandomTensor;
using testing::TypeTol;

using testing::kFloatTypes;
const int64_t kSizes[] = {1, 7, 1023, 4097};

TEST_CASE("cuda kernels: Relu and the Gelu family match the CPU", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  uint32_t seed = 100;
  for (DataType t : kFloatTypes) {
    for (int64_t n : kSizes) {
      const std::vector<int64_t> shape = {n};
      const std::vector<int64_t> shape2 = {3, n};
      {
        KernelCall call("", "Relu");
        call.Input(RandomTensor(t, shape2, seed++));
        CompareWithCpu(call, 0.0);
      }
      for (const char* approximate : {"none", "tanh"}) {
        KernelCall call("", "Gelu");
        call.Version(20).String("approximate", approximate).Input(RandomTensor(t, shape2, seed++));
        INFO("Gelu " << approximate << " " << call.inputs[0]->Describe());
        CompareWithCpu(call, TypeTol(t));
      }
      for (const char* op : {"Gelu", "FastGelu"}) {
        KernelCall call("com.microsoft", op);
        call.Input(RandomTensor(t, shape2, seed++));
        INFO(op << " " << call.inputs[0]->Describe());
        CompareWithCpu(call, TypeTol(t));
      }
      for (const char* op : {"BiasGelu", "FastGelu"}) {
        KernelCall call("com.microsoft", op);
        call.Input(RandomTensor(t, shape2, seed++));
        call.Input(RandomTensor(t, shape, seed++));
        INFO(op << " with bias " << call.inputs[0]->Describe());
        CompareWithCpu(call, TypeTol(t));
      }
      for (const char* op : {"ReluGrad", "GeluGrad", "FastGeluGrad"}) {
        KernelCall call("com.microsoft", op);
        call.Input(RandomTensor(t, shape2, seed++));
        call.Input(RandomTensor(t, shape2, seed++));
        INFO(op << " " << call.inputs[0]->Describe());
        CompareWithCpu(call, TypeTol(t));
      }
      for (const char* op : {"BiasGeluGrad_dX", "BiasFastGeluGrad_dX"}) {
        KernelCall call("com.microsoft", op);
        call.Input(RandomTensor(t, shape2, seed++));
        call.Input(RandomTensor(t, shape2, seed++));
        call.Input(RandomTensor(t, shape, seed++));
        INFO(op << " " << call.inputs[0]->Describe());
        CompareWithCpu(call, TypeTol(t));
      }
    }
  }
}

}  // namespace
}  // namespace memopt::cuda

// Each CUDA kernel against the CPU reference kernel (KernelRegistry::Cpu()) on random non-zero
// inputs of awkward sizes and broadcasting shapes, in float32, float16 and bfloat16. The GPU
// cases skip with the probe's reason where no GPU is usable; the host-side pieces (broadcast
// description, registry, CheckSupported) run everywhere.
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

TEST_CASE("cuda kernels: broadcast description (host side)", "[cuda]") {
  auto out = BroadcastShapes({3, 1, 5}, {4, 1});
  REQUIRE(out.ok());
  CHECK(*out == std::vector<int64_t>{3, 4, 5});
  auto bc = MakeBroadcast({3, 1, 5}, {4, 1}, *out);
  REQUIRE(bc.ok());
  REQUIRE(bc->rank == 3);
  CHECK(bc->a_strides[0] == 5);
  CHECK(bc->a_strides[1] == 0);
  CHECK(bc->a_strides[2] == 1);
  CHECK(bc->b_strides[0] == 0);
  CHECK(bc->b_strides[1] == 1);
  CHECK(bc->b_strides[2] == 0);
  // Dims of size 1 are dropped; a scalar broadcasts with stride 0.
  auto scalar = MakeBroadcast({}, {1, 7}, {1, 7});
  REQUIRE(scalar.ok());
  CHECK(scalar->rank == 1);
  CHECK(scalar->a_strides[0] == 0);
  CHECK(scalar->b_strides[0] == 1);
  auto bad = BroadcastShapes({3, 2}, {4});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == "shapes [3, 2] and [4] do not broadcast");
  CHECK_FALSE(MakeBroadcast({2, 2, 2, 2, 2, 2, 2, 2, 2}, {2}, {2, 2, 2, 2, 2, 2, 2, 2, 2}).ok());
}

TEST_CASE("cuda kernels: the registry lists the first kernels (host side)", "[cuda]") {
  const auto names = CudaKernelRegistry::Builtin().OpNames();
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Relu", "Gelu", "Cast", "MatMul", "Gemm", "com.microsoft::Gelu",
                         "com.microsoft::FastGelu", "com.microsoft::BiasGelu", "com.microsoft::GeluGrad",
                         "com.microsoft::FastGeluGrad", "com.microsoft::BiasGeluGrad_dX",
                         "com.microsoft::BiasFastGeluGrad_dX"}) {
    INFO(op);
    CHECK(std::find(names.begin(), names.end(), op) != names.end());
  }
}

TEST_CASE("cuda kernels: Add/Sub/Mul/Div match the CPU bit for bit", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{1}, {1}},         {{7}, {7}},       {{1023}, {1023}},  {{4097}, {4097}},   {{3, 1, 5}, {4, 1}},
      {{7, 1023}, {1023}}, {{1}, {4097}},   {{}, {7}},         {{2, 3, 4, 5}, {3, 1, 5}}, {{4097, 1}, {1, 3}}};
  uint32_t seed = 1;
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    for (DataType t : kFloatTypes) {
      for (const auto& [sa, sb] : shapes) {
        KernelCall call("", op);
        call.Input(RandomTensor(t, sa, seed++));
        call.Input(RandomTensor(t, sb, seed++));
        INFO(op << " " << call.inputs[0]->Describe() << " " << call.inputs[1]->Describe());
        CompareWithCpu(call, 0.0);
      }
    }
  }
}

TEST_CASE("cuda kernels: Cast matches the CPU for every type pair", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  const DataType types[] = {DataType::kFloat, DataType::kFloat16, DataType::kBfloat16, DataType::kDouble,
                            DataType::kInt32, DataType::kInt64, DataType::kBool};
  uint32_t seed = 300;
  for (DataType from : types) {
    for (DataType to : types) {
      for (int64_t n : {int64_t{1}, int64_t{1023}, int64_t{4097}}) {
        // Values up to +-2000 so integer targets see more than 0 and +-1.
        Tensor x = RandomTensor(DataType::kDouble, {n}, seed++);
        Tensor in(from, {n});
        for (int64_t i = 0; i < n; ++i) in.SetFromDouble(i, x.GetAsDouble(i) * 1000.0);
        KernelCall call("", "Cast");
        call.Int("to", static_cast<int64_t>(to)).Input(in);
        INFO(DataTypeName(from) << " -> " << DataTypeName(to) << ", n = " << n);
        CompareWithCpu(call, 0.0);
      }
    }
  }
}

}  // namespace
}  // namespace memopt::cuda

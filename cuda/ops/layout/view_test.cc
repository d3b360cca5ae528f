// view.cc against the CPU reference: the output shapes (and errors) come from the CPU
// kernels run on metadata, the view ops share the input's block, Shape and Size upload a
// mirrored int64 result.
#include <algorithm>

#include <catch2/catch.hpp>

#include "helpers/cuda_test_util.h"

namespace memopt::cuda {
namespace {

using memopt::testing::I64;
using memopt::testing::KernelCall;
using testing::CompareWithCpu;
using testing::RandomTensor;

TEST_CASE("cuda view kernels: the registry lists them (host side)", "[cuda]") {
  const auto names = CudaKernelRegistry::Builtin().OpNames();
  for (const char* op :
       {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Shape", "Size", "Identity", "com.microsoft::YieldOp"}) {
    INFO(op);
    CHECK(std::find(names.begin(), names.end(), op) != names.end());
  }
}

TEST_CASE("cuda view kernels: shapes and values match the CPU", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  const Tensor x = RandomTensor(DataType::kFloat16, {3, 1, 5, 7}, 1);
  CompareWithCpu(KernelCall("", "Reshape").Input(x).Input(I64({3}, {0, -1, 7})), 0);
  CompareWithCpu(KernelCall("", "Flatten").Input(x).Int("axis", -2), 0);
  CompareWithCpu(KernelCall("", "Squeeze").Input(x).Input(I64({1}, {-3})).Version(13), 0);
  CompareWithCpu(KernelCall("", "Squeeze").Input(x).Version(13), 0);
  CompareWithCpu(KernelCall("", "Unsqueeze").Input(x).Input(I64({2}, {0, -1})).Version(13), 0);
  CompareWithCpu(KernelCall("", "Unsqueeze").Input(x).Ints("axes", {1}).Version(11), 0);
  CompareWithCpu(KernelCall("", "Shape").Input(x).Int("start", 1).Int("end", -1).Version(15), 0);
  CompareWithCpu(KernelCall("", "Size").Input(x), 0);
  CompareWithCpu(KernelCall("", "Identity").Input(RandomTensor(DataType::kInt64, {4, 9}, 2)), 0);
}

TEST_CASE("cuda view kernels: YieldOp feeds the CPU's incoming gradients", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  // Module outputs: a [3, 5] activation (random gradient), a non-differentiable mask, a scalar
  // loss (gradient 1); bit-identical to the CPU (the values are made on the host).
  KernelCall call("com.microsoft", "YieldOp", 2);
  call.Input(RandomTensor(DataType::kFloat16, {3, 5}, 4))
      .Input(RandomTensor(DataType::kFloat, {2}, 5))
      .Input(RandomTensor(DataType::kFloat, {1}, 6))
      .Ints("non_differentiable_outputs", {1});
  CompareWithCpu(call, 0);
}

TEST_CASE("cuda view kernels: Reshape shares the block and reports the CPU's errors", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  auto pool = DevicePool::Create();
  REQUIRE(pool.ok());
  auto x = DeviceTensor::Upload(*pool, RandomTensor(DataType::kFloat, {4, 6}, 3));
  REQUIRE(x.ok());
  auto shape = DeviceTensor::Upload(*pool, I64({2}, {3, -1}));
  REQUIRE(shape.ok());
  REQUIRE(shape->host_mirror() != nullptr);
  KernelCall call("", "Reshape");
  CudaKernelContext ctx;
  ctx.node = &call.node;
  ctx.pool = *pool;
  ctx.inputs = {&*x, &*shape};
  ctx.outputs.resize(1);
  const CudaKernelFn fn = CudaKernelRegistry::Builtin().Find("", "Reshape");
  REQUIRE(fn != nullptr);
  REQUIRE(fn(ctx).ok());
  CHECK(ctx.outputs[0].shape() == std::vector<int64_t>{3, 8});
  CHECK(ctx.outputs[0].raw() == x->raw());

  auto bad = DeviceTensor::Upload(*pool, I64({2}, {5, -1}));
  REQUIRE(bad.ok());
  ctx.inputs = {&*x, &*bad};
  Status s = fn(ctx);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("cannot reshape float[4, 6]") != std::string::npos);
}

}  // namespace
}  // namespace memopt::cuda

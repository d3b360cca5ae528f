// Softmax, LogSoftmax, their gradients and the softmax cross-entropy ops against the CPU
// reference on random non-zero inputs of awkward sizes: row lengths
// 1, 7, 1023, 4097 and 50257, rows along the last, a middle and a negative axis, the opset < 13
// 2-D view, BiasSoftmax's two broadcasts, and the cross-entropy losses and their gradients with
// every reduction, weights, ignored labels, int32/int64 labels and labels with and without a host
// mirror (more than DeviceTensor::kMirrorMaxElements).
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "helpers/cuda_test_util.h"

namespace memopt::cuda {
namespace {

using memopt::testing::KernelCall;
using testing::CompareWithCpu;
using testing::RandomTensor;
using testing::TypeTol;

constexpr const char* kMs = "com.microsoft";
using testing::kFloatTypes;

struct AxisCase {
  std::vector<int64_t> shape;
  int64_t axis;
};

// Single-axis rows (opset >= 13, the _13 gradients). Between them they take every group size of
// softmax_rows.cuh: a thread per row (short rows; many middle-axis rows), a warp per row, a block
// per row (contiguous and strided).
const AxisCase kAxisCases[] = {
    {{5, 1}, -1},      {{9, 7}, 1},          {{3, 1023}, -1},     {{2, 4097}, 1},     {{2, 50257}, -1},
    {{3000, 7}, -1},   {{600, 33}, 1},       {{3, 7, 5}, 1},      {{2, 1023, 3}, -2}, {{4, 33, 300}, 1},
    {{64, 17, 200}, -2}, {{1, 4097, 40}, 1}, {{2, 3, 4, 9}, -3},
};

// The opset < 13 view: rows are shape[axis:] flattened.
const AxisCase kCoercedCases[] = {{{3, 4, 5}, 1}, {{3, 4, 5}, -1}, {{3, 4, 5}, 0}, {{2, 3, 1023}, 1}, {{7}, 0},
                                  {{2, 4097}, -1}};

std::string Text(const std::vector<int64_t>& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

/// Random values in [0.25, 2] (class weights: a positive sum keeps the mean well conditioned).
Tensor PositiveTensor(DataType dtype, std::vector<int64_t> shape, uint32_t seed) {
  Tensor t = RandomTensor(dtype, std::move(shape), seed);
  for (int64_t i = 0; i < t.numel(); ++i) t.SetFromDouble(i, std::fabs(t.GetAsDouble(i)));
  return t;
}

TEST_CASE("cuda softmax: the registry lists the softmax and cross-entropy ops (host side)", "[cuda]") {
  const auto names = CudaKernelRegistry::Builtin().OpNames();
  for (const char* op : {"Softmax", "LogSoftmax", "SoftmaxCrossEntropyLoss", "com.microsoft::BiasSoftmax",
                         "com.microsoft::SoftmaxGrad", "com.microsoft::SoftmaxGrad_13",
                         "com.microsoft::LogSoftmaxGrad", "com.microsoft::LogSoftmaxGrad_13",
                         "com.microsoft::SoftmaxCrossEntropyLossInternal",
                         "com.microsoft::SoftmaxCrossEntropyLossInternalGrad",
                         "com.microsoft::SoftmaxCrossEntropyLossGrad"}) {
    INFO(op);
    CHECK(std::find(names.begin(), names.end(), op) != names.end());
  }
}

TEST_CASE("cuda softmax: Softmax and LogSoftmax match the CPU on every axis and opset", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  uint32_t seed = 1;
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (DataType t : kFloatTypes) {
      for (const auto& c : kAxisCases) {
        KernelCall call("", op);
        call.Version(13).Int("axis", c.axis).Input(RandomTensor(t, c.shape, seed++));
        INFO(op << " opset 13 axis " << c.axis << " " << call.inputs[0]->Describe());
        CompareWithCpu(call, TypeTol(t));
      }
      for (const auto& c : kCoercedCases) {
        KernelCall call("", op);
        call.Version(11).Int("axis", c.axis).Input(RandomTensor(t, c.shape, seed++));
        INFO(op << " opset 11 axis " << c.axis << " " << call.inputs[0]->Describe());
        CompareWithCpu(call, TypeTol(t));
      }
      {  // defaults: axis 1 with the 2-D view before opset 13, -1 from 13 (and for an unknown opset)
        for (int version : {1, 11, 13, 0}) {
          KernelCall call("", op);
          call.Version(version).Input(RandomTensor(t, {3, 4, 5}, seed++));
          INFO(op << " default axis, opset " << version);
          CompareWithCpu(call, TypeTol(t));
        }
      }
      {  // rank 0 is a row of one
        KernelCall call("", op);
        call.Version(13).Input(RandomTensor(t, {}, seed++));
        CompareWithCpu(call, TypeTol(t));
      }
    }
  }
}

TEST_CASE("cuda softmax: BiasSoftmax matches the CPU in both broadcast modes", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  uint32_t seed = 1000;
  for (DataType t : kFloatTypes) {
    for (int64_t e : {int64_t{1}, int64_t{7}, int64_t{1023}, int64_t{4097}}) {
      // [2, 3, e] at axis 2: bias [2, 1, e] is broadcast over the inner dim 3 (row r uses bias
      // row r / 3), bias [1, 3, e] over the outer dim (row r uses r % 3).
      for (int inner : {1, 0}) {
        const std::vector<int64_t> bias_shape = inner ? std::vector<int64_t>{2, 1, e} : std::vector<int64_t>{1, 3, e};
        KernelCall call(kMs, "BiasSoftmax");
        call.Int("axis", 2).Int("is_inner_broadcast", inner);
        call.Input(RandomTensor(t, {2, 3, e}, seed++));
        call.Input(RandomTensor(t, bias_shape, seed++));
        INFO("BiasSoftmax e " << e << " is_inner_broadcast " << inner);
        CompareWithCpu(call, TypeTol(t));
      }
    }
    {  // axis 1 flattens the tail into rows of 15; a negative axis
      KernelCall call(kMs, "BiasSoftmax");
      call.Int("axis", -2).Int("is_inner_broadcast", 0);
      call.Input(RandomTensor(t, {4, 3, 5}, seed++));
      call.Input(RandomTensor(t, {1, 3, 5}, seed++));
      CompareWithCpu(call, TypeTol(t));
    }
    {  // a float32 bias on float16/bfloat16 data: computed in float, as the CPU
      KernelCall call(kMs, "BiasSoftmax");
      call.Int("axis", 1).Int("is_inner_broadcast", 1);
      call.Input(RandomTensor(t, {6, 1023}, seed++));
      call.Input(RandomTensor(DataType::kFloat, {2, 1023}, seed++));
      CompareWithCpu(call, TypeTol(t));
    }
  }
}

TEST_CASE("cuda softmax: SoftmaxGrad and LogSoftmaxGrad (opset 11 and 13 forms) match the CPU", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  uint32_t seed = 2000;
  for (const char* base : {"SoftmaxGrad", "LogSoftmaxGrad"}) {
    for (DataType t : kFloatTypes) {
      const std::string op13 = std::string(base) + "_13";
      for (const auto& c : kAxisCases) {
        KernelCall call(kMs, op13);
        call.Int("axis", c.axis);
        call.Input(RandomTensor(t, c.shape, seed++));
        call.Input(RandomTensor(t, c.shape, seed++));
        INFO(op13 << " axis " << c.axis << " " << Text(c.shape));
        CompareWithCpu(call, TypeTol(t));
      }
      for (const auto& c : kCoercedCases) {
        KernelCall call(kMs, base);
        call.Int("axis", c.axis);
        call.Input(RandomTensor(t, c.shape, seed++));
        call.Input(RandomTensor(t, c.shape, seed++));
        INFO(base << " axis " << c.axis << " " << Text(c.shape));
        CompareWithCpu(call, TypeTol(t));
      }
      for (const std::string& op : {std::string(base), op13}) {  // default axes: 1 and -1
        KernelCall call(kMs, op);
        call.Input(RandomTensor(t, {3, 4, 5}, seed++));
        call.Input(RandomTensor(t, {3, 4, 5}, seed++));
        INFO(op << " default axis");
        CompareWithCpu(call, TypeTol(t));
      }
    }
    {  // dY and the forward output of different types: computed in float, as the CPU
      KernelCall call(kMs, std::string(base) + "_13");
      call.Input(RandomTensor(DataType::kFloat16, {5, 1023}, seed++));
      call.Input(RandomTensor(DataType::kFloat, {5, 1023}, seed++));
      CompareWithCpu(call, TypeTol(DataType::kFloat16));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Cross entropy.

struct SceShape {
  std::vector<int64_t> scores;  ///< [N, C, D1..Dk]
};
// Rows of 1, 7, 1023, 4097 and 50257 classes; class axis 1 with trailing dims; and label tensors
// above kMirrorMaxElements (checked on the device only).
// Contiguous rows (2-D scores) take the block-per-row kernels: rows of every 16-byte offset
// (7, 1023, 4097, 50257 classes), rows of whole vectors (4096), and rows too long for shared
// memory in the forward (130,000: the group kernels). [N, C, D] scores take the group kernels.
const SceShape kSceShapes[] = {{{7, 1}},        {{9, 7}},          {{5, 1023}},   {{3, 4097}},
                               {{2, 50257}},    {{5, 7, 3}},       {{2, 1023, 3}}, {{3, 4, 2, 1000}},
                               {{4099, 7}},     {{6, 4096}},       {{2, 130000}}};

struct SceVariant {
  DataType label_type;
  bool weights;
  int ignore;  ///< 0: no ignore_index; 1: -100, on every 5th label; 2: class 1, on every 7th label
};
const SceVariant kSceVariants[] = {
    {DataType::kInt64, false, 0}, {DataType::kInt32, true, 1}, {DataType::kInt64, true, 2}, {DataType::kInt32, false, 1}};

int64_t IgnoreIndex(int mode) { return mode == 1 ? -100 : 1; }

Tensor Labels(DataType type, const std::vector<int64_t>& scores, int ignore_mode, uint32_t seed) {
  std::vector<int64_t> shape = {scores[0]};
  shape.insert(shape.end(), scores.begin() + 2, scores.end());
  const int64_t classes = scores[1];
  Tensor t(type, shape);
  uint64_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    int64_t y = static_cast<int64_t>((s >> 33) % static_cast<uint64_t>(classes));
    if (ignore_mode == 1 && i % 5 == 2) y = -100;
    if (ignore_mode == 2 && i % 7 == 3 && classes > 1) y = 1;
    t.SetFromDouble(i, static_cast<double>(y));
  }
  return t;
}

TEST_CASE("cuda softmax: SoftmaxCrossEntropyLoss(Internal) matches the CPU", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  uint32_t seed = 3000;
  for (DataType t : kFloatTypes) {
    for (const auto& shape : kSceShapes) {
      for (const char* reduction : {"none", "sum", "mean"}) {
        for (const auto& v : kSceVariants) {
          const int64_t classes = shape.scores[1];
          Tensor scores = RandomTensor(t, shape.scores, seed++);
          Tensor labels = Labels(v.label_type, shape.scores, v.ignore, seed++);
          std::optional<Tensor> weights;
          if (v.weights) weights = PositiveTensor(t, {classes}, seed++);
          INFO("scores " << scores.Describe() << " labels " << labels.Describe() << " reduction " << reduction
                         << " weights " << v.weights << " ignore mode " << v.ignore);
          {
            KernelCall call(kMs, "SoftmaxCrossEntropyLossInternal", 2);
            call.String("reduction", reduction).Input(scores).Input(labels).Input(weights);
            if (v.ignore != 0) call.Input(memopt::testing::I64({}, {IgnoreIndex(v.ignore)}));
            CompareWithCpu(call, TypeTol(t));
          }
          {  // the ONNX op: ignore_index an attribute; log_prob only where asked for
            KernelCall call("", "SoftmaxCrossEntropyLoss", v.weights ? 2 : 1);
            call.Version(13).String("reduction", reduction).Input(scores).Input(labels).Input(weights);
            if (v.ignore != 0) call.Int("ignore_index", IgnoreIndex(v.ignore));
            CompareWithCpu(call, TypeTol(t));
          }
        }
      }
    }
    {  // output_type float32 for float16/bfloat16 scores; float16 weights on other scores
      KernelCall call(kMs, "SoftmaxCrossEntropyLossInternal", 2);
      call.String("reduction", "mean").Int("output_type", static_cast<int64_t>(DataType::kFloat));
      call.Input(RandomTensor(t, {6, 1023}, seed++));
      call.Input(Labels(DataType::kInt64, {6, 1023}, 0, seed++));
      call.Input(PositiveTensor(DataType::kFloat16, {1023}, seed++));
      CompareWithCpu(call, TypeTol(DataType::kFloat));
    }
  }
}

TEST_CASE("cuda softmax: SoftmaxCrossEntropyLoss(Internal)Grad matches the CPU", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  uint32_t seed = 4000;
  for (DataType t : kFloatTypes) {
    for (const auto& shape : kSceShapes) {
      for (const char* reduction : {"none", "sum", "mean"}) {
        for (const auto& v : kSceVariants) {
          const int64_t classes = shape.scores[1];
          Tensor labels = Labels(v.label_type, shape.scores, v.ignore, seed++);
          const std::vector<int64_t> dy_shape =
              std::string(reduction) == "none" ? labels.shape() : std::vector<int64_t>{};
          Tensor dy = RandomTensor(t, dy_shape, seed++);
          Tensor log_prob = RandomTensor(t, shape.scores, seed++);
          std::optional<Tensor> weights;
          if (v.weights) weights = PositiveTensor(t, {classes}, seed++);
          INFO("log_prob " << log_prob.Describe() << " labels " << labels.Describe() << " reduction " << reduction
                           << " weights " << v.weights << " ignore mode " << v.ignore);
          {
            KernelCall call(kMs, "SoftmaxCrossEntropyLossInternalGrad");
            call.String("reduction", reduction).Input(dy).Input(log_prob).Input(labels).Input(weights);
            std::optional<Tensor> ignore;
            if (v.ignore != 0) ignore = memopt::testing::I64({}, {IgnoreIndex(v.ignore)});
            call.Input(ignore);
            if (v.weights) call.Input(RandomTensor(t, shape.scores, seed++));  // bias
            CompareWithCpu(call, TypeTol(t));
          }
          {
            KernelCall call(kMs, "SoftmaxCrossEntropyLossGrad");
            call.String("reduction", reduction).Input(dy).Input(log_prob).Input(labels).Input(weights);
            if (v.ignore != 0) call.Int("ignore_index", IgnoreIndex(v.ignore));
            CompareWithCpu(call, TypeTol(t));
          }
        }
      }
    }
    {  // output_type float32, a float32 bias and a float16 dY on other log_probs
      KernelCall call(kMs, "SoftmaxCrossEntropyLossInternalGrad");
      call.String("reduction", "sum").Int("output_type", static_cast<int64_t>(DataType::kFloat));
      call.Input(RandomTensor(DataType::kFloat16, {}, seed++));
      call.Input(RandomTensor(t, {6, 1023}, seed++));
      call.Input(Labels(DataType::kInt32, {6, 1023}, 1, seed++)).Input(std::nullopt);
      call.Input(memopt::testing::I64({}, {-100})).Input(RandomTensor(DataType::kFloat, {6, 1023}, seed++));
      CompareWithCpu(call, TypeTol(DataType::kFloat));
    }
  }
}

TEST_CASE("cuda softmax: cross entropy with an out-of-range label", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  {  // a host mirror: the CPU's error
    KernelCall call(kMs, "SoftmaxCrossEntropyLossInternal", 2);
    Tensor labels = Labels(DataType::kInt64, {5, 7}, 0, 1);
    labels.SetFromDouble(3, 7);
    call.Input(RandomTensor(DataType::kFloat, {5, 7}, 2)).Input(labels);
    auto cpu = call.Run(0, nullptr, &KernelRegistry::Cpu());
    auto gpu = testing::RunOnGpu(call);
    REQUIRE_FALSE(cpu.ok());
    REQUIRE_FALSE(gpu.ok());
    CHECK(gpu.status().message() == cpu.status().message());
  }
  {  // no host mirror: NaN rather than a device-side error
    KernelCall call(kMs, "SoftmaxCrossEntropyLossInternal", 2);
    Tensor labels = Labels(DataType::kInt64, {5000, 7}, 0, 3);
    labels.SetFromDouble(4321, -1);
    call.Input(RandomTensor(DataType::kFloat, {5000, 7}, 4)).Input(labels);
    auto gpu = testing::RunOnGpu(call);
    REQUIRE(gpu.ok());
    CHECK(std::isnan((*gpu)[0].GetAsDouble(0)));
  }
}

}  // namespace
}  // namespace memopt::cuda

// data_movement.cc (+ ops/index/gather.cc) against the CPU reference on random non-zero inputs of
// awkward sizes: Transpose, Concat, Split, Expand, Slice, SliceGrad, Where, Gather, GatherGrad,
// in the float types and in int64/bool (the copies move any element size). The index helpers
// (FastDivmod, dim merging) are checked on the host, where no GPU is needed.
#include <algorithm>
#include <random>

#include <catch2/catch.hpp>

#include "helpers/cuda_test_util.h"
#include "data_movement_launch.h"
#include "elem_type.h"

namespace memopt::cuda {
namespace {

using memopt::testing::KernelCall;
using memopt::testing::MakeTensor;
using testing::CompareWithCpu;
using testing::RandomTensor;
using testing::TypeTol;

using testing::kFloatTypes;
// The float types plus int64 (8-byte words) and bool (1-byte words) for the pure copies.
const DataType kCopyTypes[] = {DataType::kFloat, DataType::kFloat16, DataType::kBfloat16, DataType::kInt64,
                               DataType::kBool};

/// Random floats; distinct integers (a misplaced element shows); a bool pattern.
Tensor Data(DataType t, std::vector<int64_t> shape, uint32_t seed) {
  if (IsGpuFloat(t)) return RandomTensor(t, std::move(shape), seed);
  Tensor x(t, std::move(shape));
  std::mt19937 gen(seed);
  for (int64_t i = 0; i < x.numel(); ++i) {
    x.SetFromDouble(i, t == DataType::kBool ? static_cast<double>(gen() & 1) : static_cast<double>(i * 3 + seed));
  }
  return x;
}

/// A 1-D int64/int32 tensor, written directly (INT64_MAX would not survive a double).
Tensor Ints(DataType t, const std::vector<int64_t>& v) {
  Tensor x(t, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) {
    if (t == DataType::kInt64) {
      x.data<int64_t>()[i] = v[i];
    } else {
      x.data<int32_t>()[i] = static_cast<int32_t>(v[i]);
    }
  }
  return x;
}

Tensor Bools(std::vector<int64_t> shape, uint32_t seed) {
  Tensor c(DataType::kBool, std::move(shape));
  std::mt19937 gen(seed);
  for (int64_t i = 0; i < c.numel(); ++i) c.data<bool>()[i] = (gen() & 1) != 0;
  return c;
}

TEST_CASE("cuda data movement: the registry lists the data-movement kernels (host side)", "[cuda]") {
  const auto names = CudaKernelRegistry::Builtin().OpNames();
  for (const char* op : {"Transpose", "Concat", "Split", "Expand", "Slice", "Where", "Gather",
                         "com.microsoft::GatherGrad", "com.microsoft::SliceGrad"}) {
    INFO(op);
    CHECK(std::find(names.begin(), names.end(), op) != names.end());
  }
}

TEST_CASE("cuda data movement: FastDivmod divides exactly below 2^31 (host side)", "[cuda]") {
  std::vector<uint32_t> divisors;
  for (uint32_t d = 1; d <= 2000; ++d) divisors.push_back(d);
  for (int s = 11; s <= 30; ++s) {
    for (int64_t delta : {-1, 0, 1}) divisors.push_back(static_cast<uint32_t>((int64_t{1} << s) + delta));
  }
  divisors.push_back(0x7fffffffu);
  divisors.push_back(0x7ffffffeu);
  divisors.push_back(3u * 5u * 7u * 11u * 13u * 17u * 19u * 23u);
  std::mt19937 gen(7);
  for (uint32_t d : divisors) {
    const FastDivmod fd(d);
    std::vector<uint32_t> numerators = {0, 1, d - 1, d, d + 1, 0x7fffffffu, 0x7ffffffeu};
    // Around multiples of d, where a rounding error would show first.
    for (uint32_t m : {uint32_t{1}, uint32_t{2}, 0x7fffffffu / d}) {
      const uint64_t base = static_cast<uint64_t>(m) * d;
      for (int64_t delta = -2; delta <= 2; ++delta) {
        const int64_t v = static_cast<int64_t>(base) + delta;
        if (v >= 0 && v <= 0x7fffffff) numerators.push_back(static_cast<uint32_t>(v));
      }
    }
    for (int i = 0; i < 200; ++i) numerators.push_back(gen() & 0x7fffffffu);
    for (uint32_t n : numerators) {
      if (n > 0x7fffffffu) continue;
      if (fd.Div(n) != n / d) {
        FAIL("FastDivmod(" << d << ").Div(" << n << ") = " << fd.Div(n) << ", expected " << n / d);
      }
    }
  }
}

TEST_CASE("cuda data movement: dims are dropped and merged before launching (host side)", "[cuda]") {
  // Concat of [2, 3, 4] into columns of [2, 7, 4]: one [2, 12] block.
  std::vector<int64_t> dims = {2, 3, 4};
  std::vector<std::vector<int64_t>> strides = {{12, 4, 1}, {28, 4, 1}};
  REQUIRE(dm::Collapse(dims, strides));
  CHECK(dims == std::vector<int64_t>{2, 12});
  CHECK(strides[0] == std::vector<int64_t>{12, 1});
  CHECK(strides[1] == std::vector<int64_t>{28, 1});
  // Size-1 dims go; a transpose keeps its swapped pair; broadcast (stride 0) dims merge.
  dims = {1, 5, 1, 6, 2, 3};
  strides = {{0, 1, 0, 5, 0, 0}, {36, 6, 6, 1, 3, 1}};
  REQUIRE(dm::Collapse(dims, strides));
  CHECK(dims == std::vector<int64_t>{5, 6, 6});
  CHECK(strides[0] == std::vector<int64_t>{1, 5, 0});
  CHECK(strides[1] == std::vector<int64_t>{6, 1, 1});
  dims.assign(9, 2);
  strides = {{256, 128, 64, 32, 16, 8, 4, 2, 1}, {1, 2, 4, 8, 16, 32, 64, 128, 256}};
  CHECK_FALSE(dm::Collapse(dims, strides));
}

// Runs the GPU cases twice: with 32-bit index arithmetic and with the 64-bit path that only
// tensors of 2^31 elements would otherwise take.
template <typename Fn>
void BothIndexWidths(Fn&& fn) {
  for (bool wide : {false, true}) {
    INFO("64-bit indices: " << wide);
    SetWideIndexForTesting(wide);
    fn();
  }
  SetWideIndexForTesting(false);
}

TEST_CASE("cuda data movement: Transpose matches the CPU", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{3, 1, 1025}, {}},           {{7, 5, 33}, {1, 0, 2}},        {{7, 5, 33}, {0, 2, 1}},
      {{2, 3, 4, 5}, {0, 2, 3, 1}}, {{64, 48}, {1, 0}},             {{2, 33, 65}, {0, 2, 1}},
      {{4, 17, 3, 19}, {3, 1, 2, 0}}, {{5, 6, 7}, {-1, -3, -2}},    {{1023}, {}},
      {{40, 3, 50}, {2, 1, 0}},     {{2, 16, 1, 17}, {0, 3, 2, 1}}, {{3, 4, 5, 6, 7}, {4, 0, 3, 1, 2}}};
  BothIndexWidths([&] {
    uint32_t seed = 1;
    for (DataType t : kCopyTypes) {
      for (const auto& [shape, perm] : cases) {
        KernelCall call("", "Transpose");
        call.Version(13).Input(Data(t, shape, seed++));
        if (!perm.empty()) call.Ints("perm", perm);
        INFO(call.inputs[0]->Describe() << " perm of " << perm.size());
        CompareWithCpu(call, 0.0);
      }
    }
  });
}

TEST_CASE("cuda data movement: Concat matches the CPU", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  const std::vector<std::pair<std::vector<std::vector<int64_t>>, int64_t>> cases = {
      {{{3, 5, 7}, {3, 2, 7}, {3, 1, 7}}, 1},
      {{{7, 5, 33}, {7, 5, 1}, {7, 5, 1023}}, -1},
      {{{4, 6}, {1, 6}, {0, 6}, {7, 6}}, 0},
      {{{3, 1, 1025}, {3, 1, 1025}}, -2},
      {{{2, 3, 4, 5}, {2, 3, 4, 3}}, 3}};
  BothIndexWidths([&] {
    uint32_t seed = 50;
    for (DataType t : kCopyTypes) {
      for (const auto& [shapes, axis] : cases) {
        KernelCall call("", "Concat");
        call.Version(13).Int("axis", axis);
        for (const auto& s : shapes) call.Input(Data(t, s, seed++));
        INFO(call.inputs[0]->Describe() << " axis " << axis);
        CompareWithCpu(call, 0.0);
      }
    }
  });
}

TEST_CASE("cuda data movement: Split matches the CPU", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  uint32_t seed = 100;
  for (DataType t : kCopyTypes) {
    {  // uneven sizes from the input, negative axis
      KernelCall call("", "Split", 3);
      call.Version(13).Int("axis", -1).Input(Data(t, {7, 5, 33}, seed++)).Input(Ints(DataType::kInt64, {10, 20, 3}));
      CompareWithCpu(call, 0.0);
    }
    {  // int32 sizes including an empty part, middle axis
      KernelCall call("", "Split", 3);
      call.Version(13).Int("axis", 1).Input(Data(t, {3, 1025, 2}, seed++)).Input(Ints(DataType::kInt32, {1000, 0, 25}));
      CompareWithCpu(call, 0.0);
    }
    {  // the attribute form
      KernelCall call("", "Split", 2);
      call.Version(11).Ints("split", {2, 5}).Input(Data(t, {7, 5, 33}, seed++));
      CompareWithCpu(call, 0.0);
    }
    {  // num_outputs: 7 = 3 + 3 + 1
      KernelCall call("", "Split", 3);
      call.Version(18).Int("num_outputs", 3).Input(Data(t, {7, 4097}, seed++));
      CompareWithCpu(call, 0.0);
    }
    {  // equal parts by the number of outputs
      KernelCall call("", "Split", 2);
      call.Version(13).Int("axis", 1).Input(Data(t, {3, 6, 1, 7}, seed++));
      CompareWithCpu(call, 0.0);
    }
  }
}

TEST_CASE("cuda data movement: Expand matches the CPU", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{3, 1, 5}, {2, 1, 4, 1}}, {{1, 7}, {5, 1}},          {{3, 1}, {1, 4}},
      {{}, {4, 3}},              {{1025}, {3, 1, 1025}},    {{7, 5, 33}, {1}},
      {{2, 1, 1, 3}, {2, 4, 5, 3}}, {{1, 1, 1}, {7, 1, 4097}}};
  BothIndexWidths([&] {
    uint32_t seed = 200;
    for (DataType t : kCopyTypes) {
      for (const auto& [in, shape] : cases) {
        KernelCall call("", "Expand");
        call.Version(13).Input(Data(t, in, seed++)).Input(Ints(DataType::kInt64, shape));
        INFO(call.inputs[0]->Describe() << " to " << shape.size() << " dims");
        CompareWithCpu(call, 0.0);
      }
    }
  });
}

struct SliceCase {
  std::vector<int64_t> shape, starts, ends, axes, steps;
};
const std::vector<SliceCase> kSliceCases = {
    {{7, 5, 33}, {1, -20}, {100, -1}, {0, 2}, {}},           // clamped end, negative start
    {{7, 5, 33}, {-1}, {-1000}, {2}, {-2}},                 // reversed, end clamped to -1
    {{7, 5, 33}, {4, 0}, {0, 5}, {1, -1}, {-1, 3}},         // negative step, negative axis
    {{7, 5, 33}, {3}, {1}, {0}, {}},                        // empty
    {{3, 1, 1025}, {0, 0, 1}, {3, 1, 1025}, {}, {}},        // contiguous rows at an offset
    {{4097}, {-4000}, {INT64_MAX}, {}, {7}},                // large end, step
    {{6, 40, 40}, {1, 2, 3}, {5, 38, 37}, {0, 1, 2}, {}},   // interior block
    {{6, 40, 40}, {INT64_MAX, 10}, {INT64_MIN, 0}, {0, 1}, {-2, -3}}};

/// starts, ends and, where the case has them, axes (omitted when only steps are given) and steps.
void AddSliceInputs(KernelCall& call, DataType it, const SliceCase& c) {
  call.Input(Ints(it, c.starts)).Input(Ints(it, c.ends));
  if (!c.axes.empty() || !c.steps.empty()) {
    call.Input(c.axes.empty() ? std::nullopt : std::optional(Ints(it, c.axes)));
  }
  if (!c.steps.empty()) call.Input(Ints(it, c.steps));
}

TEST_CASE("cuda data movement: Slice matches the CPU", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  BothIndexWidths([&] {
    uint32_t seed = 300;
    for (DataType t : kCopyTypes) {
      for (DataType it : {DataType::kInt64, DataType::kInt32}) {
        for (const SliceCase& c : kSliceCases) {
          if (it == DataType::kInt32 && (c.ends[0] == INT64_MAX || c.ends[0] == INT64_MIN)) continue;
          KernelCall call("", "Slice");
          call.Version(13).Input(Data(t, c.shape, seed++));
          AddSliceInputs(call, it, c);
          INFO(call.inputs[0]->Describe() << " case starting " << c.starts[0]);
          CompareWithCpu(call, 0.0);
        }
      }
    }
  });
  // The attribute form of opset 1.
  KernelCall call("", "Slice");
  call.Version(1).Ints("starts", {1, 2}).Ints("ends", {-1, 1000}).Ints("axes", {0, 2});
  call.Input(RandomTensor(DataType::kFloat, {7, 5, 33}, 399));
  CompareWithCpu(call, 0.0);
}

TEST_CASE("cuda data movement: SliceGrad matches the CPU", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  uint32_t seed = 400;
  for (DataType t : kCopyTypes) {
    for (const SliceCase& c : kSliceCases) {
      // dY has the shape Slice gives.
      KernelCall slice("", "Slice");
      slice.Version(13).Input(Tensor(DataType::kFloat, c.shape));
      AddSliceInputs(slice, DataType::kInt64, c);
      auto sliced = slice.Run(0, nullptr, &KernelRegistry::Cpu());
      REQUIRE(sliced.ok());
      KernelCall call("com.microsoft", "SliceGrad");
      call.Input(Data(t, (*sliced)[0].shape(), seed++)).Input(Ints(DataType::kInt64, c.shape));
      AddSliceInputs(call, DataType::kInt64, c);
      INFO(call.inputs[0]->Describe() << " into " << c.shape.size() << " dims, case starting " << c.starts[0]);
      CompareWithCpu(call, 0.0);
    }
  }
}

TEST_CASE("cuda data movement: Where matches the CPU with three-way broadcasting", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  struct Case {
    std::vector<int64_t> c, x, y;
  };
  const std::vector<Case> cases = {{{2, 1, 5}, {3, 1}, {2, 1, 1}}, {{1025}, {3, 1, 1025}, {}},
                                   {{7, 5, 33}, {7, 5, 33}, {7, 5, 33}}, {{7, 5, 33}, {}, {7, 5, 33}},
                                   {{4097}, {4097}, {1}},          {{3, 1, 4, 1}, {1, 5, 1, 6}, {3, 5, 4, 1}}};
  BothIndexWidths([&] {
    uint32_t seed = 500;
    for (DataType t : kCopyTypes) {
      for (const Case& c : cases) {
        KernelCall call("", "Where");
        call.Version(16).Input(Bools(c.c, seed));
        call.Input(Data(t, c.x, seed + 1)).Input(Data(t, c.y, seed + 2));
        seed += 3;
        INFO(call.inputs[0]->Describe() << " " << call.inputs[1]->Describe() << " " << call.inputs[2]->Describe());
        CompareWithCpu(call, 0.0);
      }
    }
  });
}

TEST_CASE("cuda data movement: Gather matches the CPU", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  BothIndexWidths([&] {
    uint32_t seed = 600;
    for (DataType t : kCopyTypes) {
      for (DataType it : {DataType::kInt64, DataType::kInt32}) {
        {  // axis 0, 2-D indices with negatives
          KernelCall call("", "Gather");
          call.Version(13).Input(Data(t, {7, 5, 33}, seed++));
          call.Input(MakeTensor(it, {2, 3}, {0, -1, 3, 6, -7, 3}));
          CompareWithCpu(call, 0.0);
        }
        {  // a middle axis
          KernelCall call("", "Gather");
          call.Version(13).Int("axis", 1).Input(Data(t, {7, 5, 33}, seed++)).Input(Ints(it, {4, -5, 2, -1}));
          CompareWithCpu(call, 0.0);
        }
        {  // the last axis (rows of one element), scalar index
          KernelCall call("", "Gather");
          call.Version(13).Int("axis", -1).Input(Data(t, {3, 1, 1025}, seed++)).Input(MakeTensor(it, {}, {-1024}));
          CompareWithCpu(call, 0.0);
        }
        {  // an embedding lookup: long rows move as wide words
          std::vector<double> ids;
          for (int i = 0; i < 8 * 17; ++i) ids.push_back((i * 37) % 1000 - (i % 3 == 0 ? 1000 : 0));
          KernelCall call("", "Gather");
          call.Version(13).Input(Data(t, {1000, 64}, seed++)).Input(MakeTensor(it, {8, 17}, ids));
          CompareWithCpu(call, 0.0);
        }
      }
    }
  });
}

TEST_CASE("cuda data movement: Gather's out-of-range indices", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  // Small index tensors are checked on the host and fail as on the CPU.
  KernelCall bad("", "Gather");
  bad.Version(13).Input(RandomTensor(DataType::kFloat, {7, 3}, 700)).Input(Ints(DataType::kInt64, {1, 7}));
  CHECK_FALSE(bad.Run(0, nullptr, &KernelRegistry::Cpu()).ok());
  auto gpu_bad = testing::RunOnGpu(bad);
  REQUIRE_FALSE(gpu_bad.ok());
  CHECK(gpu_bad.status().message().find("out of range") != std::string::npos);
  // Index tensors too big for a host copy: the kernel writes zeros for the bad entries rather
  // than reading outside the data.
  const int64_t n = DeviceTensor::kMirrorMaxElements + 1000;
  Tensor ids(DataType::kInt64, {n});
  for (int64_t i = 0; i < n; ++i) ids.data<int64_t>()[i] = i % 20 - 10;
  ids.data<int64_t>()[1234] = 10;
  ids.data<int64_t>()[4000] = -11;
  const Tensor data = RandomTensor(DataType::kFloat, {10, 3}, 701);
  KernelCall call("", "Gather");
  call.Version(13).Input(data).Input(ids);
  auto gpu = testing::RunOnGpu(call);
  INFO(gpu.status().message());
  REQUIRE(gpu.ok());
  const Tensor& out = (*gpu)[0];
  REQUIRE(out.shape() == std::vector<int64_t>{n, 3});
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = ids.data<int64_t>()[i];
    for (int64_t c = 0; c < 3; ++c) {
      const float want = (k >= -10 && k < 10) ? data.data<float>()[(k < 0 ? k + 10 : k) * 3 + c] : 0.0f;
      if (out.data<float>()[i * 3 + c] != want) FAIL("row " << i << " (index " << k << ") column " << c);
    }
  }
}

TEST_CASE("cuda data movement: GatherGrad matches the CPU with repeated indices", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  struct Case {
    std::vector<int64_t> shape, ind_shape;
    std::vector<double> ind;
    int64_t axis;
  };
  std::vector<double> many;
  std::mt19937 gen(9);
  for (int i = 0; i < 3000; ++i) many.push_back(static_cast<double>(static_cast<int64_t>(gen() % 100) - 50));
  const std::vector<Case> cases = {{{7, 5, 33}, {6}, {0, 3, -1, 3, 0, 3}, 0},
                                   {{7, 5, 33}, {2, 3}, {1, -1, 1, 4, 1, 0}, 1},
                                   {{7, 5, 33}, {3}, {32, -33, 5}, -1},
                                   {{50, 64}, {3000}, many, 0},
                                   {{4, 1}, {0}, {}, 0}};
  BothIndexWidths([&] {
    uint32_t seed = 800;
    for (DataType t : kFloatTypes) {
      for (DataType it : {DataType::kInt64, DataType::kInt32}) {
        for (const Case& c : cases) {
          // dY = data gathered with the indices: shape[:axis] + ind_shape + shape[axis+1:].
          const int64_t axis = c.axis < 0 ? c.axis + static_cast<int64_t>(c.shape.size()) : c.axis;
          std::vector<int64_t> dy_shape(c.shape.begin(), c.shape.begin() + axis);
          dy_shape.insert(dy_shape.end(), c.ind_shape.begin(), c.ind_shape.end());
          dy_shape.insert(dy_shape.end(), c.shape.begin() + axis + 1, c.shape.end());
          KernelCall call("com.microsoft", "GatherGrad");
          call.Int("axis", c.axis).Input(Ints(DataType::kInt64, c.shape)).Input(MakeTensor(it, c.ind_shape, c.ind));
          call.Input(RandomTensor(t, dy_shape, seed++));
          INFO(call.inputs[2]->Describe() << " into " << c.shape.size() << " dims on axis " << c.axis);
          // Atomic sums run in another order than the CPU's loop: float rounding may differ in
          // the last bit, then once more when float16/bfloat16 are rounded from the float sum.
          CompareWithCpu(call, 2 * TypeTol(t));
        }
      }
    }
  });
}

}  // namespace
}  // namespace memopt::cuda

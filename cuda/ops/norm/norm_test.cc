// ops/norm against the CPU reference on random non-zero inputs of awkward sizes: the layer
// normalisations (axes, optional bias and outputs, parameter broadcasting, mixed and double
// stash types) and their gradients, in float32, float16 and bfloat16.
#include <algorithm>
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

using testing::kFloatTypes;
const int64_t kSizes[] = {1, 7, 1023, 4097};
constexpr const char* kMs = "com.microsoft";

/// Column sums over many rows accumulate in float on the GPU and in double on the CPU, in another
/// order: a float32 sum of ~1000 terms of magnitude ~4 is off by up to ~1e-5 absolute, so float32
/// gets 1e-4 (index or formula errors are off by O(1)). The 16-bit types round the float result
/// once, as the CPU does, so their own rounding (TypeTol) bounds the difference.
double SumTol(DataType t) { return std::max(TypeTol(t), 1e-4); }

TEST_CASE("cuda norm: the registry lists the normalisation and reduction ops (host side)", "[cuda]") {
  const auto names = CudaKernelRegistry::Builtin().OpNames();
  for (const char* op :
       {"LayerNormalization", "SimplifiedLayerNormalization", "RMSNormalization",
        "com.microsoft::SkipLayerNormalization", "com.microsoft::SkipSimplifiedLayerNormalization",
        "com.microsoft::LayerNormalizationGrad", "com.microsoft::SimplifiedLayerNormalizationGrad",
        "com.microsoft::InvertibleLayerNormalizationGrad", "ReduceSum", "com.microsoft::ReduceSumTraining",
        "ReduceMean", "ReduceMax", "ReduceMin", "ReduceSumSquare", "ReduceL2", "ReduceLogSumExp", "Sum", "Mean",
        "Max", "Min"}) {
    INFO(op);
    CHECK(std::find(names.begin(), names.end(), op) != names.end());
  }
}

TEST_CASE("cuda norm: LayerNormalization matches the CPU (sizes, rows, bias, optional outputs)", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  uint32_t seed = 1;
  for (DataType t : kFloatTypes) {
    for (int64_t d : kSizes) {
      // 37 rows: not a multiple of the 8 rows of a warp-per-row block.
      for (int64_t rows : {int64_t{1}, int64_t{37}}) {
        for (int variant = 0; variant < 3; ++variant) {
          // 0: bias, all outputs; 1: no bias, Y only; 2: bias, Y and InvStdDev without Mean.
          KernelCall call("", "LayerNormalization", variant == 1 ? 1 : 3);
          if (variant == 2) call.OutputName(1, "");
          call.Version(17).Float("epsilon", 1e-3f);
          call.Input(RandomTensor(t, {rows, d}, seed++));
          call.Input(RandomTensor(t, {d}, seed++));
          if (variant != 1) call.Input(RandomTensor(t, {d}, seed++));
          INFO("LayerNormalization " << call.inputs[0]->Describe() << " variant " << variant);
          CompareWithCpu(call, TypeTol(t));
        }
      }
    }
  }
}

TEST_CASE("cuda norm: LayerNormalization over several dims, broadcast parameters, mixed and double stash",
          "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  uint32_t seed = 100;
  struct Case {
    int64_t axis;
    std::vector<int64_t> scale_shape;
  };
  // X [3, 5, 7]: axis -1 (rows of 7), -2 (rows of 35; Scale [7] broadcast to [5, 7]), 0 (one
  // row of 105; Scale [5, 1] broadcast), and a long row split over the block.
  const std::vector<Case> cases = {{-1, {7}}, {-2, {5, 7}}, {-2, {7}}, {0, {3, 5, 7}}, {0, {5, 1}}};
  for (DataType t : kFloatTypes) {
    for (const Case& c : cases) {
      KernelCall call("", "LayerNormalization", 3);
      call.Int("axis", c.axis);
      call.Input(RandomTensor(t, {3, 5, 7}, seed++));
      call.Input(RandomTensor(t, c.scale_shape, seed++));
      call.Input(RandomTensor(t, c.scale_shape, seed++));
      INFO("axis " << c.axis << " scale " << call.inputs[1]->Describe());
      CompareWithCpu(call, TypeTol(t));
    }
    {
      KernelCall call("", "LayerNormalization", 3);
      call.Int("axis", -2);
      call.Input(RandomTensor(t, {3, 4, 4097}, seed++));
      call.Input(RandomTensor(t, {4, 4097}, seed++));
      INFO("rows of 4 x 4097, no bias");
      CompareWithCpu(call, TypeTol(t));
    }
    {
      // stash_type = 11: Mean and InvStdDev in double (the CPU computes in double throughout).
      KernelCall call("", "LayerNormalization", 3);
      call.Int("stash_type", 11);
      call.Input(RandomTensor(t, {9, 1023}, seed++));
      call.Input(RandomTensor(t, {1023}, seed++));
      call.Input(RandomTensor(t, {1023}, seed++));
      INFO("stash double");
      CompareWithCpu(call, TypeTol(t));
    }
    if (t != DataType::kFloat) {
      // X in 16 bits with float parameters: Y takes the parameters' type.
      KernelCall call("", "LayerNormalization", 3);
      call.Input(RandomTensor(t, {9, 1023}, seed++));
      call.Input(RandomTensor(DataType::kFloat, {1023}, seed++));
      call.Input(RandomTensor(DataType::kFloat, {1023}, seed++));
      INFO("float parameters");
      CompareWithCpu(call, TypeTol(t));
    }
  }
}

TEST_CASE("cuda norm: rows of whole 16-byte vectors (the register path) match the CPU", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  uint32_t seed = 150;
  for (DataType t : kFloatTypes) {
    // 8 .. 2048 elements: one vector per row up to 8 per lane (2048 is the 16-bit limit, 1024 the
    // float one; 2048 floats and 2056 take the general kernel beside it).
    for (int64_t d : {int64_t{8}, int64_t{64}, int64_t{768}, int64_t{1024}, int64_t{2048}, int64_t{2056}}) {
      {
        KernelCall call("", "LayerNormalization", 3);
        call.Input(RandomTensor(t, {37, d}, seed++));
        call.Input(RandomTensor(t, {d}, seed++));
        call.Input(RandomTensor(t, {d}, seed++));
        INFO("LayerNormalization " << call.inputs[0]->Describe());
        CompareWithCpu(call, TypeTol(t));
      }
      {
        KernelCall call("", "SimplifiedLayerNormalization", 2);
        call.Input(RandomTensor(t, {37, d}, seed++));
        call.Input(RandomTensor(t, {d}, seed++));
        INFO("SimplifiedLayerNormalization " << call.inputs[0]->Describe());
        CompareWithCpu(call, TypeTol(t));
      }
      for (bool broadcast_skip : {false, true}) {
        KernelCall call(kMs, "SkipLayerNormalization", 4);
        call.Input(RandomTensor(t, {2, 19, d}, seed++));
        call.Input(RandomTensor(t, broadcast_skip ? std::vector<int64_t>{19, d} : std::vector<int64_t>{2, 19, d},
                                seed++));
        call.Input(RandomTensor(t, {d}, seed++));
        call.Input(RandomTensor(t, {d}, seed++));  // beta
        call.Input(RandomTensor(t, {d}, seed++));  // bias before the normalisation
        INFO("SkipLayerNormalization " << call.inputs[0]->Describe() << " skip " << call.inputs[1]->Describe());
        CompareWithCpu(call, TypeTol(t));
      }
      if (t != DataType::kFloat) {
        KernelCall call("", "LayerNormalization", 3);
        call.Int("stash_type", 11);
        call.Input(RandomTensor(t, {9, d}, seed++));
        call.Input(RandomTensor(DataType::kFloat, {d}, seed++));
        call.Input(RandomTensor(DataType::kFloat, {d}, seed++));
        INFO("float parameters, double statistics " << call.inputs[0]->Describe());
        CompareWithCpu(call, TypeTol(t));
      }
    }
  }
}

TEST_CASE("cuda norm: SimplifiedLayerNormalization and RMSNormalization match the CPU", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  uint32_t seed = 200;
  for (DataType t : kFloatTypes) {
    for (int64_t d : kSizes) {
      for (bool with_inv : {true, false}) {
        KernelCall call("", "SimplifiedLayerNormalization", with_inv ? 2 : 1);
        call.Input(RandomTensor(t, {37, d}, seed++));
        call.Input(RandomTensor(t, {d}, seed++));
        INFO("SimplifiedLayerNormalization " << call.inputs[0]->Describe() << " InvStdDev " << with_inv);
        CompareWithCpu(call, TypeTol(t));
      }
      KernelCall call("", "RMSNormalization");
      call.Version(23).Int("axis", -2).Float("epsilon", 1e-2f);
      call.Input(RandomTensor(t, {3, 2, d}, seed++));
      call.Input(RandomTensor(t, {2, d}, seed++));
      INFO("RMSNormalization " << call.inputs[0]->Describe());
      CompareWithCpu(call, TypeTol(t));
    }
  }
}

TEST_CASE("cuda norm: SkipLayerNormalization and SkipSimplifiedLayerNormalization match the CPU", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  uint32_t seed = 300;
  for (DataType t : kFloatTypes) {
    for (int64_t h : kSizes) {
      for (bool simplified : {false, true}) {
        for (int variant = 0; variant < 2; ++variant) {
          // 0: skip as large as the input, beta and bias, all outputs; 1: skip broadcast over the
          // batch, no beta/bias, output and sum only.
          KernelCall call(kMs, simplified ? "SkipSimplifiedLayerNormalization" : "SkipLayerNormalization", 4);
          if (variant == 1) call.OutputName(1, "").OutputName(2, "");
          call.Input(RandomTensor(t, {2, 19, h}, seed++));
          call.Input(RandomTensor(t, variant == 0 ? std::vector<int64_t>{2, 19, h} : std::vector<int64_t>{19, h},
                                  seed++));
          call.Input(RandomTensor(t, {h}, seed++));
          if (variant == 0) {
            if (!simplified) call.Input(RandomTensor(t, {h}, seed++));  // beta
            call.Input(RandomTensor(t, {h}, seed++));                   // bias
          }
          INFO(call.node.op_type << " " << call.inputs[0]->Describe() << " variant " << variant);
          CompareWithCpu(call, TypeTol(t));
        }
      }
    }
  }
}

/// A gradient call: dY and X (or Y) of [rows, cols], per-column scale (and bias), per-row stats.
KernelCall GradCall(const char* op, DataType t, int64_t rows, int64_t cols, bool want_dbias, uint32_t& seed) {
  const std::string name = op;
  const bool full = name == "LayerNormalizationGrad";
  const bool invertible = name == "InvertibleLayerNormalizationGrad";
  KernelCall call(kMs, op, name == "SimplifiedLayerNormalizationGrad" ? 2 : 3);
  if (!want_dbias && call.node.outputs.size() == 3) call.OutputName(2, "");
  call.Input(RandomTensor(t, {rows, cols}, seed++));
  call.Input(RandomTensor(t, {rows, cols}, seed++));
  call.Input(RandomTensor(t, {cols}, seed++));
  if (full) call.Input(RandomTensor(DataType::kFloat, {rows, 1}, seed++));  // mean
  if (invertible) call.Input(RandomTensor(t, {cols}, seed++));             // bias
  call.Input(RandomTensor(DataType::kFloat, {rows, 1}, seed++));            // inv_std_dev
  return call;
}

TEST_CASE("cuda norm: the layer normalisation gradients match the CPU", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  uint32_t seed = 400;
  for (const char* op :
       {"LayerNormalizationGrad", "SimplifiedLayerNormalizationGrad", "InvertibleLayerNormalizationGrad"}) {
    for (DataType t : kFloatTypes) {
      for (int64_t cols : kSizes) {
        // 300 and 1000 rows split into several row chunks (partial sums through scratch); 5 rows
        // take the single-chunk path.
        for (int64_t rows : {int64_t{5}, cols <= 7 ? int64_t{1000} : int64_t{300}}) {
          for (bool want_dbias : {true, false}) {
            KernelCall call = GradCall(op, t, rows, cols, want_dbias, seed);
            INFO(op << " " << call.inputs[0]->Describe() << " dBias " << want_dbias);
            CompareWithCpu(call, SumTol(t));
          }
        }
      }
    }
  }
}

TEST_CASE("cuda norm: gradients with axis -2, double statistics and float parameters", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  uint32_t seed = 500;
  for (DataType t : kFloatTypes) {
    {
      KernelCall call(kMs, "LayerNormalizationGrad", 3);
      call.Int("axis", -2);
      call.Input(RandomTensor(t, {6, 3, 7}, seed++));
      call.Input(RandomTensor(t, {6, 3, 7}, seed++));
      call.Input(RandomTensor(t, {3, 7}, seed++));
      call.Input(RandomTensor(DataType::kDouble, {6, 1, 1}, seed++));
      call.Input(RandomTensor(DataType::kDouble, {6, 1, 1}, seed++));
      INFO("axis -2, double stats");
      CompareWithCpu(call, SumTol(t));
    }
    if (t != DataType::kFloat) {
      KernelCall call(kMs, "LayerNormalizationGrad", 3);
      call.Input(RandomTensor(t, {50, 1023}, seed++));
      call.Input(RandomTensor(t, {50, 1023}, seed++));
      call.Input(RandomTensor(DataType::kFloat, {1023}, seed++));
      call.Input(RandomTensor(DataType::kFloat, {50}, seed++));
      call.Input(RandomTensor(DataType::kFloat, {50}, seed++));
      INFO("float parameters");
      CompareWithCpu(call, SumTol(t));
    }
  }
}

}  // namespace
}  // namespace memopt::cuda

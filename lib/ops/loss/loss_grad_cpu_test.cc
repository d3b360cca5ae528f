// Cross-entropy gradients against central differences of ONNX Runtime's SoftmaxCrossEntropyLoss
// (float64) for every reduction, with and without weights and ignore_index.
#include <cmath>

#include <catch2/catch.hpp>

#include "exec/kernels/training_test_expected.h"
#include "helpers/training_test_util.h"

namespace memopt::testing {
namespace {

constexpr const char* kMs = "com.microsoft";
namespace ex = expected;

std::vector<int64_t> Labels(const std::vector<double>& v) { return {v.begin(), v.end()}; }

struct SceCase {
  const char* reduction;
  bool weight;
  bool ignore;
  const std::vector<double>& dy;
  const std::vector<double>& dx;
};

TEST_CASE("SoftmaxCrossEntropyLossGrad equals finite differences of ORT's loss", "[training][kernels]") {
  const SceCase cases[] = {
      {"mean", false, false, ex::kSceDyMean, ex::kSceDxMean},
      {"mean", false, true, ex::kSceDyMeanIgn, ex::kSceDxMeanIgn},
      {"mean", true, false, ex::kSceDyMeanW, ex::kSceDxMeanW},
      {"mean", true, true, ex::kSceDyMeanWIgn, ex::kSceDxMeanWIgn},
      {"sum", false, false, ex::kSceDySum, ex::kSceDxSum},
      {"sum", true, true, ex::kSceDySumWIgn, ex::kSceDxSumWIgn},
      {"none", false, false, ex::kSceDyNone, ex::kSceDxNone},
      {"none", true, true, ex::kSceDyNoneWIgn, ex::kSceDxNoneWIgn},
  };
  for (const SceCase& c : cases) {
    INFO("reduction " << c.reduction << " weight " << c.weight << " ignore " << c.ignore);
    const std::vector<int64_t> dy_shape = std::string(c.reduction) == "none" ? std::vector<int64_t>{3}
                                                                             : std::vector<int64_t>{};
    // ONNX-style op: ignore_index attribute.
    KernelCall call(kMs, "SoftmaxCrossEntropyLossGrad");
    call.Input(F64(dy_shape, c.dy)).Input(F64({3, 4}, ex::kSceLogProb)).Input(I64({3}, Labels(ex::kSceLabels)));
    if (c.weight) call.Input(F64({4}, ex::kSceWeight));
    call.String("reduction", c.reduction);
    if (c.ignore) call.Int("ignore_index", 3);
    CheckClose(MustRun(call)[0], c.dx, 1e-6, 1e-8);

    // Internal op: ignore_index as input 4, float32 log_prob, output_type float.
    KernelCall internal(kMs, "SoftmaxCrossEntropyLossInternalGrad");
    internal.Input(F32(dy_shape, c.dy)).Input(F32({3, 4}, ex::kSceLogProb)).Input(I64({3}, Labels(ex::kSceLabels)));
    internal.Input(c.weight ? std::optional<Tensor>(F32({4}, ex::kSceWeight)) : std::nullopt);
    internal.Input(c.ignore ? std::optional<Tensor>(I64({}, {3})) : std::nullopt);
    internal.String("reduction", c.reduction);
    CheckClose(MustRun(internal)[0], c.dx, 1e-5, 1e-6);
  }
}

TEST_CASE("SoftmaxCrossEntropyLossInternalGrad on N x C x D with weights, bias and output_type",
          "[training][kernels]") {
  KernelCall call(kMs, "SoftmaxCrossEntropyLossInternalGrad");
  call.Input(F64({}, {1.25})).Input(F64({2, 3, 2}, ex::kSce3LogProb)).Input(I64({2, 2}, Labels(ex::kSce3Labels)));
  call.Input(F64({3}, ex::kSce3Weight)).Input(std::nullopt);
  CheckClose(MustRun(call)[0], ex::kSce3Dx, 1e-6, 1e-8);

  // bias input (SceLossGradBiasFusion) is added; output_type float16 casts the result.
  std::vector<double> bias(12);
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.125 * static_cast<double>(i);
  call.Input(F64({2, 3, 2}, bias)).Int("output_type", static_cast<int64_t>(DataType::kFloat16));
  Tensor out = MustRun(call)[0];
  REQUIRE(out.dtype() == DataType::kFloat16);
  std::vector<double> expect(12);
  for (size_t i = 0; i < 12; ++i) expect[i] = ex::kSce3Dx[i] + bias[i];
  CheckClose(out, expect, 2e-3, 1e-3);
}

TEST_CASE("SoftmaxCrossEntropyLossGrad: every label ignored gives a zero gradient", "[training][kernels]") {
  KernelCall call(kMs, "SoftmaxCrossEntropyLossGrad");
  call.Input(F32({}, {1.0})).Input(F32({3, 4}, ex::kSceLogProb)).Input(I64({3}, {-100, -100, -100}));
  call.Int("ignore_index", -100);
  for (double v : Values(MustRun(call)[0])) CHECK(v == 0.0);
}

TEST_CASE("SoftmaxCrossEntropyLossGrad reports bad labels", "[training][kernels]") {
  KernelCall call(kMs, "SoftmaxCrossEntropyLossGrad");
  call.Input(F32({}, {1.0})).Input(F32({3, 4}, ex::kSceLogProb)).Input(I64({3}, {0, 4, 1}));
  auto r = call.Run();
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("label value 4") != std::string::npos);
  KernelCall shape(kMs, "SoftmaxCrossEntropyLossGrad");
  shape.Input(F32({}, {1.0})).Input(F32({3, 4}, ex::kSceLogProb)).Input(I64({2}, {0, 1}));
  REQUIRE_FALSE(shape.Run().ok());
}

}  // namespace
}  // namespace memopt::testing

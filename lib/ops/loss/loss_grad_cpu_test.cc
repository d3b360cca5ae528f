// Cross-entropy gradients against central differences of ONNX Runtime's SoftmaxCrossEntropyLoss
// (float64) for every reduction, with and without weights and ignore_index.
#include <cmath>

#include <catch2/catch.hpp>

#include "exec/kernels/training_test_expected.h"
#include "helpers/training_test_util.h"
#include "util/half.h"

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

namespace memopt::testing {
namespace {

TEST_CASE("SoftmaxCrossEntropyLossInternalGrad in float16: the float result rounded, rows and strided blocks",
          "[training][kernels]") {
  // [N, C] rows and [N, C, D] with C x D past one block (blocks of 65536 / C positions).
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{5, 700}, std::vector<int64_t>{2, 300, 260}}) {
    const int64_t n = shape[0], c = shape[1], d = shape.size() > 2 ? shape[2] : 1;
    std::vector<double> lp(static_cast<size_t>(n * c * d)), bias(lp.size());
    for (size_t i = 0; i < lp.size(); ++i) {
      lp[i] = -static_cast<double>(i * 37 % 97) / 16.0;
      bias[i] = static_cast<double>(static_cast<int>(i % 7) - 3) / 64.0;
    }
    std::vector<int64_t> labels(static_cast<size_t>(n * d));
    for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int64_t>(i * 11 % static_cast<size_t>(c));
    std::vector<int64_t> label_shape = {n};
    if (d > 1) label_shape.push_back(d);
    auto run = [&](DataType t) {
      KernelCall call(kMs, "SoftmaxCrossEntropyLossInternalGrad");
      call.Input(MakeTensor(t, {}, {0.5})).Input(MakeTensor(t, shape, lp)).Input(I64(label_shape, labels));
      call.Input(std::nullopt).Input(std::nullopt).Input(MakeTensor(t, shape, bias)).String("reduction", "sum");
      return MustRun(call)[0];
    };
    const Tensor f = run(DataType::kFloat), h = run(DataType::kFloat16);
    // float32 against the definition: 0.5 (exp(lp) - [class == label]) + bias.
    double worst = 0;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t k = 0; k < c; ++k)
        for (int64_t j = 0; j < d; ++j) {
          const size_t i = static_cast<size_t>((b * c + k) * d + j);
          const double want = 0.5 * (std::exp(lp[i]) - (labels[static_cast<size_t>(b * d + j)] == k ? 1 : 0)) + bias[i];
          worst = std::max(worst, std::fabs(f.data<float>()[i] - want));
        }
    CHECK(worst < 1e-6);
    REQUIRE(h.dtype() == DataType::kFloat16);
    int64_t differ = 0;
    for (int64_t i = 0; i < f.numel(); ++i) differ += h.data<uint16_t>()[i] != FloatToFloat16(f.data<float>()[i]);
    CHECK(differ == 0);
  }
}

}  // namespace
}  // namespace memopt::testing

// The layer normalisation gradients against central differences of ONNX Runtime's
// LayerNormalization and SimplifiedLayerNormalization forwards (training_test_expected.h), and
// against the CPU registry's LayerNormalization.
#include <catch2/catch.hpp>

#include "exec/kernels/training_test_expected.h"
#include "helpers/training_test_util.h"

namespace memopt::testing {
namespace {

constexpr const char* kMs = "com.microsoft";
namespace ex = expected;
const std::vector<int64_t> kShape = {2, 3, 4};

struct LnCase {
  int64_t axis;
  std::vector<int64_t> norm_shape, stat_shape;
  const std::vector<double>& scale;
  const std::vector<double>& bias;
  const std::vector<double>& y;
  const std::vector<double>& mean;
  const std::vector<double>& inv;
  const std::vector<double>& dx;
  const std::vector<double>& dscale;
  const std::vector<double>& dbias;
};

const LnCase kLast{-1, {4}, {2, 3, 1}, ex::kLnScaleAxisM1, ex::kLnBiasAxisM1, ex::kLnYAxisM1, ex::kLnMeanAxisM1,
                   ex::kLnInvStdAxisM1, ex::kLnDxAxisM1, ex::kLnDscaleAxisM1, ex::kLnDbiasAxisM1};
const LnCase kAxis1{1, {3, 4}, {2, 1, 1}, ex::kLnScaleAxis1, ex::kLnBiasAxis1, ex::kLnYAxis1, ex::kLnMeanAxis1,
                    ex::kLnInvStdAxis1, ex::kLnDxAxis1, ex::kLnDscaleAxis1, ex::kLnDbiasAxis1};

TEST_CASE("LayerNormalizationGrad equals finite differences of ORT's LayerNormalization", "[training][kernels]") {
  for (const LnCase* c : {&kLast, &kAxis1}) {
    for (DataType dt : {DataType::kDouble, DataType::kFloat}) {
      INFO("axis " << c->axis << " dtype " << DataTypeName(dt));
      KernelCall call(kMs, "LayerNormalizationGrad", 3);
      call.Input(MakeTensor(dt, kShape, ex::kLnDy)).Input(MakeTensor(dt, kShape, ex::kLnX));
      call.Input(MakeTensor(dt, c->norm_shape, c->scale));
      call.Input(F32(c->stat_shape, c->mean)).Input(F32(c->stat_shape, c->inv)).Int("axis", c->axis);
      auto out = MustRun(call);
      REQUIRE(out[0].shape() == kShape);
      REQUIRE(out[1].shape() == c->norm_shape);
      REQUIRE(out[0].dtype() == dt);
      const double rtol = dt == DataType::kDouble ? 1e-6 : 1e-4;
      CheckClose(out[0], c->dx, rtol, 1e-5);
      CheckClose(out[1], c->dscale, rtol, 1e-5);
      CheckClose(out[2], c->dbias, rtol, 1e-5);
    }
  }
}

TEST_CASE("InvertibleLayerNormalizationGrad recovers xhat from Y", "[training][kernels]") {
  KernelCall call(kMs, "InvertibleLayerNormalizationGrad", 3);
  call.Input(F64(kShape, ex::kLnDy)).Input(F64(kShape, ex::kLnYAxisM1)).Input(F64({4}, ex::kLnScaleAxisM1));
  call.Input(F64({4}, ex::kLnBiasAxisM1)).Input(F64({2, 3, 1}, ex::kLnInvStdAxisM1));
  auto out = MustRun(call);
  CheckClose(out[0], ex::kLnDxAxisM1, 1e-5, 1e-6);
  CheckClose(out[1], ex::kLnDscaleAxisM1, 1e-5, 1e-6);
  CheckClose(out[2], ex::kLnDbiasAxisM1, 1e-5, 1e-6);
}

TEST_CASE("SimplifiedLayerNormalizationGrad equals finite differences of ORT's RMSNorm", "[training][kernels]") {
  KernelCall call(kMs, "SimplifiedLayerNormalizationGrad", 2);
  call.Input(F64(kShape, ex::kLnDy)).Input(F64(kShape, ex::kLnX)).Input(F64({4}, ex::kSlnScale));
  call.Input(F32({2, 3, 1}, ex::kSlnInvStd)).Int("axis", -1);
  auto out = MustRun(call);
  CheckClose(out[0], ex::kSlnDx, 1e-5, 1e-6);
  CheckClose(out[1], ex::kSlnDscale, 1e-5, 1e-6);
}

TEST_CASE("LayerNormalizationGrad equals finite differences of the registry's LayerNormalization",
          "[training][kernels]") {
  const KernelRegistry& cpu = KernelRegistry::Cpu();
  REQUIRE(cpu.Find("", "LayerNormalization") != nullptr);
  auto forward = [&](const std::vector<double>& x, int num_outputs) {
    KernelCall call("", "LayerNormalization", num_outputs);
    call.Version(17).Input(F64(kShape, x)).Input(F64({4}, ex::kLnScaleAxisM1)).Input(F64({4}, ex::kLnBiasAxisM1));
    call.Int("axis", -1).Float("epsilon", 1e-5f).Int("stash_type", 11);
    return MustRun(call, 0, nullptr, &cpu);
  };
  auto fwd = forward(ex::kLnX, 3);
  const double h = 1e-6;
  std::vector<double> fd(ex::kLnX.size());
  for (size_t j = 0; j < fd.size(); ++j) {
    std::vector<double> xp = ex::kLnX, xm = ex::kLnX;
    xp[j] += h;
    xm[j] -= h;
    auto yp = Values(forward(xp, 1)[0]), ym = Values(forward(xm, 1)[0]);
    double s = 0;
    for (size_t i = 0; i < yp.size(); ++i) s += (yp[i] - ym[i]) / (2 * h) * ex::kLnDy[i];
    fd[j] = s;
  }
  KernelCall grad(kMs, "LayerNormalizationGrad", 3);
  grad.Input(F64(kShape, ex::kLnDy)).Input(F64(kShape, ex::kLnX)).Input(F64({4}, ex::kLnScaleAxisM1));
  grad.Input(fwd[1]).Input(fwd[2]);
  CheckClose(MustRun(grad)[0], fd, 1e-5, 1e-6);
}

TEST_CASE("LayerNormalizationGrad checks statistics sizes", "[training][kernels]") {
  KernelCall call(kMs, "LayerNormalizationGrad", 3);
  call.Input(F32(kShape, ex::kLnDy)).Input(F32(kShape, ex::kLnX)).Input(F32({4}, ex::kLnScaleAxisM1));
  call.Input(F32({2}, {0, 0})).Input(F32({2}, {1, 1}));
  auto r = call.Run();
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("one value per row") != std::string::npos);
}

TEST_CASE("LayerNormalizationGrad computes float16 inputs in float", "[training][kernels]") {
  KernelCall call(kMs, "LayerNormalizationGrad", 3);
  call.Input(MakeTensor(DataType::kFloat16, kShape, ex::kLnDy)).Input(MakeTensor(DataType::kFloat16, kShape, ex::kLnX));
  call.Input(MakeTensor(DataType::kFloat16, {4}, ex::kLnScaleAxisM1));
  call.Input(F32({2, 3, 1}, ex::kLnMeanAxisM1)).Input(F32({2, 3, 1}, ex::kLnInvStdAxisM1));
  auto out = MustRun(call);
  REQUIRE(out[0].dtype() == DataType::kFloat16);
  REQUIRE(out[1].dtype() == DataType::kFloat16);
  CheckClose(out[0], ex::kLnDxAxisM1, 3e-2, 3e-2);
}

}  // namespace
}  // namespace memopt::testing

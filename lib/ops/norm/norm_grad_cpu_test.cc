// BatchNormalizationGrad against central differences of ONNX Runtime's training-mode
// BatchNormalization forward (training_test_expected.h).
#include <catch2/catch.hpp>

#include "exec/kernels/training_test_expected.h"
#include "helpers/training_test_util.h"

namespace memopt::testing {
namespace {

constexpr const char* kMs = "com.microsoft";
namespace ex = expected;

TEST_CASE("BatchNormalizationGrad equals finite differences of ORT's training BatchNormalization",
          "[training][kernels]") {
  for (DataType dt : {DataType::kDouble, DataType::kFloat}) {
    KernelCall call(kMs, "BatchNormalizationGrad", 3);
    call.Input(MakeTensor(dt, {2, 3, 2}, ex::kBnDy)).Input(MakeTensor(dt, {2, 3, 2}, ex::kBnX));
    call.Input(MakeTensor(dt, {3}, ex::kBnScale)).Input(MakeTensor(dt, {3}, ex::kBnMean));
    call.Input(MakeTensor(dt, {3}, ex::kBnInvStd)).Float("epsilon", 1e-5f);
    auto out = MustRun(call);
    const double rtol = dt == DataType::kDouble ? 1e-5 : 1e-4;
    CheckClose(out[0], ex::kBnDx, rtol, 1e-5);
    CheckClose(out[1], ex::kBnDscale, rtol, 1e-5);
    CheckClose(out[2], ex::kBnDbias, rtol, 1e-5);
  }
}

}  // namespace
}  // namespace memopt::testing

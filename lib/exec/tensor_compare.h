// Compares a computed tensor with an expected one the way the ONNX backend test runner does:
// floating-point values within atol + rtol * |expected| (NaN matches NaN, infinities match
// exactly), other types exactly. Used by `memopt run --inputs` (expected output_<i>.pb files) and
// the conformance runner (tests/conformance).
#pragma once

#include <cstdint>
#include <string>

#include "exec/tensor.h"

namespace memopt {

struct CompareOptions {
  double rtol = 1e-3;  ///< the ONNX backend tests' defaults
  double atol = 1e-7;
};

struct TensorComparison {
  bool match = true;
  std::string mismatch;       ///< "" when match; else what differs ("3 of 12 values differ; first at 4: ...")
  int64_t values_differing = 0;
  double worst_abs_diff = 0;  ///< largest |actual - expected| over finite values
};

TensorComparison CompareTensors(const Tensor& actual, const Tensor& expected, const CompareOptions& options = {});

}  // namespace memopt

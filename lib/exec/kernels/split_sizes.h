// Split's decode, shared by the CPU Split kernels (ops/layout/layout_cpu.cc) and the CUDA wrapper: the
// axis, the `split` input or attribute, else equal parts, and the checks that they fit the axis.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exec/kernels/decode_inputs.h"
#include "exec/tensor.h"
#include "ir/graph.h"
#include "util/status.h"

namespace memopt {

/// Equal parts of `dim` when no sizes are given: `num_outputs` (opset 18) or one per output;
/// when the size does not divide, the last part is smaller (opset 18 rule).
Expected<std::vector<int64_t>> EqualSplitSizes(const Node& node, int64_t dim, size_t outputs);

/// InvalidInput (the caller adds the node) unless there is one non-negative size per output and
/// they sum to `dim`; `what` describes the input ("float[4, 6]") for the message.
Status CheckSplitSizes(const std::vector<int64_t>& sizes, size_t outputs, int64_t axis, int64_t dim,
                       const std::string& what);

struct SplitPlan {
  int64_t axis = 0;
  std::vector<int64_t> sizes;  ///< one per output, summing to the axis' size
};

/// ONNX Split of `x` (a Meta view is enough) into `outputs` parts; `inputs` for presence (the
/// `split` input is input 1).
Expected<SplitPlan> DecodeSplit(const Node& node, const Tensor& x, const std::vector<const Tensor*>& inputs,
                                size_t outputs, const IntListReader& read);

}  // namespace memopt

// The region a Slice takes (or a SliceGrad writes): per dim the first index, the step and the
// count, after ONNX's clamping rules, and the decode of a Slice / SliceGrad node's starts, ends,
// axes and steps. Shared by the CPU Slice and SliceGrad kernels and the CUDA wrappers, so all four
// read the same inputs and apply the same checks and clamping.
#pragma once

#include <cstdint>
#include <vector>

#include "exec/kernels/decode_inputs.h"
#include "exec/tensor.h"
#include "ir/graph.h"
#include "util/status.h"

namespace memopt {

struct SliceAxis {
  int64_t first = 0;
  int64_t step = 1;
  int64_t len = 0;
};

/// One axis of size `dim`: negative start/end count from the end, then both are clamped
/// ([0, dim] for positive steps, [0, dim - 1] and [-1, dim - 1] for negative ones); an empty
/// axis takes nothing. Counts cannot overflow, even for steps at the int64 limits. step != 0.
SliceAxis ClampSliceAxis(int64_t start, int64_t end, int64_t step, int64_t dim);

/// The whole region of `shape`: axes default to 0..n-1 and steps to 1; dims not listed are taken
/// whole. InvalidInput (the caller adds the node) when the lists differ in length, an axis is out
/// of range or repeated, or a step is 0.
Expected<std::vector<SliceAxis>> ResolveSliceRegion(const std::vector<int64_t>& shape,
                                                    const std::vector<int64_t>& starts,
                                                    const std::vector<int64_t>& ends, std::vector<int64_t> axes,
                                                    std::vector<int64_t> steps);

/// The region of a Slice node over `shape`: the starts/ends/axes attributes before opset 10 (when
/// input 1 is absent), else inputs starts, ends, axes?, steps?. `inputs` as the kernel sees them
/// (nullptr where omitted; read for presence only).
Expected<std::vector<SliceAxis>> DecodeSlice(const Node& node, const std::vector<int64_t>& shape,
                                             const std::vector<const Tensor*>& inputs, const IntListReader& read);

/// The region of SliceGrad(dY, shape, starts, ends, axes?, steps?) over `shape` (input 1, which the
/// caller reads); axes and steps, when present, must be as long as starts.
Expected<std::vector<SliceAxis>> DecodeSliceGrad(const std::vector<int64_t>& shape,
                                                 const std::vector<const Tensor*>& inputs, const IntListReader& read);

/// Where a region lies in a dense row-major tensor of `shape`: the offset of its first element,
/// per dim the stride between taken elements (the dim's stride times the step), and the counts.
struct SliceAddress {
  int64_t offset = 0;
  std::vector<int64_t> strides;
  std::vector<int64_t> counts;
};
SliceAddress AddressOf(const std::vector<int64_t>& shape, const std::vector<SliceAxis>& region);

}  // namespace memopt

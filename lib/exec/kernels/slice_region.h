// The region a Slice takes (or a SliceGrad writes): per dim the first index, the step and the
// count, after ONNX's clamping rules. Shared by the CPU Slice and SliceGrad kernels and the CUDA
// wrappers, so all four apply the same checks and clamping.
#pragma once

#include <cstdint>
#include <vector>

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
Expected<std::vector<SliceAxis>> ResolveSliceRegion(const std::vector<int64_t>& shape, const std::vector<int64_t>& starts,
                                                    const std::vector<int64_t>& ends, std::vector<int64_t> axes,
                                                    std::vector<int64_t> steps);

}  // namespace memopt

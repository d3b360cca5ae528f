// What the op decodes shared by the CPU and CUDA kernels (slice_region.h, split_sizes.h, ...) use
// to read a node's inputs whichever backend holds them: presence and types from Tensor::Meta views
// (nullptr where omitted), integer values through a reader the backend supplies, and the axis
// check. Errors are InvalidInput without the node's name; the kernel adds it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "exec/tensor.h"
#include "util/status.h"

namespace memopt {

/// The values of input `i`, which the decode has checked is present and of an integer type, read
/// by the backend (the CUDA one copies them to the host).
using IntListReader = std::function<Expected<std::vector<int64_t>>(int i)>;

/// Input `i`, or nullptr when it is omitted or past the node's inputs.
const Tensor* InputAt(const std::vector<const Tensor*>& inputs, int i);
inline bool HasInput(const std::vector<const Tensor*>& inputs, int i) { return InputAt(inputs, i) != nullptr; }

/// Input `i` (`name` for messages) as integers: an error when it is absent or not of an integer type.
Expected<std::vector<int64_t>> ReadIntList(const std::vector<const Tensor*>& inputs, const IntListReader& read, int i,
                                           const std::string& name);

/// `axis` in [-rank, rank) mapped to [0, rank); else an error naming the valid range (`what`
/// names the attribute in the message).
Expected<int64_t> ResolveAxis(int64_t axis, int64_t rank, const std::string& what = "axis");

/// Index `idx` of an axis of size `dim` (Gather, GatherElements, GatherND, GatherGrad), negative
/// counting from the end; else an error naming the valid range.
Expected<int64_t> ResolveIndex(int64_t idx, int64_t dim);

}  // namespace memopt

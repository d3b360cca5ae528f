// Gather's and GatherGrad's decode, shared by the CPU kernels (ops/index/gather_cpu.cc,
// index_grad_cpu.cc) and the CUDA wrappers (cuda/ops/index/gather.cc): the axis, the
// [outer, dim, inner] view of data (or of GatherGrad's dX), the output shape, the checks and their
// messages. Tensors are read for shapes and types only (Tensor::Meta views will do).
#pragma once

#include <cstdint>
#include <vector>

#include "exec/tensor.h"
#include "ir/graph.h"
#include "util/status.h"

namespace memopt {

/// Gather(data, indices): output[o, j, i] = data[o, indices[j], i] over data viewed as
/// [outer, dim, inner] at `axis`. GatherGrad(shape, indices, dY): dX of `shape`, zero but for
/// dX[o, indices[j], i] += dY[o, j, i].
struct GatherPlan {
  int64_t axis = 0;
  int64_t outer = 1;
  int64_t dim = 0;
  int64_t inner = 1;
  int64_t count = 0;           ///< number of indices
  std::vector<int64_t> shape;  ///< Gather's output shape; GatherGrad's dX shape
};

/// Checks that indices are an integer tensor and the `axis` attribute is in range for data.
Expected<GatherPlan> DecodeGather(const Node& node, const Tensor& data, const Tensor& indices);

/// Checks that `shape` has rank >= 1, the axis is in range, and dY holds outer * count * inner
/// elements.
Expected<GatherPlan> DecodeGatherGrad(const Node& node, const std::vector<int64_t>& shape, const Tensor& indices,
                                      const Tensor& dy);

}  // namespace memopt

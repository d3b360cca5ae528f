#include "exec/kernels/gather_plan.h"

#include <string>

#include "exec/kernels/decode_inputs.h"
#include "exec/kernels/kernel_util.h"

namespace memopt {

Expected<GatherPlan> DecodeGather(const Node& node, const Tensor& data, const Tensor& indices) {
  if (!IsInteger(indices.dtype())) {
    return InvalidInput("input 'indices' must be an integer tensor, got " + indices.Describe());
  }
  GatherPlan p;
  MEMOPT_ASSIGN_OR_RETURN(p.axis, ResolveAxis(node.GetInt("axis", 0), data.rank()));
  const std::vector<int64_t>& s = data.shape();
  p.outer = ProductOf(s, 0, p.axis);
  p.dim = s[static_cast<size_t>(p.axis)];
  p.inner = ProductOf(s, p.axis + 1, data.rank());
  p.count = indices.numel();
  p.shape.assign(s.begin(), s.begin() + p.axis);
  p.shape.insert(p.shape.end(), indices.shape().begin(), indices.shape().end());
  p.shape.insert(p.shape.end(), s.begin() + p.axis + 1, s.end());
  return p;
}

Expected<GatherPlan> DecodeGatherGrad(const Node& node, const std::vector<int64_t>& shape, const Tensor& indices,
                                      const Tensor& dy) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0) return InvalidInput("shape must have rank >= 1");
  GatherPlan p;
  const int64_t axis = node.GetInt("axis", 0);
  if (axis < -rank || axis >= rank) {
    return InvalidInput("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  p.axis = axis < 0 ? axis + rank : axis;
  p.outer = ProductOf(shape, 0, p.axis);
  p.dim = shape[static_cast<size_t>(p.axis)];
  p.inner = ProductOf(shape, p.axis + 1, rank);
  p.count = indices.numel();
  p.shape = shape;
  if (dy.numel() != p.outer * p.count * p.inner) {
    return InvalidInput("dY " + dy.Describe() + " does not match shape " + ShapeToString(shape) + " gathered with " +
                        std::to_string(p.count) + " indices on axis " + std::to_string(p.axis));
  }
  return p;
}

}  // namespace memopt

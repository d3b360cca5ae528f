#include "exec/kernels/split_sizes.h"

#include <algorithm>

#include "exec/kernels/kernel_util.h"

namespace memopt {

Expected<std::vector<int64_t>> EqualSplitSizes(const Node& node, int64_t dim, size_t outputs) {
  const int64_t n = node.HasAttr("num_outputs") ? node.GetInt("num_outputs", 1) : static_cast<int64_t>(outputs);
  if (n <= 0) return InvalidInput("num_outputs must be positive");
  const int64_t chunk = (dim + n - 1) / n;
  std::vector<int64_t> sizes;
  int64_t left = dim;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t s = std::min(chunk, left);
    sizes.push_back(s);
    left -= s;
  }
  return sizes;
}

Status CheckSplitSizes(const std::vector<int64_t>& sizes, size_t outputs, int64_t axis, int64_t dim,
                       const std::string& what) {
  if (sizes.size() != outputs) {
    return InvalidInput("split " + ShapeToString(sizes) + " has " + std::to_string(sizes.size()) +
                        " parts but the node has " + std::to_string(outputs) + " outputs");
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) return InvalidInput("split " + ShapeToString(sizes) + " has a negative size");
    total += s;
  }
  if (total != dim) {
    return InvalidInput("split " + ShapeToString(sizes) + " sums to " + std::to_string(total) + " but axis " +
                        std::to_string(axis) + " of " + what + " has size " + std::to_string(dim));
  }
  return Status::Ok();
}

Expected<SplitPlan> DecodeSplit(const Node& node, const Tensor& x, const std::vector<const Tensor*>& inputs,
                                size_t outputs, const IntListReader& read) {
  SplitPlan p;
  MEMOPT_ASSIGN_OR_RETURN(p.axis, ResolveAxis(node.GetInt("axis", 0), x.rank()));
  const int64_t dim = x.dim(p.axis);
  if (HasInput(inputs, 1)) {
    MEMOPT_ASSIGN_OR_RETURN(p.sizes, ReadIntList(inputs, read, 1, "split"));
  } else if (node.HasAttr("split")) {
    p.sizes = node.GetInts("split");
  }
  if (p.sizes.empty()) {
    MEMOPT_ASSIGN_OR_RETURN(p.sizes, EqualSplitSizes(node, dim, outputs));
  }
  MEMOPT_RETURN_IF_ERROR(CheckSplitSizes(p.sizes, outputs, p.axis, dim, x.Describe()));
  return p;
}

}  // namespace memopt

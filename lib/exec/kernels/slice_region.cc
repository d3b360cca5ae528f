#include "exec/kernels/slice_region.h"

#include <algorithm>
#include <string>

#include "exec/kernels/kernel_util.h"

namespace memopt {

SliceAxis ClampSliceAxis(int64_t start, int64_t end, int64_t step, int64_t dim) {
  SliceAxis a;
  a.step = step;
  if (dim == 0) return a;  // clamping to [0, dim - 1] below would be an empty range
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  // Counts as 1 + (distance - 1) / |step|, which cannot overflow.
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    a.len = end > start ? 1 + (end - start - 1) / step : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    const uint64_t magnitude = 0 - static_cast<uint64_t>(step);
    a.len = start > end ? 1 + static_cast<int64_t>(static_cast<uint64_t>(start - end - 1) / magnitude) : 0;
  }
  a.first = start;
  return a;
}

Expected<std::vector<SliceAxis>> ResolveSliceRegion(const std::vector<int64_t>& shape,
                                                    const std::vector<int64_t>& starts,
                                                    const std::vector<int64_t>& ends, std::vector<int64_t> axes,
                                                    std::vector<int64_t> steps) {
  const int64_t r = static_cast<int64_t>(shape.size());
  if (starts.size() != ends.size()) {
    return InvalidInput("starts " + ShapeToString(starts) + " and ends " + ShapeToString(ends) + " differ in length");
  }
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) {
    return InvalidInput("starts, ends, axes and steps must have the same length");
  }
  std::vector<SliceAxis> region(static_cast<size_t>(r));
  for (int64_t d = 0; d < r; ++d) region[d].len = shape[d];
  std::vector<bool> seen(static_cast<size_t>(r), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    const auto a = NormalizeAxis(axes[i], r);
    if (!a) {
      return InvalidInput("slice axis " + std::to_string(axes[i]) + " is out of range for rank " + std::to_string(r) +
                          " (valid: [" + std::to_string(-r) + ", " + std::to_string(r - 1) + "])");
    }
    if (seen[*a]) return InvalidInput("axes " + ShapeToString(axes) + " repeat axis " + std::to_string(*a));
    seen[*a] = true;
    if (steps[i] == 0) return InvalidInput("step 0 on axis " + std::to_string(*a));
    region[*a] = ClampSliceAxis(starts[i], ends[i], steps[i], shape[*a]);
  }
  return region;
}

namespace {

/// Slice's lists from inputs: starts, ends, axes? and steps? at `first` .. `first` + 3.
struct SliceLists {
  std::vector<int64_t> starts, ends, axes, steps;
};

Expected<SliceLists> ReadSliceLists(const std::vector<const Tensor*>& inputs, const IntListReader& read, int first) {
  SliceLists l;
  MEMOPT_ASSIGN_OR_RETURN(l.starts, ReadIntList(inputs, read, first, "starts"));
  MEMOPT_ASSIGN_OR_RETURN(l.ends, ReadIntList(inputs, read, first + 1, "ends"));
  if (HasInput(inputs, first + 2)) {
    MEMOPT_ASSIGN_OR_RETURN(l.axes, ReadIntList(inputs, read, first + 2, "axes"));
  }
  if (HasInput(inputs, first + 3)) {
    MEMOPT_ASSIGN_OR_RETURN(l.steps, ReadIntList(inputs, read, first + 3, "steps"));
  }
  return l;
}

}  // namespace

Expected<std::vector<SliceAxis>> DecodeSlice(const Node& node, const std::vector<int64_t>& shape,
                                             const std::vector<const Tensor*>& inputs, const IntListReader& read) {
  SliceLists l;
  if (node.since_version != 0 && node.since_version < 10 && !HasInput(inputs, 1)) {
    l.starts = node.GetInts("starts");
    l.ends = node.GetInts("ends");
    l.axes = node.GetInts("axes");
  } else {
    MEMOPT_ASSIGN_OR_RETURN(l, ReadSliceLists(inputs, read, 1));
  }
  return ResolveSliceRegion(shape, l.starts, l.ends, std::move(l.axes), std::move(l.steps));
}

Expected<std::vector<SliceAxis>> DecodeSliceGrad(const std::vector<int64_t>& shape,
                                                 const std::vector<const Tensor*>& inputs, const IntListReader& read) {
  MEMOPT_ASSIGN_OR_RETURN(SliceLists l, ReadSliceLists(inputs, read, 2));
  if ((HasInput(inputs, 4) && l.axes.size() != l.starts.size()) ||
      (HasInput(inputs, 5) && l.steps.size() != l.starts.size())) {
    return InvalidInput("starts, ends, axes and steps must have the same length");
  }
  return ResolveSliceRegion(shape, l.starts, l.ends, std::move(l.axes), std::move(l.steps));
}

SliceAddress AddressOf(const std::vector<int64_t>& shape, const std::vector<SliceAxis>& region) {
  SliceAddress a;
  a.strides = Strides(shape);
  for (size_t d = 0; d < shape.size(); ++d) {
    a.offset += region[d].first * a.strides[d];
    a.strides[d] *= region[d].step;
    a.counts.push_back(region[d].len);
  }
  return a;
}

}  // namespace memopt

#include "exec/kernels/concat_shape.h"

#include <string>

#include "exec/kernels/kernel_util.h"

namespace memopt {

namespace {
std::string Text(const ConcatPart& p) { return DataTypeName(p.dtype) + ShapeToString(p.shape); }
}  // namespace

Expected<std::vector<int64_t>> ConcatShape(const std::vector<ConcatPart>& parts, int64_t axis) {
  const ConcatPart& first = parts.at(0);
  const size_t r = first.shape.size();
  std::vector<int64_t> shape = first.shape;
  shape[axis] = 0;
  for (const ConcatPart& t : parts) {
    if (t.dtype != first.dtype) {
      return InvalidInput("inputs have different element types: " + Text(first) + " and " + Text(t));
    }
    bool match = t.shape.size() == r;
    for (size_t d = 0; match && d < r; ++d) match = static_cast<int64_t>(d) == axis || t.shape[d] == first.shape[d];
    if (!match) {
      return InvalidInput("cannot concatenate " + Text(t) + " with " + Text(first) + " along axis " +
                          std::to_string(axis));
    }
    shape[axis] += t.shape[axis];
  }
  return shape;
}

}  // namespace memopt

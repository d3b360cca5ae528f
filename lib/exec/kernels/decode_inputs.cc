#include "exec/kernels/decode_inputs.h"

namespace memopt {

const Tensor* InputAt(const std::vector<const Tensor*>& inputs, int i) {
  return i >= 0 && i < static_cast<int>(inputs.size()) ? inputs[static_cast<size_t>(i)] : nullptr;
}

Expected<std::vector<int64_t>> ReadIntList(const std::vector<const Tensor*>& inputs, const IntListReader& read, int i,
                                           const std::string& name) {
  if (!HasInput(inputs, i)) return InvalidInput("input " + std::to_string(i) + " ('" + name + "') is missing");
  const Tensor& t = *inputs[static_cast<size_t>(i)];
  if (!IsInteger(t.dtype())) return InvalidInput("input '" + name + "' must be an integer tensor, got " + t.Describe());
  return read(i);
}

Expected<int64_t> ResolveAxis(int64_t axis, int64_t rank, const std::string& what) {
  if (axis < -rank || axis >= rank) {
    return InvalidInput(what + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank) +
                        " (valid: [" + std::to_string(-rank) + ", " + std::to_string(rank - 1) + "])");
  }
  return axis < 0 ? axis + rank : axis;
}

Expected<int64_t> ResolveIndex(int64_t idx, int64_t dim) {
  const int64_t k = idx < 0 ? idx + dim : idx;
  if (k < 0 || k >= dim) {
    return InvalidInput("index " + std::to_string(idx) + " is out of range for an axis of size " + std::to_string(dim) +
                        " (valid: [" + std::to_string(-dim) + ", " + std::to_string(dim - 1) + "])");
  }
  return k;
}

}  // namespace memopt

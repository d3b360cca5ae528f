// DataType -> the kernels' ElemType, and the broadcast description of two shapes.
#pragma once

#include <optional>
#include <vector>

#include "ir/dtype.h"
#include "launch.h"
#include "util/status.h"

namespace memopt::cuda {

inline std::optional<ElemType> ToElemType(DataType t) {
  switch (t) {
    case DataType::kFloat: return ElemType::kF32;
    case DataType::kFloat16: return ElemType::kF16;
    case DataType::kBfloat16: return ElemType::kBF16;
    case DataType::kDouble: return ElemType::kF64;
    case DataType::kInt32: return ElemType::kI32;
    case DataType::kInt64: return ElemType::kI64;
    case DataType::kBool: return ElemType::kBool;
    default: return std::nullopt;
  }
}

/// float32, float16 or bfloat16: the types of the arithmetic kernels.
inline bool IsGpuFloat(DataType t) {
  return t == DataType::kFloat || t == DataType::kFloat16 || t == DataType::kBfloat16;
}

/// Numpy broadcasting of a and b: the output shape, or an error naming both shapes.
Expected<std::vector<int64_t>> BroadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

/// The kernel's description of reading a and b at each element of `out` (dims of size 1
/// dropped); kUnsupported when more than kMaxRank dims remain.
Expected<BroadcastShape> MakeBroadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                       const std::vector<int64_t>& out);

}  // namespace memopt::cuda

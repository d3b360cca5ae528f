// Tensor element types, numbered as ONNX's TensorProto.DataType.
#pragma once

#include <cstdint>
#include <string>

namespace memopt {

enum class DataType : int32_t {
  kUndefined = 0, kFloat = 1, kUint8 = 2, kInt8 = 3, kUint16 = 4, kInt16 = 5, kInt32 = 6,
  kInt64 = 7, kString = 8, kBool = 9, kFloat16 = 10, kDouble = 11, kUint32 = 12, kUint64 = 13,
  kComplex64 = 14, kComplex128 = 15, kBfloat16 = 16, kFloat8E4M3FN = 17, kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19, kFloat8E5M2FNUZ = 20, kUint4 = 21, kInt4 = 22, kFloat4E2M1 = 23,
};

/// Bytes per element as ORT counts them (sub-byte types count 1; string counts 0 = unknown).
int64_t ElemByteSize(DataType t);
/// "float", "float16", "int64", ... (ONNX text-format spelling); "undefined" for 0.
std::string DataTypeName(DataType t);
bool IsFloatingPoint(DataType t);
bool IsInteger(DataType t);
bool IsKnownDataType(int32_t raw);

}  // namespace memopt

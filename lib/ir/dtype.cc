#include "ir/dtype.h"

namespace memopt {

int64_t ElemByteSize(DataType t) {
  switch (t) {
    case DataType::kFloat: case DataType::kInt32: case DataType::kUint32: return 4;
    case DataType::kDouble: case DataType::kInt64: case DataType::kUint64: case DataType::kComplex64: return 8;
    case DataType::kComplex128: return 16;
    case DataType::kFloat16: case DataType::kBfloat16: case DataType::kInt16: case DataType::kUint16: return 2;
    case DataType::kUint8: case DataType::kInt8: case DataType::kBool: case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ: case DataType::kFloat8E5M2: case DataType::kFloat8E5M2FNUZ:
    case DataType::kUint4: case DataType::kInt4: case DataType::kFloat4E2M1: return 1;
    case DataType::kString: case DataType::kUndefined: return 0;
  }
  return 0;
}

std::string DataTypeName(DataType t) {
  switch (t) {
    case DataType::kUndefined: return "undefined";
    case DataType::kFloat: return "float";
    case DataType::kUint8: return "uint8";
    case DataType::kInt8: return "int8";
    case DataType::kUint16: return "uint16";
    case DataType::kInt16: return "int16";
    case DataType::kInt32: return "int32";
    case DataType::kInt64: return "int64";
    case DataType::kString: return "string";
    case DataType::kBool: return "bool";
    case DataType::kFloat16: return "float16";
    case DataType::kDouble: return "double";
    case DataType::kUint32: return "uint32";
    case DataType::kUint64: return "uint64";
    case DataType::kComplex64: return "complex64";
    case DataType::kComplex128: return "complex128";
    case DataType::kBfloat16: return "bfloat16";
    case DataType::kFloat8E4M3FN: return "float8e4m3fn";
    case DataType::kFloat8E4M3FNUZ: return "float8e4m3fnuz";
    case DataType::kFloat8E5M2: return "float8e5m2";
    case DataType::kFloat8E5M2FNUZ: return "float8e5m2fnuz";
    case DataType::kUint4: return "uint4";
    case DataType::kInt4: return "int4";
    case DataType::kFloat4E2M1: return "float4e2m1";
  }
  return "type" + std::to_string(static_cast<int>(t));
}

bool IsFloatingPoint(DataType t) {
  switch (t) {
    case DataType::kFloat: case DataType::kFloat16: case DataType::kDouble: case DataType::kBfloat16:
    case DataType::kFloat8E4M3FN: case DataType::kFloat8E4M3FNUZ: case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ: case DataType::kFloat4E2M1: return true;
    default: return false;
  }
}

bool IsInteger(DataType t) {
  switch (t) {
    case DataType::kUint8: case DataType::kInt8: case DataType::kUint16: case DataType::kInt16:
    case DataType::kInt32: case DataType::kInt64: case DataType::kUint32: case DataType::kUint64:
    case DataType::kUint4: case DataType::kInt4: return true;
    default: return false;
  }
}

bool IsKnownDataType(int32_t raw) { return raw >= 1 && raw <= 23; }

}  // namespace memopt

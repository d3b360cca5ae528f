#include "io/tensor_meta.h"

#include <limits>

namespace memopt::io {

namespace {

using wire::Field;
using wire::Reader;
using wire::WireType;

// TensorProto field numbers.
constexpr uint32_t kDims = 1, kDataType = 2, kFloatData = 4, kInt32Data = 5, kStringData = 6,
                   kInt64Data = 7, kName = 8, kRawData = 9, kDoubleData = 10, kUint64Data = 11,
                   kExternalData = 13, kDataLocation = 14;
// SparseTensorProto field numbers.
constexpr uint32_t kSparseValues = 1, kSparseIndices = 2, kSparseDims = 3;
constexpr uint64_t kDataLocationExternal = 1;

bool IsLen(const Field& f) { return f.type == WireType::kLengthDelimited; }
bool IsVarint(const Field& f) { return f.type == WireType::kVarint; }

Status ReadStringEntry(const Field& field, std::pair<std::string, std::string>& entry) {
  Reader r = Reader::Sub(field);
  Field f;
  while (r.Next(f)) {
    if (f.number == 1 || f.number == 2) {
      if (!IsLen(f)) return CorruptProtobuf(f.offset);
      (f.number == 1 ? entry.first : entry.second) = std::string(f.AsString());
    }
  }
  if (r.failed()) return CorruptProtobuf(r.error_offset());
  return Status::Ok();
}

/// Appends the values of one dims-like occurrence (packed or not).
Status AppendInt64s(const Field& f, std::vector<int64_t>& out) {
  if (!IsVarint(f) && !IsLen(f)) return CorruptProtobuf(f.offset);
  if (!wire::ForEachVarint(f, [&](uint64_t v) { out.push_back(static_cast<int64_t>(v)); })) {
    return CorruptProtobuf(f.data_offset);
  }
  return Status::Ok();
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

}  // namespace

Status CorruptProtobuf(uint64_t offset) {
  return InvalidInput("not a valid ONNX model (truncated or corrupt protobuf at byte " +
                      std::to_string(offset) + ")");
}

Expected<TensorMeta> ReadTensorMeta(const Field& field) {
  TensorMeta meta;
  meta.message_offset = field.data_offset;
  meta.message_size = field.size;
  Reader r = Reader::Sub(field);
  Field f;
  uint64_t data_location = 0;
  while (r.Next(f)) {
    switch (f.number) {
      case kDims:
        MEMOPT_RETURN_IF_ERROR(AppendInt64s(f, meta.dims));
        break;
      case kDataType:
        if (!IsVarint(f)) return CorruptProtobuf(f.offset);
        meta.data_type = static_cast<int32_t>(f.value);
        break;
      case kName:
        if (!IsLen(f)) return CorruptProtobuf(f.offset);
        meta.name = std::string(f.AsString());
        break;
      case kRawData:
        if (!IsLen(f)) return CorruptProtobuf(f.offset);
        meta.has_raw_data = true;  // last occurrence wins, as in protobuf
        meta.raw_offset = f.data_offset;
        meta.raw_size = f.size;
        break;
      case kExternalData: {
        if (!IsLen(f)) return CorruptProtobuf(f.offset);
        std::pair<std::string, std::string> entry;
        MEMOPT_RETURN_IF_ERROR(ReadStringEntry(f, entry));
        meta.external_entries.push_back(std::move(entry));
        break;
      }
      case kDataLocation:
        if (!IsVarint(f)) return CorruptProtobuf(f.offset);
        data_location = f.value;
        break;
      case kFloatData: case kInt32Data: case kStringData: case kInt64Data: case kDoubleData:
      case kUint64Data:
        // Skipped by offset arithmetic; only note that inline typed data exists.
        if (!IsLen(f) || f.size > 0 || f.number == kStringData) meta.has_typed_data = true;
        break;
      default:
        break;  // segment, doc_string, metadata_props, unknown fields
    }
  }
  if (r.failed()) return CorruptProtobuf(r.error_offset());
  meta.external = (data_location == kDataLocationExternal);
  return meta;
}

Expected<TensorMeta> ReadSparseTensorMeta(const Field& field) {
  TensorMeta meta;
  std::vector<int64_t> dense_dims;
  bool has_values = false;
  Reader r = Reader::Sub(field);
  Field f;
  while (r.Next(f)) {
    if (f.number == kSparseValues) {
      if (!IsLen(f)) return CorruptProtobuf(f.offset);
      MEMOPT_ASSIGN_OR_RETURN(meta, ReadTensorMeta(f));
      has_values = true;
    } else if (f.number == kSparseIndices) {
      if (!IsLen(f)) return CorruptProtobuf(f.offset);
      MEMOPT_ASSIGN_OR_RETURN(TensorMeta indices, ReadTensorMeta(f));
      (void)indices;  // checked for wire validity only
    } else if (f.number == kSparseDims) {
      MEMOPT_RETURN_IF_ERROR(AppendInt64s(f, dense_dims));
    }
  }
  if (r.failed()) return CorruptProtobuf(r.error_offset());
  if (!has_values) {
    return InvalidInput("sparse initializer at byte " + std::to_string(field.data_offset) +
                        " has no values tensor");
  }
  meta.is_sparse = true;
  meta.dims = std::move(dense_dims);
  meta.message_offset = field.data_offset;
  meta.message_size = field.size;
  meta.has_raw_data = false;  // the values' data is not the dense tensor's data
  meta.has_typed_data = false;
  meta.external = false;
  meta.external_entries.clear();
  return meta;
}

Expected<int64_t> CheckedNumElements(const std::vector<int64_t>& dims, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return InvalidInput(what + " has a negative dim in " + DimsText(dims));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) {
      return InvalidInput(what + " has dims " + DimsText(dims) +
                          " whose element count overflows int64");
    }
    n *= d;
  }
  return n;
}

std::optional<uint64_t> DataBytes(DataType type, int64_t numel) {
  if (numel < 0) return std::nullopt;
  const auto n = static_cast<uint64_t>(numel);
  switch (type) {
    case DataType::kUint4: case DataType::kInt4: case DataType::kFloat4E2M1:
      return n / 2 + n % 2;
    default:
      break;
  }
  const int64_t elem = ElemByteSize(type);
  if (elem <= 0) return std::nullopt;
  if (n > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(elem)) return std::nullopt;
  if (n * static_cast<uint64_t>(elem) > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return std::nullopt;
  }
  return n * static_cast<uint64_t>(elem);
}

Expected<std::optional<std::vector<int64_t>>> DecodeSmallIntTensor(const Field& field,
                                                                  const TensorMeta& meta,
                                                                  int64_t numel) {
  using Result = std::optional<std::vector<int64_t>>;
  const auto type = static_cast<DataType>(meta.data_type);
  int bytes = 0;
  bool is_signed = false;
  uint32_t typed_field = 0;
  switch (type) {
    case DataType::kInt8: bytes = 1; is_signed = true; typed_field = kInt32Data; break;
    case DataType::kUint8: case DataType::kBool: bytes = 1; typed_field = kInt32Data; break;
    case DataType::kInt16: bytes = 2; is_signed = true; typed_field = kInt32Data; break;
    case DataType::kUint16: bytes = 2; typed_field = kInt32Data; break;
    case DataType::kInt32: bytes = 4; is_signed = true; typed_field = kInt32Data; break;
    case DataType::kUint32: bytes = 4; typed_field = kUint64Data; break;
    case DataType::kInt64: bytes = 8; is_signed = true; typed_field = kInt64Data; break;
    case DataType::kUint64: bytes = 8; typed_field = kUint64Data; break;
    default: return Result();  // not an integer type decoded at load time
  }
  if (meta.external || numel < 0) return Result();

  std::vector<int64_t> values;
  values.reserve(static_cast<size_t>(numel));
  bool too_big = false;
  if (meta.has_raw_data) {
    if (meta.raw_size != static_cast<uint64_t>(numel) * static_cast<uint64_t>(bytes)) return Result();
    const uint8_t* raw = field.data + (meta.raw_offset - field.data_offset);
    for (int64_t i = 0; i < numel; ++i) {
      uint64_t u = wire::LoadLittleEndian(raw + i * bytes, bytes);
      if (is_signed && bytes < 8 && (u >> (bytes * 8 - 1)) != 0) u |= ~uint64_t{0} << (bytes * 8);
      if (!is_signed && bytes == 8 && u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        too_big = true;
      }
      values.push_back(static_cast<int64_t>(u));
    }
    if (too_big) return Result();
    return Result(std::move(values));
  }

  Reader r = Reader::Sub(field);
  Field f;
  int64_t count = 0;
  while (r.Next(f)) {
    if (f.number != typed_field) continue;
    if (!IsVarint(f) && !IsLen(f)) return CorruptProtobuf(f.offset);
    bool ok = wire::ForEachVarint(f, [&](uint64_t v) {
      ++count;
      if (count > numel) return;
      int64_t x = 0;
      if (typed_field == kInt32Data) {
        x = static_cast<int32_t>(static_cast<uint32_t>(v));
      } else if (type == DataType::kUint32) {
        x = static_cast<int64_t>(v & 0xFFFFFFFFu);
      } else {
        if (type == DataType::kUint64 && v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          too_big = true;
        }
        x = static_cast<int64_t>(v);
      }
      values.push_back(x);
    });
    if (!ok) return CorruptProtobuf(f.data_offset);
  }
  if (r.failed()) return CorruptProtobuf(r.error_offset());
  if (count != numel) {
    return InvalidInput("initializer '" + meta.name + "' holds " + std::to_string(count) +
                        " values, but its dims " + DimsText(meta.dims) + " need " +
                        std::to_string(numel));
  }
  if (too_big) return Result();
  return Result(std::move(values));
}

}  // namespace memopt::io

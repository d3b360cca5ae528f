// Metadata of an initializer (TensorProto / SparseTensorProto) read straight from the wire format:
// name, dims, data type and where the data lives. Weight bytes are never read; only small integer
// tensors are decoded, because shape arithmetic needs their values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/wire_reader.h"
#include "ir/dtype.h"
#include "util/status.h"

namespace memopt::io {

/// The error every malformed-protobuf path reports.
Status CorruptProtobuf(uint64_t offset);

struct TensorMeta {
  std::string name;
  std::vector<int64_t> dims;
  int32_t data_type = 0;
  bool is_sparse = false;
  /// The (Sparse)TensorProto message, absolute offset and size in the file.
  uint64_t message_offset = 0;
  uint64_t message_size = 0;
  bool has_raw_data = false;
  uint64_t raw_offset = 0;  ///< absolute offset of the raw_data payload
  uint64_t raw_size = 0;
  bool has_typed_data = false;  ///< some non-empty float_data/int32_data/... field
  bool external = false;        ///< data_location == EXTERNAL
  std::vector<std::pair<std::string, std::string>> external_entries;  ///< key, value
};

/// Reads the metadata of the TensorProto in `field` (a length-delimited field).
Expected<TensorMeta> ReadTensorMeta(const wire::Field& field);
/// Reads a SparseTensorProto: the name and type of its `values`, the dense `dims`.
Expected<TensorMeta> ReadSparseTensorMeta(const wire::Field& field);

/// Product of dims; an error naming the tensor for negative dims or int64 overflow.
Expected<int64_t> CheckedNumElements(const std::vector<int64_t>& dims, const std::string& what);
/// Bytes of `numel` elements of `type` (4-bit types pack two per byte); nullopt for string /
/// undefined types and on overflow.
std::optional<uint64_t> DataBytes(DataType type, int64_t numel);

/// Decodes the values of a small integer (or bool) tensor from raw_data or int32_data/int64_data/
/// uint64_data of the TensorProto in `field`. Returns nullopt when the type is not decoded (float,
/// 4-bit, uint64 values above INT64_MAX, ...). A value count that contradicts `numel` is an error
/// naming the tensor.
Expected<std::optional<std::vector<int64_t>>> DecodeSmallIntTensor(const wire::Field& field,
                                                                  const TensorMeta& meta,
                                                                  int64_t numel);

}  // namespace memopt::io

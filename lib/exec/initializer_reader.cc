#include "exec/initializer_reader.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "exec/executor.h"
#include "exec/tensor_io.h"

namespace memopt {

int64_t InitializerBytes(const InitializerInfo& info) { return NumElements(info.dims) * ElemByteSize(info.dtype); }

Status InitializerReader::EnsureSource() {
  if (opened_) return Status::Ok();
  MEMOPT_RETURN_IF_ERROR(bytes_.Open(model_, "inline initializers cannot be read"));
  data_ = bytes_.data();
  size_ = bytes_.size();
  opened_ = true;
  return Status::Ok();
}

Expected<Tensor> InitializerReader::Read(ValueId value) {
  const Value& v = model_.graph.value(value);
  const std::string what = "initializer '" + v.name + "'";
  if (!v.initializer.has_value()) return InternalError(v.name + " is not an initializer");
  const InitializerInfo& info = *v.initializer;
  if (info.is_sparse) return Unsupported(what + " is a sparse tensor; the executor reads dense initializers only");
  switch (info.dtype) {
    case DataType::kUndefined: case DataType::kComplex64: case DataType::kComplex128: case DataType::kUint4:
    case DataType::kInt4: case DataType::kFloat4E2M1:
      return Unsupported(what + ": data type '" + DataTypeName(info.dtype) + "' is not supported by the executor");
    default:
      break;
  }

  if (info.owned_proto != nullptr) {
    onnx::TensorProto proto;
    if (!proto.ParseFromString(*info.owned_proto)) return InternalError(what + ": its TensorProto does not parse");
    auto t = TensorFromProto(proto, model_.base_dir);
    if (!t.ok()) return t.status().WithContext(what);
    return t;
  }
  if (info.storage == InitializerInfo::Storage::kExternal) {
    MEMOPT_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(info.dtype, info.dims, what));
    const uint64_t want = static_cast<uint64_t>(t.bytes());
    if (info.external_length.has_value() && *info.external_length != want) {
      return InvalidInput(what + ": external data length " + std::to_string(*info.external_length) +
                          " does not match the " + std::to_string(want) + " bytes of " + t.Describe());
    }
    const std::filesystem::path path = std::filesystem::path(model_.base_dir) / info.external_location;
    std::ifstream in(path, std::ios::binary);
    if (!in) return InvalidInput(what + ": cannot open external data file " + path.string());
    in.seekg(static_cast<std::streamoff>(info.external_offset));
    in.read(static_cast<char*>(t.raw()), static_cast<std::streamsize>(want));
    if (!in || static_cast<uint64_t>(in.gcount()) != want) {
      return InvalidInput(what + ": external data file " + path.string() + " ends before offset " +
                          std::to_string(info.external_offset) + " + " + std::to_string(want) + " bytes");
    }
    return t;
  }

  MEMOPT_RETURN_IF_ERROR(EnsureSource());
  if (info.raw_data_offset.has_value() && info.dtype != DataType::kString) {
    MEMOPT_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(info.dtype, info.dims, what));
    if (static_cast<int64_t>(info.raw_data_length) != t.bytes()) {
      return InvalidInput(what + ": raw_data has " + std::to_string(info.raw_data_length) + " bytes, " +
                          t.Describe() + " needs " + std::to_string(t.bytes()));
    }
    if (*info.raw_data_offset > size_ || info.raw_data_length > size_ - *info.raw_data_offset) {
      return InvalidInput(what + ": raw_data lies outside the model file");
    }
    if (info.raw_data_length > 0) std::memcpy(t.raw(), data_ + *info.raw_data_offset, info.raw_data_length);
    MEMOPT_RETURN_IF_ERROR(bytes_.Intact());  // a file that shrank under the copy gave zeros
    if (info.dtype == DataType::kBool) {
      for (int64_t i = 0; i < t.numel(); ++i) t.data<uint8_t>()[i] = t.data<uint8_t>()[i] != 0 ? 1 : 0;
    }
    return t;
  }
  if (info.file_offset > size_ || info.file_length > size_ - info.file_offset || info.file_length > INT32_MAX) {
    return InvalidInput(what + ": the TensorProto lies outside the model data");
  }
  onnx::TensorProto proto;
  const bool parsed = proto.ParseFromArray(data_ + info.file_offset, static_cast<int>(info.file_length));
  MEMOPT_RETURN_IF_ERROR(bytes_.Intact());
  if (!parsed) {
    return InvalidInput(what + ": cannot parse its TensorProto at byte " + std::to_string(info.file_offset));
  }
  auto t = TensorFromProto(proto, model_.base_dir);
  if (!t.ok()) return t.status().WithContext(what);
  return t;
}

Expected<Tensor> ReadInitializer(const Model& model, ValueId value) {
  InitializerReader reader(model);
  return reader.Read(value);
}

}  // namespace memopt

// TensorProto <-> Tensor. Every data field of TensorProto is read (raw_data as little-endian
// bytes, the typed repeated fields with ONNX's packing rules, external data relative to a base
// folder); tensors are written back as raw_data (string_data for strings).
#include "exec/tensor_io.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <optional>
#include <fstream>
#include <limits>

#include "exec/output_gradients.h"
#include "io/atomic_write.h"

namespace memopt {

namespace {

std::string Named(const onnx::TensorProto& proto) {
  return proto.name().empty() ? std::string("tensor") : "tensor '" + proto.name() + "'";
}

/// Types whose values the executor can hold (sub-byte and complex types are not).
bool Loadable(DataType t) {
  switch (t) {
    case DataType::kUint4: case DataType::kInt4: case DataType::kFloat4E2M1: case DataType::kComplex64:
    case DataType::kComplex128: case DataType::kUndefined:
      return false;
    default:
      return true;
  }
}

Status CountMismatch(const onnx::TensorProto& proto, const char* field, int64_t got, int64_t numel) {
  return InvalidInput(Named(proto) + ": " + field + " holds " + std::to_string(got) + " values but the shape has " +
                      std::to_string(numel) + " elements");
}

/// The typed data field ONNX uses for `dtype`: its name and how many values it holds.
struct TypedField {
  const char* name;
  int64_t count;
};
TypedField TypedData(const onnx::TensorProto& proto, DataType dtype) {
  switch (dtype) {
    case DataType::kString: return {"string_data", proto.string_data_size()};
    case DataType::kFloat: return {"float_data", proto.float_data_size()};
    case DataType::kDouble: return {"double_data", proto.double_data_size()};
    case DataType::kInt64: return {"int64_data", proto.int64_data_size()};
    case DataType::kUint64: case DataType::kUint32: return {"uint64_data", proto.uint64_data_size()};
    default: return {"int32_data", proto.int32_data_size()};
  }
}

/// Where a tensor's external data lies.
struct ExternalRef {
  std::filesystem::path path;
  uint64_t offset = 0;
};

/// Parses the external_data entries (location, offset, length) and checks, before anything is
/// allocated, that the length matches `bytes` (the shape's size, `what` describes it) and that the
/// file holds that many bytes at the offset.
Expected<ExternalRef> LocateExternal(const onnx::TensorProto& proto, const std::string& base_dir, uint64_t bytes,
                                     const std::string& what) {
  std::string location;
  ExternalRef ref;
  std::optional<uint64_t> length;
  for (const auto& entry : proto.external_data()) {
    try {
      if (entry.key() == "location") location = entry.value();
      if (entry.key() == "offset") ref.offset = std::stoull(entry.value());
      if (entry.key() == "length") length = std::stoull(entry.value());
    } catch (const std::exception&) {
      return InvalidInput(Named(proto) + ": external data entry '" + entry.key() + "' is not a number: '" +
                          entry.value() + "'");
    }
  }
  if (location.empty()) return InvalidInput(Named(proto) + ": external data has no location");
  ref.path = std::filesystem::path(base_dir) / location;
  if (length.has_value() && *length != bytes) {
    return InvalidInput(Named(proto) + ": external data length " + std::to_string(*length) + " does not match " +
                        std::to_string(bytes) + " bytes of " + what);
  }
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(ref.path, ec);
  if (ec) return InvalidInput(Named(proto) + ": cannot open external data file " + ref.path.string());
  if (ref.offset > size || size - ref.offset < bytes) {
    return InvalidInput(Named(proto) + ": external data file " + ref.path.string() + " is shorter than offset " +
                        std::to_string(ref.offset) + " + " + std::to_string(bytes) + " bytes");
  }
  return ref;
}

/// Reads the located external data into `out` (its size was checked by LocateExternal).
Status ReadExternal(const onnx::TensorProto& proto, const ExternalRef& ref, Tensor& out) {
  const uint64_t want = static_cast<uint64_t>(out.bytes());
  std::ifstream in(ref.path, std::ios::binary);
  if (!in) return InvalidInput(Named(proto) + ": cannot open external data file " + ref.path.string());
  in.seekg(static_cast<std::streamoff>(ref.offset));
  in.read(static_cast<char*>(out.raw()), static_cast<std::streamsize>(want));
  if (!in || static_cast<uint64_t>(in.gcount()) != want) {
    return InvalidInput(Named(proto) + ": external data file " + ref.path.string() + " is shorter than offset " +
                        std::to_string(ref.offset) + " + " + std::to_string(want) + " bytes");
  }
  return Status::Ok();
}

/// int32_data: int32 itself, and the narrower types ONNX packs there (one value per entry; the
/// 16-bit floats as their bit patterns).
Status FromInt32Data(const onnx::TensorProto& proto, Tensor& t) {
  const auto& src = proto.int32_data();
  const int64_t n = t.numel();
  void* p = t.raw();
  for (int64_t i = 0; i < n; ++i) {
    const int32_t v = src[static_cast<int>(i)];
    switch (t.dtype()) {
      case DataType::kInt32: static_cast<int32_t*>(p)[i] = v; break;
      case DataType::kInt16: static_cast<int16_t*>(p)[i] = static_cast<int16_t>(v); break;
      case DataType::kUint16: case DataType::kFloat16: case DataType::kBfloat16:
        static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(v);
        break;
      case DataType::kInt8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); break;
      case DataType::kBool: static_cast<uint8_t*>(p)[i] = v != 0 ? 1 : 0; break;
      default: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); break;  // uint8, float8
    }
  }
  return Status::Ok();
}

}  // namespace

Expected<Tensor> TensorFromProto(const onnx::TensorProto& proto, const std::string& base_dir) {
  if (!IsKnownDataType(proto.data_type())) {
    return InvalidInput(Named(proto) + ": unknown data type " + std::to_string(proto.data_type()));
  }
  const auto dtype = static_cast<DataType>(proto.data_type());
  if (!Loadable(dtype)) {
    return Unsupported(Named(proto) + ": data type '" + DataTypeName(dtype) + "' is not supported by the executor");
  }
  std::vector<int64_t> dims;
  int64_t numel = 1;
  for (int64_t d : proto.dims()) {
    if (d < 0) return InvalidInput(Named(proto) + ": negative dim " + std::to_string(d));
    if (d != 0 && numel > std::numeric_limits<int64_t>::max() / d) {
      return InvalidInput(Named(proto) + ": element count overflows int64");
    }
    numel *= d;
    dims.push_back(d);
  }
  // Check that the proto can supply the data before allocating: a garbage or hostile shape
  // (e.g. another message parsed as a TensorProto) must not allocate terabytes.
  const int64_t elem = dtype == DataType::kString ? 1 : ElemByteSize(dtype);
  if (elem > 0 && numel > std::numeric_limits<int64_t>::max() / elem) {
    return InvalidInput(Named(proto) + ": byte size overflows int64");
  }
  std::string shape;
  for (int64_t d : dims) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
  const std::string what = DataTypeName(dtype) + "[" + shape + "]";
  const bool external = proto.data_location() == onnx::TensorProto::EXTERNAL;
  const bool raw = !external && dtype != DataType::kString && proto.has_raw_data();
  const TypedField typed = TypedData(proto, dtype);
  ExternalRef ref;
  if (external) {
    if (dtype == DataType::kString) return InvalidInput(Named(proto) + ": string tensors cannot use external data");
    MEMOPT_ASSIGN_OR_RETURN(ref, LocateExternal(proto, base_dir, static_cast<uint64_t>(numel * elem), what));
  } else if (raw) {
    if (static_cast<int64_t>(proto.raw_data().size()) != numel * elem) {
      return InvalidInput(Named(proto) + ": raw_data has " + std::to_string(proto.raw_data().size()) + " bytes, " +
                          what + " needs " + std::to_string(numel * elem));
    }
  } else if ((numel > 0 || dtype == DataType::kString) && typed.count != numel) {
    return CountMismatch(proto, typed.name, typed.count, numel);
  }

  Tensor t(dtype, dims);
  const int n = static_cast<int>(numel);
  if (external) {
    MEMOPT_RETURN_IF_ERROR(ReadExternal(proto, ref, t));
    return t;
  }
  if (dtype == DataType::kString) {
    for (int i = 0; i < n; ++i) t.strings()[i] = proto.string_data(i);
    return t;
  }
  if (raw) {
    const std::string& bytes = proto.raw_data();
    if (!bytes.empty()) std::memcpy(t.raw(), bytes.data(), bytes.size());  // little-endian host
    if (dtype == DataType::kBool) {
      for (int64_t i = 0; i < numel; ++i) t.data<uint8_t>()[i] = t.data<uint8_t>()[i] != 0 ? 1 : 0;
    }
    return t;
  }
  if (numel == 0) return t;

  switch (dtype) {
    case DataType::kFloat:
      std::memcpy(t.raw(), proto.float_data().data(), sizeof(float) * static_cast<size_t>(n));
      return t;
    case DataType::kDouble:
      std::memcpy(t.raw(), proto.double_data().data(), sizeof(double) * static_cast<size_t>(n));
      return t;
    case DataType::kInt64:
      std::memcpy(t.raw(), proto.int64_data().data(), sizeof(int64_t) * static_cast<size_t>(n));
      return t;
    case DataType::kUint64:
    case DataType::kUint32:
      for (int i = 0; i < n; ++i) {
        if (dtype == DataType::kUint64) {
          t.data<uint64_t>()[i] = proto.uint64_data(i);
        } else {
          t.data<uint32_t>()[i] = static_cast<uint32_t>(proto.uint64_data(i));
        }
      }
      return t;
    default:
      MEMOPT_RETURN_IF_ERROR(FromInt32Data(proto, t));
      return t;
  }
}

onnx::TensorProto TensorToProto(const Tensor& tensor, const std::string& name) {
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(static_cast<int32_t>(tensor.dtype()));
  for (int64_t d : tensor.shape()) proto.add_dims(d);
  if (tensor.dtype() == DataType::kString) {
    for (const auto& s : tensor.strings()) proto.add_string_data(s);
  } else {
    proto.set_raw_data(static_cast<const char*>(tensor.raw()), static_cast<size_t>(tensor.bytes()));
  }
  return proto;
}

Expected<Tensor> ReadTensorFile(const std::string& path, std::string* name) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidInput(path + ": cannot open tensor file");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) return InvalidInput(path + ": not a serialized TensorProto");
  std::string dir = std::filesystem::path(path).parent_path().string();
  auto tensor = TensorFromProto(proto, dir.empty() ? "." : dir);
  if (!tensor.ok()) return tensor.status().WithContext(path);
  if (name != nullptr) *name = proto.name();
  return tensor;
}

Status WriteTensorFile(const std::string& path, const Tensor& tensor, const std::string& name) {
  const onnx::TensorProto proto = TensorToProto(tensor, name);
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) {
    return InvalidInput(path + ": tensor '" + name + "' is too large for a TensorProto (2 GB)");
  }
  return WriteFileAtomically(path, bytes);
}

}  // namespace memopt

namespace memopt {

namespace {

/// The <i> of "<prefix><i>", or nullopt.
std::optional<size_t> NumberedStem(const std::string& stem, const std::string& prefix) {
  if (stem.rfind(prefix, 0) != 0 || stem.size() == prefix.size() || stem.size() > prefix.size() + 9) return std::nullopt;
  for (size_t i = prefix.size(); i < stem.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(stem[i]))) return std::nullopt;
  }
  return static_cast<size_t>(std::stoul(stem.substr(prefix.size())));
}

}  // namespace

Expected<std::map<std::string, Tensor>> ReadInputDir(const std::string& dir, const Graph& graph,
                                                     std::map<std::string, ExpectedOutput>* expected,
                                                     std::map<std::string, Tensor>* output_grads) {
  const std::map<std::string, std::string> gradient_names =
      output_grads != nullptr ? YieldGradientNames(graph) : std::map<std::string, std::string>{};
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return InvalidInput(dir + ": not a folder (--inputs expects a folder of .pb files)");
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".pb") files.push_back(entry.path());
  }
  if (ec) return InvalidInput(dir + ": cannot list the folder: " + ec.message());
  std::sort(files.begin(), files.end());
  std::map<std::string, Tensor> feeds;
  std::map<std::string, std::string> source;  // input or output name -> file
  for (const fs::path& file : files) {
    std::string name;
    MEMOPT_ASSIGN_OR_RETURN(Tensor t, ReadTensorFile(file.string(), &name));
    const ValueId by_name = name.empty() ? kNone : graph.FindValue(name);
    const std::string stem = file.stem().string();
    const std::optional<size_t> input_index = NumberedStem(stem, "input_");
    const std::optional<size_t> output_index = NumberedStem(stem, "output_");
    std::string input, output, gradient;
    if (auto g = gradient_names.find(name); g != gradient_names.end()) {
      gradient = g->second;
    } else if (auto gs = gradient_names.find(stem); gs != gradient_names.end() && by_name == kNone) {
      gradient = gs->second;
    }
    if (!gradient.empty()) {
      auto [it, inserted] = source.emplace("gradient " + gradient, file.string());
      if (!inserted) {
        return InvalidInput("the gradient '" + gradient + "' is given twice: " + it->second + " and " + file.string());
      }
      output_grads->emplace(gradient, std::move(t));
      continue;
    }
    if (by_name != kNone && graph.value(by_name).is_graph_input) {
      input = name;
    } else if (input_index.has_value() && *input_index < graph.inputs.size()) {
      input = graph.value(graph.inputs[*input_index]).name;
    } else if (by_name != kNone && graph.value(by_name).is_graph_output) {
      output = name;
    } else if (output_index.has_value() && *output_index < graph.outputs.size()) {
      output = graph.value(graph.outputs[*output_index]).name;
    } else {
      std::string why = " matches no graph input or output by name";
      if (input_index) why += " and the model has only " + std::to_string(graph.inputs.size()) + " inputs";
      else if (output_index) why += " and the model has only " + std::to_string(graph.outputs.size()) + " outputs";
      else why += " and the file is not named input_<i>.pb or output_<i>.pb";
      return InvalidInput(file.string() + ": tensor '" + name + "'" + why);
    }
    const std::string& key = input.empty() ? output : input;
    auto [it, inserted] = source.emplace(key, file.string());
    if (!inserted) {
      return InvalidInput(std::string(input.empty() ? "output '" : "input '") + key + "' is given twice: " +
                          it->second + " and " + file.string());
    }
    if (!input.empty()) {
      feeds.emplace(input, std::move(t));
    } else if (expected != nullptr) {
      expected->emplace(output, ExpectedOutput{std::move(t), file.string()});
    }
  }
  return feeds;
}

std::string OutputFileName(const std::string& value_name) {
  std::string s = value_name;
  for (char& c : s) {
    if (c == '/' || c == ':' || c == '\\') c = '_';
  }
  return s + ".pb";
}

}  // namespace memopt

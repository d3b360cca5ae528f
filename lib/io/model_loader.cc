// LoadModel and friends: map the file, walk the wire format (model_walk), build the IR and check
// what the analysis relies on (one producer per tensor, every input defined, external data
// present, inline data sizes consistent with the dims).
#include "io/model_loader.h"

#include <fcntl.h>
#include <onnx/defs/parser.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>

#include "io/function_inliner.h"
#include "io/initializer_check.h"
#include "io/mapped_file.h"
#include "io/model_walk.h"
#include "ir/op_key.h"
#include "shape/fold_known_ifs.h"
#include "shape/lower_sequences.h"

namespace memopt {

namespace {

// The wire walker reads every field memopt needs and skips the others, so a model of a newer IR
// version or opset than these loads, with a warning (Model::warnings): its new fields are
// ignored, and its ops are read with the definitions memopt knows.
constexpr int64_t kMinIrVersion = 3;
constexpr int64_t kNewestKnownIrVersion = 13;  // ONNX 1.19+ writes 12 and 13
constexpr int64_t kNewestKnownOnnxOpset = 28;  // newest opset in the ONNX backend node tests
constexpr int64_t kTextDefaultIrVersion = 8;

/// Builds TensorInfo from type protos, naming unknown dims unk__0, unk__1, ... per model.
class TypeConverter {
 public:
  /// Fills what `info` does not know yet (dtype, shape) from `type`.
  void MergeInto(const onnx::TypeProto& type, TensorInfo& info) {
    switch (type.value_case()) {
      case onnx::TypeProto::kTensorType: {
        const auto& t = type.tensor_type();
        if (info.dtype == DataType::kUndefined && IsKnownDataType(t.elem_type())) {
          info.dtype = static_cast<DataType>(t.elem_type());
        }
        if (!info.shape.has_value() && t.has_shape()) info.shape = Convert(t.shape());
        break;
      }
      case onnx::TypeProto::VALUE_NOT_SET:
        break;
      default:  // sequence, map, optional, sparse tensor, opaque: never sized
        info.is_tensor = false;
        break;
    }
  }

 private:
  Shape Convert(const onnx::TensorShapeProto& proto) {
    Shape shape;
    shape.reserve(static_cast<size_t>(proto.dim_size()));
    for (const auto& dim : proto.dim()) {
      if (dim.has_dim_value() && dim.dim_value() >= 0) {
        shape.emplace_back(static_cast<int64_t>(dim.dim_value()));
        continue;
      }
      std::string param = dim.has_dim_param() ? Trim(dim.dim_param()) : std::string();
      if (param.empty()) param = "unk__" + std::to_string(next_unknown_++);
      shape.push_back(SymExpr::Symbol(param));
    }
    return shape;
  }

  static std::string Trim(const std::string& s) {
    const char* ws = " \t\r\n";
    const auto b = s.find_first_not_of(ws);
    if (b == std::string::npos) return {};
    return s.substr(b, s.find_last_not_of(ws) - b + 1);
  }

  int next_unknown_ = 0;
};

std::string Quote(const std::string& s) { return "'" + s + "'"; }

/// A declared shape whose byte count no 64-bit integer holds (float[2^40, 2^40]) is an error naming
/// the tensor; otherwise its size would silently count as unknown. Symbolic dims count as 1 here,
/// so [batch, 2^62] is caught too.
Status CheckDeclaredByteCounts(const Graph& g) {
  for (const auto& value : g.values) {
    const TensorInfo& info = value.info;
    if (!info.is_tensor || !info.shape.has_value()) continue;
    int64_t bytes = std::max<int64_t>(ElemByteSize(info.dtype), 1);
    for (const auto& dim : *info.shape) {
      const auto c = dim.AsInt();
      if (!c.has_value() || !__builtin_mul_overflow(bytes, *c, &bytes)) continue;
      return InvalidInput("tensor " + Quote(value.name) + " declares shape " + ShapeToString(*info.shape) + " (" +
                          DataTypeName(info.dtype) +
                          "), whose byte count overflows 64 bits; fix the dims in the model");
    }
  }
  return Status::Ok();
}

/// Rejects what no reader can make sense of (no graph, an IR version before 3, a negative opset
/// version); versions newer than memopt knows add a warning.
Status CheckHeader(const io::RawModel& raw, std::vector<std::string>& warnings) {
  if (!raw.has_graph) return InvalidInput("model has no graph");
  if (!raw.has_ir_version) {
    return InvalidInput("model has no ir_version (memopt reads ir_version " + std::to_string(kMinIrVersion) +
                        " and newer)");
  }
  const std::string ir = std::to_string(raw.ir_version);
  if (raw.ir_version <= 0) {
    return InvalidInput("invalid ir_version " + ir + " (memopt reads ir_version " + std::to_string(kMinIrVersion) +
                        " and newer)");
  }
  if (raw.ir_version < kMinIrVersion) {
    return InvalidInput("unsupported ir_version " + ir + " (memopt reads ir_version " + std::to_string(kMinIrVersion) +
                        " and newer)");
  }
  if (raw.ir_version > kNewestKnownIrVersion) {
    warnings.push_back("ir_version " + ir + " is newer than memopt knows (" + std::to_string(kNewestKnownIrVersion) +
                       "); loaded anyway, fields added since are ignored");
  }
  for (const auto& [domain, version] : raw.opsets) {
    const bool onnx = domain.empty() || domain == "ai.onnx";
    const std::string name = onnx ? "the ai.onnx domain" : "domain " + Quote(domain);
    if (version < 0) return InvalidInput("invalid opset version " + std::to_string(version) + " for " + name);
    if (onnx && version > kNewestKnownOnnxOpset) {
      warnings.push_back("opset " + std::to_string(version) + " of the ai.onnx domain is newer than memopt knows (" +
                         std::to_string(kNewestKnownOnnxOpset) + "); loaded anyway, ops are read as in opset " +
                         std::to_string(kNewestKnownOnnxOpset));
    }
  }
  return Status::Ok();
}

/// What provides a tensor, for the "produced twice" message.
std::string ProviderText(const Graph& g, ValueId v, const std::vector<NodeId>& producer,
                         const std::vector<bool>& is_input) {
  if (producer[v] != kNone) return "node " + g.nodes[producer[v]].Describe();
  if (is_input[v]) return "graph input " + Quote(g.values[v].name);
  return "initializer " + Quote(g.values[v].name);
}

Expected<Model> BuildModel(io::RawModel& raw, Model model, const LoadOptions& options) {
  MEMOPT_RETURN_IF_ERROR(CheckHeader(raw, model.warnings));
  MEMOPT_ASSIGN_OR_RETURN(io::InlineStats inlined, io::InlineLocalFunctions(raw));
  model.inlined_calls = inlined.calls;
  model.inlined_functions = std::move(inlined.functions);
  for (auto& w : inlined.warnings) model.warnings.push_back(std::move(w));
  model.ir_version = raw.ir_version;
  model.producer_name = raw.producer_name;
  model.producer_version = raw.producer_version;
  Graph& g = model.graph;
  g.name = raw.graph.name;
  model.graph_metadata = raw.graph.metadata;
  for (const auto& [domain, version] : raw.opsets) {
    g.opsets[domain == "ai.onnx" ? std::string() : domain] = version;
  }

  TypeConverter types;
  std::vector<bool> is_input;
  auto grow = [&]() {
    if (is_input.size() < g.values.size()) is_input.resize(g.values.size(), false);
  };

  // Graph inputs.
  for (size_t i = 0; i < raw.graph.inputs.size(); ++i) {
    const auto& vi = raw.graph.inputs[i];
    if (vi.name().empty()) return InvalidInput("graph input #" + std::to_string(i) + " has no name");
    const ValueId v = g.GetOrAddValue(vi.name());
    grow();
    if (is_input[v]) return InvalidInput("graph input " + Quote(vi.name()) + " is listed twice");
    is_input[v] = true;
    g.inputs.push_back(v);
    types.MergeInto(vi.type(), g.values[v].info);
  }

  // Initializers (metadata, checks, small integer values).
  io::InitializerChecker checker(model.base_dir, options.check_external_data);
  for (auto& init : raw.graph.initializers) {
    if (init.meta.name.empty()) {
      return InvalidInput("initializer at byte " + std::to_string(init.meta.message_offset) + " has no name");
    }
    const ValueId v = g.GetOrAddValue(init.meta.name);
    grow();
    Value& value = g.values[v];
    if (value.initializer.has_value()) return InvalidInput("initializer " + Quote(init.meta.name) + " is listed twice");
    MEMOPT_ASSIGN_OR_RETURN(io::CheckedInitializer checked, checker.Check(init.meta, init.field));
    value.initializer = std::move(checked.info);
    value.info.dtype = value.initializer->dtype;
    value.info.is_tensor = true;
    Shape shape;
    for (int64_t d : value.initializer->dims) shape.emplace_back(d);
    value.info.shape = std::move(shape);
    if (checked.values.has_value()) {
      std::vector<SymExpr> known;
      known.reserve(checked.values->size());
      for (int64_t x : *checked.values) known.emplace_back(x);
      value.known_values = std::move(known);
    }
  }

  // Nodes, in proto order; each tensor has one producer.
  std::vector<NodeId> producer;
  g.nodes.reserve(raw.graph.nodes.size());
  for (size_t i = 0; i < raw.graph.nodes.size(); ++i) {
    onnx::NodeProto& proto = raw.graph.nodes[i];
    Node node;
    node.id = static_cast<NodeId>(i);
    node.name = proto.name();
    node.op_type = proto.op_type();
    node.domain = NormalizeDomain(proto.domain());
    if (node.op_type.empty()) return InvalidInput("node #" + std::to_string(i) + " has no op_type");
    for (const auto& in : proto.input()) node.inputs.push_back(in.empty() ? kNone : g.GetOrAddValue(in));
    for (const auto& out : proto.output()) {
      if (out.empty()) {
        node.outputs.push_back(kNone);
        continue;
      }
      const ValueId v = g.GetOrAddValue(out);
      grow();
      if (producer.size() < g.values.size()) producer.resize(g.values.size(), kNone);
      if (producer[v] != kNone || is_input[v] || g.values[v].initializer.has_value()) {
        g.nodes.push_back(node);  // so that Describe() of an earlier producer works
        return InvalidInput("tensor " + Quote(out) + " is produced twice: by " +
                            ProviderText(g, v, producer, is_input) + " and node " + node.Describe());
      }
      producer[v] = node.id;
      node.outputs.push_back(v);
    }
    proto.clear_input();  // the edges live in node.inputs / node.outputs only
    proto.clear_output();
    node.proto = std::move(proto);
    if (i < raw.graph.node_modules.size()) node.module = std::move(raw.graph.node_modules[i]);
    g.nodes.push_back(std::move(node));
  }
  grow();
  producer.resize(g.values.size(), kNone);

  // Graph outputs and value_info.
  for (size_t i = 0; i < raw.graph.outputs.size(); ++i) {
    const auto& vi = raw.graph.outputs[i];
    if (vi.name().empty()) return InvalidInput("graph output #" + std::to_string(i) + " has no name");
    const ValueId v = g.GetOrAddValue(vi.name());
    g.outputs.push_back(v);
    types.MergeInto(vi.type(), g.values[v].info);
  }
  for (const auto& vi : raw.graph.value_info) {
    if (vi.name().empty()) continue;
    const ValueId v = g.GetOrAddValue(vi.name());
    model.value_info.push_back(v);
    types.MergeInto(vi.type(), g.values[v].info);
  }
  grow();
  producer.resize(g.values.size(), kNone);
  MEMOPT_RETURN_IF_ERROR(CheckDeclaredByteCounts(g));

  // Every node input and graph output must be provided by something.
  auto provided = [&](ValueId v) { return producer[v] != kNone || is_input[v] || g.values[v].initializer.has_value(); };
  for (const auto& node : g.nodes) {
    for (ValueId v : node.inputs) {
      if (v != kNone && !provided(v)) {
        return InvalidInput("node " + node.Describe() + " reads tensor " + Quote(g.values[v].name) +
                            " that no node, graph input or initializer provides");
      }
    }
  }
  for (ValueId v : g.outputs) {
    if (!provided(v)) {
      return InvalidInput("graph output " + Quote(g.values[v].name) +
                          " is not produced by any node, graph input or initializer");
    }
  }

  g.RebuildLinks();
  ResolveSinceVersions(g);
  MEMOPT_ASSIGN_OR_RETURN(model.folded_ifs, FoldKnownIfs(g));
  MEMOPT_ASSIGN_OR_RETURN(LowerSequencesStats sequences, LowerSequences(g));
  model.lowered_sequence_ops = sequences.lowered_nodes;
  for (std::string& w : sequences.warnings) model.warnings.push_back(std::move(w));
  return model;
}

Expected<Model> LoadFromBuffer(const uint8_t* data, uint64_t size, Model model, const LoadOptions& options) {
  if (size == 0) return InvalidInput("file is empty, not an ONNX model");
  model.file_size = size;
  io::RawModel raw;
  MEMOPT_RETURN_IF_ERROR(io::WalkModel(data, size, raw));
  return BuildModel(raw, std::move(model), options);
}

/// The whole content of a stream (stdin, a FIFO, a character device), for models that cannot be
/// mapped.
Expected<std::string> ReadStream(const std::string& path) {
  const bool is_stdin = path == "-";
  const int fd = is_stdin ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return InvalidInput(std::string("cannot open the model file: ") + std::strerror(errno));
  std::string bytes;
  std::string buffer(1 << 20, '\0');
  Status status = Status::Ok();
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      status = InvalidInput(std::string("cannot read the model: ") + std::strerror(errno));
      break;
    }
    if (n == 0) break;
    bytes.append(buffer.data(), static_cast<size_t>(n));
  }
  if (!is_stdin) ::close(fd);
  if (!status.ok()) return status;
  if (bytes.empty()) {
    return InvalidInput(is_stdin ? "standard input is empty; pipe an ONNX model into it or give a file path"
                                 : "the stream is empty, not an ONNX model");
  }
  return bytes;
}

bool IsStream(const std::string& path) {
  if (path == "-") return true;
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

}  // namespace

Expected<Model> LoadModel(const std::string& path, const LoadOptions& options) {
  try {
    std::string dir = std::filesystem::path(path).parent_path().string();
    if (IsStream(path)) {
      // External data of a piped model is looked up from the current folder.
      MEMOPT_ASSIGN_OR_RETURN(std::string bytes, ReadStream(path));
      return LoadModelFromBytes(bytes, path == "-" || dir == "/dev" ? "." : dir, options);
    }
    io::MappedFile file;
    MEMOPT_RETURN_IF_ERROR(file.Open(path));
    Model model;
    model.path = path;
    model.file_stamp = file.stamp();
    model.base_dir = dir.empty() ? "." : dir;
    Expected<Model> loaded = LoadFromBuffer(file.data(), file.size(), std::move(model), options);
    // A file that changed under the walk explains any error the walk found.
    MEMOPT_RETURN_IF_ERROR(file.Intact());
    return loaded;
  } catch (const std::exception& e) {
    return InternalError(std::string("unexpected error while loading the model: ") + e.what());
  }
}

Expected<Model> LoadModelFromBytes(std::string_view bytes, const std::string& base_dir, const LoadOptions& options) {
  try {
    Model model;
    model.base_dir = base_dir.empty() ? "." : base_dir;
    model.source_bytes = std::make_shared<const std::string>(bytes);
    return LoadFromBuffer(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), std::move(model), options);
  } catch (const std::exception& e) {
    return InternalError(std::string("unexpected error while loading the model: ") + e.what());
  }
}

Expected<Model> ModelFromProto(const onnx::ModelProto& proto, const std::string& base_dir) {
  try {
    std::string bytes;
    if (proto.ByteSizeLong() > static_cast<size_t>(INT32_MAX) || !proto.SerializeToString(&bytes)) {
      return InvalidInput("model is larger than 2 GB in memory; store its weights as external data");
    }
    return LoadModelFromBytes(bytes, base_dir);
  } catch (const std::exception& e) {
    return InternalError(std::string("unexpected error while loading the model: ") + e.what());
  }
}

Expected<Model> LoadModelFromText(std::string_view text) {
  try {
    const std::string source(text);
    onnx::ModelProto proto;
    onnx::OnnxParser parser(source.c_str());
    const auto status = parser.Parse(proto);
    if (!status.IsOK()) return InvalidInput("cannot parse the ONNX text model: " + status.ErrorMessage());
    if (proto.ir_version() == 0) proto.set_ir_version(kTextDefaultIrVersion);
    return ModelFromProto(proto, ".");
  } catch (const std::exception& e) {
    return InvalidInput(std::string("cannot parse the ONNX text model: ") + e.what());
  }
}

}  // namespace memopt

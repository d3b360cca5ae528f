#include "io/model_walk.h"

#include <climits>

namespace memopt::io {

namespace {

using wire::Field;
using wire::Reader;
using wire::WireType;

// ModelProto field numbers.
constexpr uint32_t kIrVersion = 1, kProducerName = 2, kProducerVersion = 3, kModelDomain = 4,
                   kModelVersion = 5, kModelDoc = 6, kGraph = 7, kOpsetImport = 8,
                   kMetadataProps = 14, kTrainingInfo = 20, kFunctions = 25;
// GraphProto field numbers.
constexpr uint32_t kNode = 1, kGraphName = 2, kInitializer = 5, kGraphDoc = 10, kInput = 11,
                   kOutput = 12, kValueInfo = 13, kQuantAnnotation = 14, kSparseInitializer = 15,
                   kGraphMetadata = 16;
// OperatorSetIdProto field numbers.
constexpr uint32_t kOpsetDomain = 1, kOpsetVersion = 2;

bool IsLen(const Field& f) { return f.type == WireType::kLengthDelimited; }
bool IsVarint(const Field& f) { return f.type == WireType::kVarint; }

template <typename Message>
Status ParseMessage(const Field& f, Message& msg, const std::string& what, size_t index,
                    const char* type_name) {
  if (!IsLen(f)) return CorruptProtobuf(f.offset);
  if (f.size > static_cast<uint64_t>(INT_MAX) ||
      !msg.ParseFromArray(f.data, static_cast<int>(f.size))) {
    return InvalidInput(what + " #" + std::to_string(index) + " is not a valid " +
                        type_name + " (corrupt protobuf at byte " +
                        std::to_string(f.data_offset) + ")");
  }
  return Status::Ok();
}

Status WalkOpset(const Field& field, std::pair<std::string, int64_t>& opset) {
  Reader r = Reader::Sub(field);
  Field f;
  while (r.Next(f)) {
    if (f.number == kOpsetDomain) {
      if (!IsLen(f)) return CorruptProtobuf(f.offset);
      opset.first = std::string(f.AsString());
    } else if (f.number == kOpsetVersion) {
      if (!IsVarint(f)) return CorruptProtobuf(f.offset);
      opset.second = static_cast<int64_t>(f.value);
    }
  }
  if (r.failed()) return CorruptProtobuf(r.error_offset());
  return Status::Ok();
}

// Walks one occurrence of the graph field. Several occurrences merge as protobuf merges them:
// repeated fields append, the name is the last one seen.
Status WalkGraph(const Field& field, RawGraph& graph, std::vector<RawInitializer>& sparse) {
  Reader r = Reader::Sub(field);
  Field f;
  while (r.Next(f)) {
    switch (f.number) {
      case kNode: {
        onnx::NodeProto node;
        MEMOPT_RETURN_IF_ERROR(ParseMessage(f, node, "node", graph.nodes.size(), "NodeProto"));
        graph.nodes.push_back(std::move(node));
        break;
      }
      case kGraphName:
        if (!IsLen(f)) return CorruptProtobuf(f.offset);
        graph.name = std::string(f.AsString());
        break;
      case kInitializer: {
        if (!IsLen(f)) return CorruptProtobuf(f.offset);
        MEMOPT_ASSIGN_OR_RETURN(TensorMeta meta, ReadTensorMeta(f));
        graph.initializers.push_back({std::move(meta), f});
        break;
      }
      case kSparseInitializer: {
        if (!IsLen(f)) return CorruptProtobuf(f.offset);
        MEMOPT_ASSIGN_OR_RETURN(TensorMeta meta, ReadSparseTensorMeta(f));
        sparse.push_back({std::move(meta), f});
        break;
      }
      case kInput: case kOutput: case kValueInfo: {
        auto& list = f.number == kInput ? graph.inputs : f.number == kOutput ? graph.outputs : graph.value_info;
        const char* what = f.number == kInput ? "graph input" : f.number == kOutput ? "graph output" : "value_info";
        onnx::ValueInfoProto vi;
        MEMOPT_RETURN_IF_ERROR(ParseMessage(f, vi, what, list.size(), "ValueInfoProto"));
        list.push_back(std::move(vi));
        break;
      }
      case kGraphMetadata: {
        onnx::StringStringEntryProto entry;
        MEMOPT_RETURN_IF_ERROR(ParseMessage(f, entry, "graph metadata_props entry", graph.metadata.size(),
                                            "StringStringEntryProto"));
        graph.metadata.emplace_back(entry.key(), entry.value());
        break;
      }
      case kGraphDoc: case kQuantAnnotation:
        if (!IsLen(f)) return CorruptProtobuf(f.offset);
        break;
      default:
        break;  // fields of newer IR versions
    }
  }
  if (r.failed()) return CorruptProtobuf(r.error_offset());
  return Status::Ok();
}

}  // namespace

Status WalkModel(const uint8_t* data, uint64_t size, RawModel& model) {
  Reader r(data, size, 0);
  Field f;
  std::vector<RawInitializer> sparse;
  while (r.Next(f)) {
    switch (f.number) {
      case kIrVersion:
        if (!IsVarint(f)) return CorruptProtobuf(f.offset);
        model.has_ir_version = true;
        model.ir_version = static_cast<int64_t>(f.value);
        break;
      case kProducerName: case kProducerVersion:
        if (!IsLen(f)) return CorruptProtobuf(f.offset);
        (f.number == kProducerName ? model.producer_name : model.producer_version) = std::string(f.AsString());
        break;
      case kModelVersion:
        if (!IsVarint(f)) return CorruptProtobuf(f.offset);
        break;
      case kModelDomain: case kModelDoc: case kMetadataProps: case kTrainingInfo:
        if (!IsLen(f)) return CorruptProtobuf(f.offset);
        break;
      case kFunctions: {
        onnx::FunctionProto function;
        MEMOPT_RETURN_IF_ERROR(ParseMessage(f, function, "model-local function", model.functions.size(),
                                            "FunctionProto"));
        model.functions.push_back(std::move(function));
        break;
      }
      case kGraph:
        if (!IsLen(f)) return CorruptProtobuf(f.offset);
        model.has_graph = true;
        MEMOPT_RETURN_IF_ERROR(WalkGraph(f, model.graph, sparse));
        break;
      case kOpsetImport: {
        if (!IsLen(f)) return CorruptProtobuf(f.offset);
        std::pair<std::string, int64_t> opset;
        MEMOPT_RETURN_IF_ERROR(WalkOpset(f, opset));
        model.opsets.push_back(std::move(opset));
        break;
      }
      default:
        break;  // unknown field of a newer IR version: skipped
    }
  }
  if (r.failed()) return CorruptProtobuf(r.error_offset());
  for (auto& s : sparse) model.graph.initializers.push_back(std::move(s));
  return Status::Ok();
}

}  // namespace memopt::io

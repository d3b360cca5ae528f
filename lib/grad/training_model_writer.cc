#include "grad/training_model_writer.h"

#include <filesystem>
#include <map>
#include <set>

#include "io/copy_external_data.h"
#include "io/model_bytes.h"
#include "io/model_fields.h"
#include "io/temp_file.h"
#include "io/wire_reader.h"
#include "io/wire_writer.h"

namespace memopt {
namespace {

namespace fs = std::filesystem;
using wire::Reader;
using wire::WireType;

constexpr uint32_t kModelGraph = io::kModelGraphField;
constexpr uint32_t kGraphNode = 1, kGraphInitializer = 5, kGraphOutput = 12, kGraphValueInfo = 13;
constexpr uint32_t kValueInfoName = 1, kTensorName = 8;

using wire::LengthField;
using wire::PutVarint;

std::string Serialize(const google::protobuf::MessageLite& m) {
  std::string s;
  m.SerializeToString(&s);
  return s;
}

/// The string sub-field `number` of a message field (e.g. a ValueInfoProto's name).
std::string StringSubField(const wire::Field& field, uint32_t number) {
  Reader r = Reader::Sub(field);
  wire::Field f;
  while (r.Next(f)) {
    if (f.number == number && f.type == WireType::kLengthDelimited) return std::string(f.AsString());
  }
  return "";
}

using Sink = io::TempFileSink;

}  // namespace

onnx::ValueInfoProto MakeValueInfo(const Value& value) {
  onnx::ValueInfoProto vi;
  vi.set_name(value.name);
  auto* tensor = vi.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(static_cast<int32_t>(value.info.dtype));
  if (value.info.shape) {
    auto* shape = tensor->mutable_shape();
    for (const SymExpr& d : *value.info.shape) {
      auto* dim = shape->add_dim();
      if (auto v = d.AsInt()) {
        dim->set_dim_value(*v);
      } else {
        dim->set_dim_param(d.ToString());
      }
    }
  }
  return vi;
}

Expected<TrainingModelWriteReport> WriteTrainingModel(const GradResult& result, const std::string& output_path) {
  const Model& model = result.model;
  const Graph& graph = model.graph;
  MEMOPT_RETURN_IF_ERROR(io::CheckOutputPath(output_path, model.path));
  io::ModelBytes bytes;
  MEMOPT_RETURN_IF_ERROR(bytes.Open(model, "cannot write it"));
  const uint8_t* data = bytes.data();
  const uint64_t size = bytes.size();
  const std::string source = model.path.empty() ? "<model bytes>" : model.path;
  auto corrupt = [&](uint64_t at) {
    return InvalidInput(source + ": corrupt protobuf at byte " + std::to_string(at) + "; cannot write the model");
  };

  // Pieces of the new graph: byte ranges of the input, or new bytes.
  struct Piece {
    uint64_t begin = 0, end = 0;  ///< a byte range of the input, or
    std::string bytes;            ///< new bytes (when begin == end)
    bool nodes = false;           ///< placeholder for the node list
  };
  std::vector<Piece> top, pieces;
  std::map<std::string, std::pair<uint64_t, uint64_t>> old_outputs;  // name -> field range
  io::OpsetImports opset_imports;
  bool graph_seen = false, nodes_placed = false, outputs_placed = false;
  size_t graph_top_index = 0, outputs_index = 0;
  Reader r(data, size, 0);
  wire::Field f;
  while (r.Next(f)) {
    opset_imports.See(f);
    if (!io::KeepModelField(result.model, f)) continue;
    if (f.number != kModelGraph) {
      top.push_back({f.offset, r.position(), ""});
      continue;
    }
    if (f.type != WireType::kLengthDelimited) return corrupt(f.offset);
    if (graph_seen) continue;  // a repeated graph field: protobuf merges; ours has one
    graph_seen = true;
    graph_top_index = top.size();
    top.push_back({0, 0, ""});
    Reader gr = Reader::Sub(f);
    wire::Field gf;
    while (gr.Next(gf)) {
      if (gf.number == kGraphNode) {
        if (!nodes_placed) pieces.push_back({0, 0, "", true});
        nodes_placed = true;
        continue;
      }
      if (gf.number == kGraphOutput && gf.type == WireType::kLengthDelimited) {
        old_outputs.emplace(StringSubField(gf, kValueInfoName), std::make_pair(gf.offset, gr.position()));
        if (!outputs_placed) {
          outputs_index = pieces.size();
          pieces.push_back({0, 0, ""});
        }
        outputs_placed = true;
        continue;
      }
      if (gf.number == kGraphInitializer && gf.type == WireType::kLengthDelimited) {
        // An initializer grad replaced (a parameter restored under its PyTorch name) is not written.
        const ValueId v = graph.FindValue(StringSubField(gf, kTensorName));
        if (v == kNone || !graph.value(v).initializer || graph.value(v).initializer->owned_proto) continue;
      }
      pieces.push_back({gf.offset, gr.position(), ""});
    }
    for (const Value& value : graph.values) {  // the initializers grad made
      if (value.initializer && value.initializer->owned_proto) {
        pieces.push_back({0, 0, LengthField(kGraphInitializer, *value.initializer->owned_proto)});
      }
    }
    if (gr.failed()) return corrupt(gr.error_offset());
  }
  if (r.failed()) return corrupt(r.error_offset());
  if (!graph_seen) return InvalidInput(source + ": the model has no graph");

  // New node list.
  std::string nodes;
  for (const Node& node : graph.nodes) nodes += LengthField(kGraphNode, Serialize(graph.ToProto(node)));
  if (nodes_placed) {
    for (Piece& p : pieces) {
      if (p.nodes) p.bytes = nodes;
    }
  } else {
    pieces.insert(pieces.begin(), Piece{0, 0, nodes});
    if (outputs_placed) ++outputs_index;
  }
  // New outputs: kept ones byte for byte, new ones serialized.
  std::vector<Piece> output_pieces;
  for (ValueId v : graph.outputs) {
    const Value& value = graph.value(v);
    auto it = old_outputs.find(value.name);
    if (it != old_outputs.end()) {
      output_pieces.push_back({it->second.first, it->second.second, ""});
    } else {
      output_pieces.push_back({0, 0, LengthField(kGraphOutput, Serialize(MakeValueInfo(value)))});
    }
  }
  if (!outputs_placed) outputs_index = pieces.size(), pieces.push_back({0, 0, ""});
  pieces.erase(pieces.begin() + static_cast<std::ptrdiff_t>(outputs_index));
  pieces.insert(pieces.begin() + static_cast<std::ptrdiff_t>(outputs_index), output_pieces.begin(),
                output_pieces.end());
  // value_info of the new tensors (known element type only; graph outputs are declared already).
  std::string value_info;
  for (size_t i = static_cast<size_t>(result.first_new_value); i < graph.values.size(); ++i) {
    const Value& value = graph.values[i];
    if (value.is_graph_output || value.info.dtype == DataType::kUndefined || value.producer == kNone) continue;
    value_info += LengthField(kGraphValueInfo, Serialize(MakeValueInfo(value)));
  }
  pieces.push_back({0, 0, value_info});
  // Opset imports the training graph needs.
  top.push_back({0, 0, opset_imports.MissingFields(graph)});

  uint64_t graph_payload = 0;
  for (const Piece& p : pieces) graph_payload += p.begin == p.end ? p.bytes.size() : p.end - p.begin;
  std::string graph_header;
  wire::PutTag(graph_header, kModelGraph, WireType::kLengthDelimited);
  PutVarint(graph_header, graph_payload);

  TrainingModelWriteReport report;
  MEMOPT_RETURN_IF_ERROR(io::CopyExternalDataFiles(model, output_path, &report.copied_external_files));
  Sink sink;
  MEMOPT_RETURN_IF_ERROR(sink.Open(output_path));
  sink.ExplainWriteErrorsWith([&bytes] { return bytes.Intact(); });
  for (size_t t = 0; t < top.size(); ++t) {
    const Piece& p = top[t];
    if (t == graph_top_index) {
      MEMOPT_RETURN_IF_ERROR(sink.Write(graph_header));
      for (const Piece& gp : pieces) {
        MEMOPT_RETURN_IF_ERROR(gp.begin == gp.end ? sink.Write(gp.bytes)
                                                  : sink.Write(data + gp.begin, gp.end - gp.begin));
      }
      continue;
    }
    MEMOPT_RETURN_IF_ERROR(p.begin == p.end ? sink.Write(p.bytes) : sink.Write(data + p.begin, p.end - p.begin));
  }
  report.model_bytes = sink.written();
  MEMOPT_RETURN_IF_ERROR(bytes.Intact());  // what was copied is what the model file held
  MEMOPT_RETURN_IF_ERROR(sink.Commit());
  return report;
}

}  // namespace memopt

#include "rewrite/model_writer.h"

#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "io/copy_external_data.h"
#include "io/model_bytes.h"
#include "io/model_fields.h"
#include "io/temp_file.h"
#include "io/wire_reader.h"
#include "io/wire_writer.h"

namespace memopt {
namespace {

namespace fs = std::filesystem;
using wire::Field;
using wire::Reader;
using wire::WireType;
using wire::LengthDelimitedSize;
using wire::PutBytesField;
using wire::PutTag;
using wire::PutVarint;

constexpr uint32_t kModelGraph = io::kModelGraphField;
constexpr uint32_t kGraphNode = 1, kGraphInitializer = 5;
constexpr uint32_t kTensorRawData = 9, kTensorExternalData = 13, kTensorDataLocation = 14;
constexpr uint64_t kExternalAlignment = 64;

Status Corrupt(const std::string& path, uint64_t offset) {
  return InvalidInput(fmt::format("{}: corrupt protobuf at byte {}; cannot rewrite the model", path, offset));
}

using io::TempFileSink;

/// One field of the new GraphProto: copied from the input, the new node list, or an initializer
/// rewritten to point at external data.
struct GraphPiece {
  enum class Kind { kCopy, kNodes, kExternalized } kind = Kind::kCopy;
  uint64_t begin = 0, end = 0;      ///< kCopy: byte range of the whole field in the input
  std::string replacement;          ///< kExternalized: the whole new field (tag + length + message)
  uint64_t raw_begin = 0, raw_size = 0;  ///< kExternalized: raw_data payload in the input
  uint64_t data_offset = 0;         ///< kExternalized: offset in the external data file
  uint64_t size() const { return kind == Kind::kExternalized ? replacement.size() : end - begin; }

  static GraphPiece Nodes() {
    GraphPiece p;
    p.kind = Kind::kNodes;
    return p;
  }
  static GraphPiece Copy(uint64_t b, uint64_t e) {
    GraphPiece p;
    p.begin = b;
    p.end = e;
    return p;
  }
};

/// Inline raw_data of an initializer field, when it has one and no external data.
bool InlineRawData(const Field& tensor, uint64_t* raw_begin, uint64_t* raw_size) {
  Reader r = Reader::Sub(tensor);
  Field f;
  bool found = false, external = false;
  while (r.Next(f)) {
    if (f.number == kTensorRawData && f.type == WireType::kLengthDelimited) {
      found = true;
      *raw_begin = f.data_offset;
      *raw_size = f.size;
    } else if (f.number == kTensorDataLocation && f.type == WireType::kVarint && f.value == 1) {
      external = true;
    }
  }
  return found && !external && !r.failed();
}

/// The initializer field rewritten: raw_data removed, external_data entries + data_location added.
std::string ExternalizedTensorField(const Field& tensor, const uint8_t* base, const std::string& location,
                                    uint64_t offset, uint64_t length) {
  std::string msg;
  Reader r = Reader::Sub(tensor);
  Field f;
  while (r.Next(f)) {
    if (f.number == kTensorRawData || f.number == kTensorExternalData || f.number == kTensorDataLocation) continue;
    msg.append(reinterpret_cast<const char*>(base + f.offset), f.end_offset() - f.offset);
  }
  auto entry = [&](const std::string& key, const std::string& value) {
    std::string e;
    PutBytesField(e, 1, key);
    PutBytesField(e, 2, value);
    PutBytesField(msg, kTensorExternalData, e);
  };
  entry("location", location);
  entry("offset", std::to_string(offset));
  entry("length", std::to_string(length));
  PutTag(msg, kTensorDataLocation, WireType::kVarint);
  PutVarint(msg, 1);
  std::string field;
  PutBytesField(field, kGraphInitializer, msg);
  return field;
}

}  // namespace

Expected<WriteModelReport> WriteModelWithNodes(const Model& model, const std::vector<std::string>& nodes,
                                               const std::string& output_path, const WriteModelOptions& options) {
  MEMOPT_RETURN_IF_ERROR(io::CheckOutputPath(output_path, model.path));
  const std::string source_name = model.path.empty() ? std::string("<model bytes>") : model.path;

  io::ModelBytes bytes;
  MEMOPT_RETURN_IF_ERROR(bytes.Open(model, "cannot write it"));
  const uint8_t* data = bytes.data();
  const uint64_t size = bytes.size();

  // Top level: which fields to copy and where the graph goes; graph fields split into pieces.
  struct TopPiece {
    bool graph = false;
    uint64_t begin = 0, end = 0;
  };
  std::vector<TopPiece> top;
  std::vector<GraphPiece> pieces;
  std::vector<Field> initializer_fields;  // parallel to pieces (valid for initializers)
  bool graph_seen = false, nodes_placed = false;
  io::OpsetImports opset_imports;
  {
    Reader r(data, size, 0);
    Field f;
    while (r.Next(f)) {
      opset_imports.See(f);
      if (!io::KeepModelField(model, f)) continue;
      if (f.number != kModelGraph) {
        top.push_back({false, f.offset, f.end_offset()});
        continue;
      }
      if (f.type != WireType::kLengthDelimited) return Corrupt(source_name, f.offset);
      if (!graph_seen) top.push_back({true, 0, 0});
      graph_seen = true;
      Reader g = Reader::Sub(f);
      Field gf;
      while (g.Next(gf)) {
        if (gf.number == kGraphNode) {
          if (!nodes_placed) {
            pieces.push_back(GraphPiece::Nodes());
            initializer_fields.emplace_back();
            nodes_placed = true;
          }
          continue;
        }
        pieces.push_back(GraphPiece::Copy(gf.offset, gf.end_offset()));
        initializer_fields.push_back(gf.number == kGraphInitializer && gf.type == WireType::kLengthDelimited
                                         ? gf
                                         : Field{});
      }
      if (g.failed()) return Corrupt(source_name, g.error_offset());
    }
    if (r.failed()) return Corrupt(source_name, r.error_offset());
  }
  if (!graph_seen) return InvalidInput(fmt::format("{}: the model has no graph", source_name));
  if (!nodes_placed) {
    pieces.insert(pieces.begin(), GraphPiece::Nodes());
    initializer_fields.insert(initializer_fields.begin(), Field{});
  }
  // Opset imports of the domains the graph uses beyond the file's (inlined functions' imports).
  const std::string added_opsets = opset_imports.MissingFields(model.graph);

  uint64_t nodes_bytes = 0;
  for (const std::string& n : nodes) nodes_bytes += LengthDelimitedSize(kGraphNode, n.size());
  auto graph_payload = [&] {
    uint64_t total = 0;
    for (const GraphPiece& p : pieces) total += p.kind == GraphPiece::Kind::kNodes ? nodes_bytes : p.size();
    return total;
  };
  auto model_size = [&] {
    uint64_t total = LengthDelimitedSize(kModelGraph, graph_payload());
    for (const TopPiece& t : top) total += t.graph ? 0 : t.end - t.begin;
    return total + added_opsets.size();
  };

  WriteModelReport report;
  const std::string data_name = fs::path(output_path).filename().string() + ".data";
  if (model_size() > options.max_inline_model_bytes) {
    uint64_t offset = 0;
    for (size_t i = 0; i < pieces.size(); ++i) {
      GraphPiece& p = pieces[i];
      const Field& f = initializer_fields[i];
      if (p.kind != GraphPiece::Kind::kCopy || f.number != kGraphInitializer) continue;
      uint64_t raw_begin = 0, raw_size = 0;
      if (!InlineRawData(f, &raw_begin, &raw_size) || raw_size < options.external_min_tensor_bytes) continue;
      offset = (offset + kExternalAlignment - 1) / kExternalAlignment * kExternalAlignment;
      p.kind = GraphPiece::Kind::kExternalized;
      p.replacement = ExternalizedTensorField(f, data, data_name, offset, raw_size);
      p.raw_begin = raw_begin;
      p.raw_size = raw_size;
      p.data_offset = offset;
      offset += raw_size;
      ++report.externalized_tensors;
      report.externalized_bytes += raw_size;
    }
  }

  // External data of the input: referenced in place, or copied when the output is elsewhere.
  MEMOPT_RETURN_IF_ERROR(io::CopyExternalDataFiles(model, output_path, &report.copied_external_files));

  if (report.externalized_tensors > 0) {
    MEMOPT_ASSIGN_OR_RETURN(const fs::path out_dir, io::ExternalDataFolder(output_path));
    TempFileSink data_sink;
    MEMOPT_RETURN_IF_ERROR(data_sink.Open((out_dir / data_name).string()));
    for (const GraphPiece& p : pieces) {
      if (p.kind != GraphPiece::Kind::kExternalized) continue;
      static const char kZeros[kExternalAlignment] = {};
      if (p.data_offset > data_sink.written()) {
        MEMOPT_RETURN_IF_ERROR(data_sink.Write(kZeros, p.data_offset - data_sink.written()));
      }
      MEMOPT_RETURN_IF_ERROR(data_sink.Write(data + p.raw_begin, p.raw_size));
    }
    MEMOPT_RETURN_IF_ERROR(bytes.Intact());
    MEMOPT_RETURN_IF_ERROR(data_sink.Commit());
    report.external_data_file = data_name;
  }

  TempFileSink sink;
  MEMOPT_RETURN_IF_ERROR(sink.Open(output_path));
  sink.ExplainWriteErrorsWith([&bytes] { return bytes.Intact(); });
  MEMOPT_RETURN_IF_ERROR(sink.Write(added_opsets));
  for (const TopPiece& t : top) {
    if (!t.graph) {
      MEMOPT_RETURN_IF_ERROR(sink.Write(data + t.begin, t.end - t.begin));
      continue;
    }
    std::string header;
    PutTag(header, kModelGraph, WireType::kLengthDelimited);
    PutVarint(header, graph_payload());
    MEMOPT_RETURN_IF_ERROR(sink.Write(header));
    for (const GraphPiece& p : pieces) {
      switch (p.kind) {
        case GraphPiece::Kind::kCopy: MEMOPT_RETURN_IF_ERROR(sink.Write(data + p.begin, p.end - p.begin)); break;
        case GraphPiece::Kind::kExternalized: MEMOPT_RETURN_IF_ERROR(sink.Write(p.replacement)); break;
        case GraphPiece::Kind::kNodes:
          for (const std::string& n : nodes) {
            std::string field_header;
            PutTag(field_header, kGraphNode, WireType::kLengthDelimited);
            PutVarint(field_header, n.size());
            MEMOPT_RETURN_IF_ERROR(sink.Write(field_header));
            MEMOPT_RETURN_IF_ERROR(sink.Write(n));
          }
          break;
      }
    }
  }
  report.model_bytes = sink.written();
  MEMOPT_RETURN_IF_ERROR(bytes.Intact());  // what was copied is what the model file held
  MEMOPT_RETURN_IF_ERROR(sink.Commit());
  return report;
}

}  // namespace memopt

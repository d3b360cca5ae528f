// Loads an ONNX model into the analysis IR without reading weight bytes.
//
// The file is read with a wire-format walker over a memory-mapped view, so models past protobuf's
// 2 GB message limit load too: nodes, value_info, inputs and outputs are parsed as protobuf
// messages, initializers are parsed for their metadata only (name, dims, type, where the data
// lives). Small integer initializers (shape constants, axes) are decoded because shape
// arithmetic needs them. External-data references are checked (the file exists and is long
// enough) but never read.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/mapped_file.h"
#include "ir/graph.h"
#include "util/status.h"

namespace memopt {

/// Integer initializers with at most this many elements are decoded at load time.
constexpr int64_t kMaxFoldedElements = 4096;

struct LoadOptions {
  /// Check that every external-data file exists and covers offset+length.
  bool check_external_data = true;
};

/// A loaded model: the IR plus what is needed to write it back (issue: apply).
struct Model {
  Graph graph;
  std::string path;           ///< as given; "" for models parsed from text/bytes
  std::string base_dir;       ///< folder that external-data locations are relative to
  int64_t ir_version = 0;
  std::string producer_name;
  std::string producer_version;
  uint64_t file_size = 0;
  /// The model file's stamp when it was loaded (path models): later readers of its bytes
  /// (io::ModelBytes) refuse a file that has changed since.
  io::FileStamp file_stamp;
  /// Graph-level value_info declarations, by value id (shape inference may refine them).
  std::vector<ValueId> value_info;
  /// The serialized model when it was loaded from bytes/text (path empty), so that inline
  /// initializers (InitializerInfo::file_offset/file_length) can be read later (executor).
  std::shared_ptr<const std::string> source_bytes;
  /// GraphProto.metadata_props (key, value), in file order.
  std::vector<std::pair<std::string, std::string>> graph_metadata;
  /// Non-fatal notes on the file for the user, e.g. an ir_version or opset newer than memopt
  /// knows (such a model loads; fields added since are ignored).
  std::vector<std::string> warnings;
  /// Calls of model-local functions inlined at load time (io/function_inliner.h), and the
  /// functions ("domain:name"). Writers drop ModelProto.functions when this is non-zero.
  int inlined_calls = 0;
  std::vector<std::string> inlined_functions;
  /// If nodes replaced by the branch their known condition takes (shape/fold_known_ifs.h).
  int folded_ifs = 0;
  /// Sequence ops rewritten into tensor ops (shape/lower_sequences.h); those left are in warnings.
  int lowered_sequence_ops = 0;
};

/// Loads `path`. Errors (kInvalidInput) say what is wrong with the file: not ONNX, truncated,
/// missing or short external data, duplicate tensor names, undefined node inputs, an ir_version
/// before 3, a negative opset version, a file that changed while it was read, ... Newer IR
/// versions and opsets than memopt knows load, with a note in Model::warnings. `-` reads the model
/// from standard input, and so do other streams (a FIFO, /dev/stdin): their bytes are read into
/// memory (Model::source_bytes).
Expected<Model> LoadModel(const std::string& path, const LoadOptions& options = {});

/// Loads a model from serialized ModelProto bytes (tests, fuzzing). External data is resolved
/// against `base_dir`.
Expected<Model> LoadModelFromBytes(std::string_view bytes, const std::string& base_dir = ".",
                                   const LoadOptions& options = {});

/// Parses a model in ONNX text syntax (onnx/defs/parser.h), e.g. for tiny test graphs.
Expected<Model> LoadModelFromText(std::string_view text);

/// Builds the IR from an in-memory ModelProto (initializer data is read from the proto).
Expected<Model> ModelFromProto(const onnx::ModelProto& proto, const std::string& base_dir = ".");

}  // namespace memopt

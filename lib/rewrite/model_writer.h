// Writes a rewritten model without parsing (or loading) the whole ModelProto: the input file is
// memory-mapped and spliced at the protobuf wire level.
//   * every ModelProto field except `graph` is copied byte for byte, in place;
//   * inside the graph every field except `node` (field 1) is copied byte for byte (initializers
//     are streamed from the map, so inputs past 2 GB work), and the new node list is emitted where
//     the first node was;
//   * the output goes to a temporary file in the target folder, renamed over the target at the
//     end; the input model is never modified and -o naming it is an error;
//   * external data of the input is referenced, not copied, when the output is in the input's
//     folder; in another folder the referenced files are copied alongside (same relative paths);
//   * when the output would pass protobuf's 2 GB limit, inline initializers of at least
//     `external_min_tensor_bytes` move to "<output file name>.data" (data_location EXTERNAL).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/model_loader.h"
#include "util/status.h"

namespace memopt {

struct WriteModelOptions {
  /// Move initializers to an external data file when the model file would exceed this size.
  uint64_t max_inline_model_bytes = (uint64_t{1} << 31) - 1;
  /// Inline tensors smaller than this stay inline when data is moved out.
  uint64_t external_min_tensor_bytes = 1024;
};

struct WriteModelReport {
  uint64_t model_bytes = 0;                  ///< size of the written .onnx file
  std::string external_data_file;            ///< written "<name>.data" ("" when none)
  int externalized_tensors = 0;
  uint64_t externalized_bytes = 0;
  std::vector<std::string> copied_external_files;  ///< relative locations copied alongside
};

/// Writes `model` (as loaded from its file, or from bytes) to `output_path` with the main graph's
/// node list replaced by `nodes` (serialized onnx::NodeProto messages, in order).
Expected<WriteModelReport> WriteModelWithNodes(const Model& model, const std::vector<std::string>& nodes,
                                               const std::string& output_path, const WriteModelOptions& options = {});

}  // namespace memopt

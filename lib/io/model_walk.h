// Walks a serialized ModelProto with the wire reader: model header fields, opset imports and the
// main graph's nodes / inputs / outputs / value_info (parsed as protobuf messages, each small),
// initializers (metadata only) and model-local functions (parsed). Internal to the loader.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include "io/tensor_meta.h"
#include "io/wire_reader.h"
#include "util/status.h"

namespace memopt::io {

struct RawInitializer {
  TensorMeta meta;
  wire::Field field;  ///< the (Sparse)TensorProto field; its payload points into the loaded bytes
};

struct RawGraph {
  std::string name;
  std::vector<onnx::NodeProto> nodes;
  std::vector<RawInitializer> initializers;  ///< dense ones, then sparse ones, each in file order
  std::vector<onnx::ValueInfoProto> inputs;
  std::vector<onnx::ValueInfoProto> outputs;
  std::vector<onnx::ValueInfoProto> value_info;
  /// GraphProto.metadata_props (IR 10), in file order: the torch.export-based exporter writes its
  /// graph signature there (grad/torch_parameters.h).
  std::vector<std::pair<std::string, std::string>> metadata;
  /// The PyTorch module of each node (parallel to `nodes`; "" when unknown). Filled by
  /// InlineLocalFunctions (io/function_inliner.h).
  std::vector<std::string> node_modules;
};

struct RawModel {
  bool has_ir_version = false;
  int64_t ir_version = 0;
  std::string producer_name;
  std::string producer_version;
  std::vector<std::pair<std::string, int64_t>> opsets;  ///< as written (domain not normalised)
  bool has_graph = false;
  RawGraph graph;
  /// Model-local functions (ModelProto.functions), parsed whole: they hold nodes, not weights.
  std::vector<onnx::FunctionProto> functions;
};

/// Walks the ModelProto in [data, data + size). Errors are kInvalidInput: corrupt or truncated
/// protobuf (with the byte offset), or a node / value_info that does not parse (with its index).
Status WalkModel(const uint8_t* data, uint64_t size, RawModel& model);

}  // namespace memopt::io

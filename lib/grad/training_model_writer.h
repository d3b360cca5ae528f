// Writes the training model that BuildGradientGraph made, splicing the input file at the protobuf
// wire level so that weights are copied byte for byte and never decoded (like rewrite/
// model_writer.h, which replaces only the node list; grad also replaces the graph outputs, adds
// value_info for the new tensors and an opset import for com.microsoft):
//   * ModelProto fields are copied in place; missing opset imports are appended;
//   * GraphProto fields are copied in place except `node` (the new list goes where the first node
//     was) and `output` (original outputs that remain are copied byte for byte, gradient outputs
//     are new ValueInfoProtos); value_info of the new tensors is appended;
//   * the output goes to a temporary file renamed over the target; -o naming the input is an
//     error; external data files are referenced in place when the output is in the input's
//     folder and copied alongside otherwise.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "grad/grad_builder.h"
#include "util/status.h"

namespace memopt {

struct TrainingModelWriteReport {
  uint64_t model_bytes = 0;
  std::vector<std::string> copied_external_files;
};

Expected<TrainingModelWriteReport> WriteTrainingModel(const GradResult& result, const std::string& output_path);

/// The ValueInfoProto of a value as memopt knows it (elem type; dims literal or named, unknown
/// dims left empty).
onnx::ValueInfoProto MakeValueInfo(const Value& value);

}  // namespace memopt

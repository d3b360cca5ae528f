// libFuzzer target: the ONNX model loader on arbitrary protobuf bytes, then shape inference and
// the scan analysis on whatever loads. Any crash, leak or sanitizer report is a bug; errors
// returned as values are the expected outcome for bad input.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analysis/scan.h"
#include "io/model_loader.h"
#include "shape/shape_infer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  memopt::Expected<memopt::Model> model = memopt::LoadModelFromBytes(bytes, "/nonexistent");
  if (!model.ok()) return 0;
  if (model->graph.nodes.size() > 2000) return 0;  // keep each input fast
  if (!memopt::InferShapes(model->graph).ok()) return 0;
  (void)memopt::Scan(model->graph, memopt::ScanOptions{});
  return 0;
}

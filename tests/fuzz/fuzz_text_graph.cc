// libFuzzer target: the ONNX text-syntax parser the tests use for tiny graphs
// (LoadModelFromText), then shape inference and scan on whatever parses.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analysis/scan.h"
#include "io/model_loader.h"
#include "shape/shape_infer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  memopt::Expected<memopt::Model> model = memopt::LoadModelFromText(text);
  if (!model.ok()) return 0;
  if (!memopt::InferShapes(model->graph).ok()) return 0;
  (void)memopt::Scan(model->graph, memopt::ScanOptions{});
  return 0;
}

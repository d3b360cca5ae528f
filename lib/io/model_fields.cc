#include "io/model_fields.h"

#include "io/wire_writer.h"

namespace memopt::io {

bool KeepModelField(const Model& model, const wire::Field& field) {
  return !(field.number == kModelFunctionsField && model.inlined_calls > 0);
}

void OpsetImports::See(const wire::Field& field) {
  if (field.number != kModelOpsetImportField || field.type != wire::WireType::kLengthDelimited) return;
  wire::Reader r = wire::Reader::Sub(field);
  wire::Field f;
  std::string domain;
  while (r.Next(f)) {
    if (f.number == 1 && f.type == wire::WireType::kLengthDelimited) domain = std::string(f.AsString());
  }
  domains_.insert(domain == "ai.onnx" ? std::string() : domain);
}

std::string OpsetImports::MissingFields(const Graph& graph) const {
  std::string out;
  for (const auto& [domain, version] : graph.opsets) {
    if (domains_.count(domain)) continue;
    onnx::OperatorSetIdProto op;
    op.set_domain(domain);
    op.set_version(version);
    wire::PutBytesField(out, kModelOpsetImportField, op.SerializeAsString());
  }
  return out;
}

}  // namespace memopt::io

#include "io/model_fields.h"

namespace memopt::io {
namespace {

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

}  // namespace

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
    const std::string payload = op.SerializeAsString();
    PutVarint(out, (uint64_t{kModelOpsetImportField} << 3) | 2);
    PutVarint(out, payload.size());
    out += payload;
  }
  return out;
}

}  // namespace memopt::io

#include "io/newer_proto_fields.h"

#include <google/protobuf/unknown_field_set.h>

namespace memopt::io {
namespace {

using google::protobuf::UnknownField;
using google::protobuf::UnknownFieldSet;

constexpr int kNodeOverload = 8, kNodeMetadata = 9;
constexpr int kFunctionAttributeProto = 11, kFunctionValueInfo = 12, kFunctionOverload = 13;

const UnknownFieldSet& Unknown(const google::protobuf::Message& m) { return m.GetReflection()->GetUnknownFields(m); }

/// Payloads of the length-delimited unknown fields numbered `number`, in order.
std::vector<std::string> Payloads(const google::protobuf::Message& m, int number) {
  std::vector<std::string> out;
  const UnknownFieldSet& set = Unknown(m);
  for (int i = 0; i < set.field_count(); ++i) {
    const UnknownField& f = set.field(i);
    if (f.number() == number && f.type() == UnknownField::TYPE_LENGTH_DELIMITED) out.push_back(f.length_delimited());
  }
  return out;
}

std::string LastString(const google::protobuf::Message& m, int number) {
  std::vector<std::string> all = Payloads(m, number);
  return all.empty() ? std::string() : all.back();
}

template <typename Proto>
std::vector<Proto> Messages(const google::protobuf::Message& m, int number) {
  std::vector<Proto> out;
  for (const std::string& bytes : Payloads(m, number)) {
    Proto p;
    if (p.ParseFromString(bytes)) out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

std::string NodeOverload(const onnx::NodeProto& node) { return LastString(node, kNodeOverload); }

MetadataEntries NodeMetadata(const onnx::NodeProto& node) {
  MetadataEntries out;
  for (const auto& e : Messages<onnx::StringStringEntryProto>(node, kNodeMetadata)) out.emplace_back(e.key(), e.value());
  return out;
}

std::string FunctionOverload(const onnx::FunctionProto& function) { return LastString(function, kFunctionOverload); }

std::vector<onnx::AttributeProto> FunctionAttributeDefaults(const onnx::FunctionProto& function) {
  return Messages<onnx::AttributeProto>(function, kFunctionAttributeProto);
}

std::vector<onnx::ValueInfoProto> FunctionValueInfo(const onnx::FunctionProto& function) {
  return Messages<onnx::ValueInfoProto>(function, kFunctionValueInfo);
}

}  // namespace memopt::io

// Fields of IR 9/10 messages that the linked ONNX release (Debian's 1.12) does not declare: they
// parse as unknown fields, which these helpers decode. NodeProto: overload (8), metadata_props (9).
// FunctionProto: attribute_proto (11), value_info (12), overload (13), metadata_props (14).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

namespace memopt::io {

using MetadataEntries = std::vector<std::pair<std::string, std::string>>;

/// NodeProto.overload ("" when absent).
std::string NodeOverload(const onnx::NodeProto& node);
/// NodeProto.metadata_props, in file order.
MetadataEntries NodeMetadata(const onnx::NodeProto& node);

/// FunctionProto.overload ("" when absent).
std::string FunctionOverload(const onnx::FunctionProto& function);
/// FunctionProto.attribute_proto: attributes with their default values.
std::vector<onnx::AttributeProto> FunctionAttributeDefaults(const onnx::FunctionProto& function);
/// FunctionProto.value_info.
std::vector<onnx::ValueInfoProto> FunctionValueInfo(const onnx::FunctionProto& function);

}  // namespace memopt::io

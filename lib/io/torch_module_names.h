// PyTorch module names of nodes exported by torch.onnx, for reports (--details, --activations,
// the timeline). Two sources, the metadata taking precedence:
//   * node metadata of the torch.export-based exporter (PyTorch 2.5+): `pkg.torch.onnx.name_scopes`
//     (a Python list of module paths, innermost last) or `namespace` ("name: Class/name: Class");
//   * the model-local function a node was inlined from (the dynamo exporter of PyTorch 2.4 writes
//     one function per module call, named "<module class path>_L__<self>___<attribute path>_<n>").
#pragma once

#include <string>

#include "io/newer_proto_fields.h"

namespace memopt::io {

/// The innermost module path the metadata names ("" when it names none).
std::string ModuleFromMetadata(const MetadataEntries& metadata);

/// `s` without leading and trailing spaces, tabs and newlines (the exporters' metadata texts).
std::string Trim(const std::string& s);

/// "<attribute path> (<Class>)" for a function of PyTorch 2.4's dynamo exporter, e.g.
/// "model_layers_0_self_attn (LlamaSdpaAttention)"; "" for a name without a class (onnxscript's
/// torch_lib functions such as "_aten_gelu_approximate_none", which implement one op).
std::string ModuleFromFunctionName(const std::string& function_name);

}  // namespace memopt::io

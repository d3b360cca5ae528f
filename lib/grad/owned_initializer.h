// A tensor memopt makes (not read from the model file) added to a graph as an initializer: its
// serialized TensorProto rides in InitializerInfo::owned_proto, which InitializerReader reads and
// the training-model writer appends. Used where grad restores PyTorch's parameters
// (torch_parameters, torch_recurrent_weights).
#pragma once

#include <string>

#include "exec/tensor.h"
#include "ir/graph.h"

namespace memopt::grad {

/// Adds `t` as the initializer `name` (which must be new); `order` places it among the file's
/// initializers (InitializerInfo::file_offset). Returns its value id.
ValueId AddOwnedInitializer(Graph& g, const std::string& name, const Tensor& t, uint64_t order);

/// A node of the default domain (since_version resolved) reading `inputs`, writing `outputs`.
Node MakeOnnxNode(const Graph& g, const std::string& name, const std::string& op, std::vector<ValueId> inputs,
                  std::vector<ValueId> outputs);

/// A Constant node writing the int64 tensor `values` (1-D, or a scalar when `scalar`) to a new
/// value named from `base`; returns that value.
ValueId Int64Constant(Graph& g, const std::string& base, const std::vector<int64_t>& values, std::vector<Node>& nodes);

/// A name not used in `g` yet, made from `base` ("base", "base_1", ...).
std::string FreshName(const Graph& g, const std::string& base);

}  // namespace memopt::grad

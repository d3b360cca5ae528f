// Test helpers for the elementwise and reduce kernel tests: build a node with attributes, run one
// kernel from a registry, make small tensors and read them back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exec/kernel.h"
#include "exec/kernels/kernel_util.h"

namespace memopt::testing {

/// A node of `op` with `num_outputs` outputs (ids 0..n-1; only their presence matters).
inline Node MakeNode(const std::string& op, int num_outputs = 1, const std::string& domain = "") {
  Node n;
  n.op_type = op;
  n.domain = domain;
  n.name = "test_" + op;
  for (int i = 0; i < num_outputs; ++i) n.outputs.push_back(i);
  n.since_version = 22;
  return n;
}

inline void SetAttr(Node& n, const std::string& name, int64_t v) {
  auto* a = n.proto.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void SetAttr(Node& n, const std::string& name, float v) {
  auto* a = n.proto.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
inline void SetAttr(Node& n, const std::string& name, const std::string& v) {
  auto* a = n.proto.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}
inline void SetAttr(Node& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.proto.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

/// Runs the registered kernel for `node` on `inputs` (nullptr = omitted). Returns the status;
/// outputs land in `outputs`.
inline Status RunKernel(const KernelRegistry& registry, const Node& node, const std::vector<const Tensor*>& inputs,
                        std::vector<Tensor>& outputs) {
  const KernelInfo* info = registry.Find(node.domain, node.op_type);
  if (info == nullptr) return Unsupported("no kernel for " + node.op_type);
  KernelContext ctx;
  ctx.node = &node;
  ctx.inputs = inputs;
  ctx.outputs.resize(node.outputs.size());
  Status st = info->fn(ctx);
  outputs = std::move(ctx.outputs);
  return st;
}

/// A tensor of type `dt` holding `values` (converted with SetFromDouble).
inline Tensor MakeTensor(DataType dt, std::vector<int64_t> shape, const std::vector<double>& values) {
  Tensor t(dt, std::move(shape));
  for (int64_t i = 0; i < t.numel() && i < static_cast<int64_t>(values.size()); ++i) t.SetFromDouble(i, values[i]);
  return t;
}

inline Tensor F32(std::vector<int64_t> shape, const std::vector<double>& values) {
  return MakeTensor(DataType::kFloat, std::move(shape), values);
}

inline std::vector<double> Values(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = t.GetAsDouble(i);
  return v;
}

}  // namespace memopt::testing

// Test helpers for the training kernels: build one node with attributes, run a kernel registered
// by RegisterTrainingKernels (or by the full CPU registry) on given tensors, compare results.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "exec/kernel.h"
#include "exec/tensor.h"
#include "ir/graph.h"

namespace memopt::testing {

/// A node and its inputs; outputs named y0, y1, ... (an empty name marks an omitted output).
struct KernelCall {
  KernelCall(std::string domain_, std::string op_, int num_outputs = 1) {
    node.domain = std::move(domain_);
    node.op_type = std::move(op_);
    node.since_version = 1;
    node.name = node.op_type + "_node";
    node.proto.set_op_type(node.op_type);
    node.proto.set_domain(node.domain);
    node.proto.set_name(node.name);
    for (int i = 0; i < num_outputs; ++i) Output("y" + std::to_string(i));
  }
  KernelCall& Output(const std::string& name) {
    node.outputs.push_back(name.empty() ? kNone : static_cast<ValueId>(node.outputs.size()));
    output_names.push_back(name);
    return *this;
  }
  /// Renames output i (the Dropout seed derives from output 0's name).
  KernelCall& OutputName(int i, const std::string& name) {
    output_names[static_cast<size_t>(i)] = name;
    node.outputs[static_cast<size_t>(i)] = name.empty() ? kNone : i;
    return *this;
  }
  /// Adds an input (nullopt: an omitted optional input). The node lists it as a real node does
  /// (value ids from 1000, proto names x0, x1, ...), for kernels that read Node::inputs.
  KernelCall& Input(std::optional<Tensor> t) {
    const bool present = t.has_value();
    node.inputs.push_back(present ? static_cast<ValueId>(1000 + inputs.size()) : kNone);
    inputs.push_back(std::move(t));
    return *this;
  }
  KernelCall& Int(const std::string& name, int64_t v) {
    auto* a = node.proto.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
    return *this;
  }
  KernelCall& Float(const std::string& name, float v) {
    auto* a = node.proto.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
    return *this;
  }
  KernelCall& String(const std::string& name, const std::string& v) {
    auto* a = node.proto.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
    return *this;
  }
  KernelCall& Ints(const std::string& name, const std::vector<int64_t>& v) {
    auto* a = node.proto.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
    return *this;
  }
  KernelCall& Version(int v) {
    node.since_version = v;
    return *this;
  }

  /// Runs the kernel; outputs on success.
  Expected<std::vector<Tensor>> Run(uint64_t run_seed = 0, const Graph* graph = nullptr,
                                    const KernelRegistry* registry = nullptr) const {
    const KernelRegistry& reg = registry != nullptr ? *registry : KernelRegistry::Cpu();
    const KernelInfo* info = reg.Find(node.domain, node.op_type);
    if (info == nullptr) return Unsupported("no kernel for " + node.domain + "::" + node.op_type);
    KernelContext ctx;
    ctx.node = &node;
    ctx.run_seed = run_seed;
    const Graph names = Names();
    ctx.graph = graph != nullptr ? graph : &names;
    for (const auto& t : inputs) ctx.inputs.push_back(t.has_value() ? &*t : nullptr);
    ctx.outputs.resize(node.outputs.size());
    Status s = info->fn(ctx);
    if (!s.ok()) return s;
    return std::move(ctx.outputs);
  }
  /// KernelInfo::is_random for this call (false when the op has no predicate).
  bool IsRandom() const {
    const KernelInfo* info = KernelRegistry::Cpu().Find(node.domain, node.op_type);
    if (info == nullptr || info->is_random == nullptr) return false;
    KernelContext ctx;
    ctx.node = &node;
    for (const auto& t : inputs) ctx.inputs.push_back(t.has_value() ? &*t : nullptr);
    return info->is_random(ctx);
  }

  /// The values the node names, as a graph would hold them: outputs y0, y1, ... at ids 0, 1, ...
  /// and inputs x0, x1, ... at ids 1000, 1001, ...
  Graph Names() const {
    Graph g;
    g.values.resize(1000 + inputs.size());
    for (size_t i = 0; i < output_names.size(); ++i) g.values[i].name = output_names[i];
    for (size_t i = 0; i < inputs.size(); ++i) g.values[1000 + i].name = "x" + std::to_string(i);
    return g;
  }

  Node node;
  std::vector<std::string> output_names;
  std::vector<std::optional<Tensor>> inputs;
};

/// A tensor of `dtype` holding `values` (converted; float16/bfloat16 rounded).
inline Tensor MakeTensor(DataType dtype, std::vector<int64_t> shape, const std::vector<double>& values) {
  Tensor t(dtype, std::move(shape));
  REQUIRE(static_cast<size_t>(t.numel()) == values.size());
  for (size_t i = 0; i < values.size(); ++i) t.SetFromDouble(static_cast<int64_t>(i), values[i]);
  return t;
}
inline Tensor F32(std::vector<int64_t> shape, const std::vector<double>& values) {
  return MakeTensor(DataType::kFloat, std::move(shape), values);
}
inline Tensor F64(std::vector<int64_t> shape, const std::vector<double>& values) {
  return MakeTensor(DataType::kDouble, std::move(shape), values);
}
inline Tensor I64(std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  std::vector<double> v(values.begin(), values.end());
  return MakeTensor(DataType::kInt64, std::move(shape), v);
}
inline Tensor Scalar(DataType dtype, double v) { return MakeTensor(dtype, {}, {v}); }
inline Tensor BoolScalar(bool v) { return MakeTensor(DataType::kBool, {}, {v ? 1.0 : 0.0}); }

inline std::vector<double> Values(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = t.GetAsDouble(i);
  return v;
}

/// |a - e| <= atol + rtol*|e| elementwise (NaN == NaN), with a readable first mismatch.
inline void CheckClose(const std::vector<double>& actual, const std::vector<double>& expected, double rtol = 1e-5,
                       double atol = 1e-6) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    const double a = actual[i], e = expected[i];
    if (std::isnan(a) && std::isnan(e)) continue;
    INFO("element " << i << ": actual " << a << ", expected " << e);
    CHECK(std::abs(a - e) <= atol + rtol * std::abs(e));
    if (std::abs(a - e) > atol + rtol * std::abs(e)) return;  // one failure is enough to read
  }
}
inline void CheckClose(const Tensor& actual, const std::vector<double>& expected, double rtol = 1e-5,
                       double atol = 1e-6) {
  CheckClose(Values(actual), expected, rtol, atol);
}

/// The outputs of a call that must succeed.
inline std::vector<Tensor> MustRun(const KernelCall& call, uint64_t run_seed = 0, const Graph* graph = nullptr,
                                   const KernelRegistry* registry = nullptr) {
  auto r = call.Run(run_seed, graph, registry);
  INFO(r.status().message());
  REQUIRE(r.ok());
  return std::move(r).value();
}

}  // namespace memopt::testing

#include "report/extract.h"

#include <fmt/format.h>

#include <set>

namespace memopt {

namespace {

void SetType(const Value& value, onnx::ValueInfoProto* info) {
  info->set_name(value.name);
  if (!value.info.is_tensor) return;
  onnx::TypeProto_Tensor* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(static_cast<int32_t>(value.info.dtype));
  if (!value.info.shape) return;
  onnx::TensorShapeProto* shape = tensor->mutable_shape();
  for (const SymExpr& d : *value.info.shape) {
    onnx::TensorShapeProto_Dimension* dim = shape->add_dim();
    if (std::optional<int64_t> v = d.AsInt()) {
      dim->set_dim_value(*v);
    } else {
      dim->set_dim_param(d.ToString());
    }
  }
}

/// An int32/int64 initializer whose values the loader decoded, as a TensorProto; false otherwise.
bool SmallIntInitializer(const Value& value, onnx::TensorProto* out) {
  if (!value.initializer || !value.known_values || value.initializer->is_sparse) return false;
  const DataType dtype = value.initializer->dtype;
  if (dtype != DataType::kInt64 && dtype != DataType::kInt32) return false;
  out->set_name(value.name);
  out->set_data_type(static_cast<int32_t>(dtype));
  for (int64_t d : value.initializer->dims) out->add_dims(d);
  for (const SymExpr& e : *value.known_values) {
    std::optional<int64_t> v = e.AsInt();
    if (!v) return false;
    if (dtype == DataType::kInt64) {
      out->add_int64_data(*v);
    } else {
      out->add_int32_data(static_cast<int32_t>(*v));
    }
  }
  return true;
}

}  // namespace

Expected<std::string> ExtractCandidateModel(const Graph& graph, const ScanResult& scan, const CandidateSubgraph& c,
                                            const ExtractOptions& options) {
  const RecomputePlan& plan = scan.plans[c.plan];
  onnx::ModelProto model;
  model.set_ir_version(options.ir_version > 0 ? options.ir_version : 8);
  model.set_producer_name("memopt");
  model.set_producer_version(MEMOPT_VERSION);
  model.set_doc_string(fmt::format(
      "memopt recompute candidate {}:{}:-1, occurrence {} of {} (entry '{}'){}: the recomputed forward nodes, "
      "the stashed tensors they free (graph outputs) and their backward consumers",
      plan.cluster_id, plan.type(), c.occurrence + 1, c.occurrences, graph.node(plan.entry).name,
      options.source_model.empty() ? "" : " from " + options.source_model));
  for (const auto& [domain, version] : graph.opsets) {
    onnx::OperatorSetIdProto* op = model.add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
  }
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name(fmt::format("candidate_{}_{}", plan.cluster_id, c.occurrence));

  std::vector<NodeId> nodes = c.recompute;
  nodes.insert(nodes.end(), c.consumers.begin(), c.consumers.end());
  std::set<ValueId> produced;
  for (NodeId n : nodes) {
    *g->add_node() = graph.ToProto(graph.node(n));
    for (ValueId v : graph.node(n).outputs) {
      if (v != kNone) produced.insert(v);
    }
  }
  // Graph inputs (or small initializers), in first-use order.
  std::set<ValueId> seen;
  for (NodeId n : nodes) {
    for (ValueId v : graph.node(n).inputs) {
      if (v == kNone || graph.value(v).name.empty() || produced.count(v) || !seen.insert(v).second) continue;
      onnx::TensorProto init;
      if (SmallIntInitializer(graph.value(v), &init)) {
        *g->add_initializer() = std::move(init);
      } else {
        SetType(graph.value(v), g->add_input());
      }
    }
  }
  // Outputs: the stashed tensors, then what the consumers produce.
  std::set<ValueId> outputs;
  for (ValueId v : c.stashed) {
    if (outputs.insert(v).second) SetType(graph.value(v), g->add_output());
  }
  for (NodeId n : c.consumers) {
    for (ValueId v : graph.node(n).outputs) {
      if (v == kNone || graph.value(v).name.empty()) continue;
      if (outputs.insert(v).second) SetType(graph.value(v), g->add_output());
    }
  }
  for (NodeId n : c.recompute) {
    for (ValueId v : graph.node(n).outputs) {
      if (v == kNone || graph.value(v).name.empty() || outputs.count(v)) continue;
      SetType(graph.value(v), g->add_value_info());
    }
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes)) return InternalError("extract: cannot serialize the candidate model");
  return bytes;
}

}  // namespace memopt

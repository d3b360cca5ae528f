#include "ir/graph.h"

#include <algorithm>

namespace memopt {

namespace {

const onnx::AttributeProto* FindAttr(const onnx::NodeProto& proto, const std::string& name) {
  for (const auto& attr : proto.attribute()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

}  // namespace

std::optional<SymExpr> TensorInfo::Bytes() const {
  if (!is_tensor || !shape.has_value()) return std::nullopt;
  const int64_t elem = ElemByteSize(dtype);
  if (elem <= 0) return std::nullopt;  // undefined or string: size unknown
  return NumElements(*shape) * SymExpr(elem);
}

bool Node::HasAttr(const std::string& name) const { return FindAttr(proto, name) != nullptr; }

int64_t Node::GetInt(const std::string& name, int64_t def) const {
  const auto* attr = FindAttr(proto, name);
  if (attr == nullptr) return def;
  if (attr->has_i() || attr->type() == onnx::AttributeProto::INT) return attr->i();
  return def;
}

float Node::GetFloat(const std::string& name, float def) const {
  const auto* attr = FindAttr(proto, name);
  if (attr == nullptr) return def;
  if (attr->has_f() || attr->type() == onnx::AttributeProto::FLOAT) return attr->f();
  return def;
}

std::string Node::GetString(const std::string& name, const std::string& def) const {
  const auto* attr = FindAttr(proto, name);
  if (attr == nullptr) return def;
  if (attr->has_s() || attr->type() == onnx::AttributeProto::STRING) return attr->s();
  return def;
}

std::vector<int64_t> Node::GetInts(const std::string& name) const {
  const auto* attr = FindAttr(proto, name);
  if (attr == nullptr) return {};
  return {attr->ints().begin(), attr->ints().end()};
}

const onnx::TensorProto* Node::GetTensor(const std::string& name) const {
  const auto* attr = FindAttr(proto, name);
  if (attr == nullptr || !attr->has_t()) return nullptr;
  return &attr->t();
}

std::string Node::Describe() const {
  std::string shown = name.empty() ? op_type + "#" + std::to_string(id) : name;
  return "'" + shown + "' (" + op_type + ")";
}

ValueId Graph::FindValue(const std::string& value_name) const {
  auto it = value_index_.find(value_name);
  if (it != value_index_.end() && it->second >= 0 && static_cast<size_t>(it->second) < values.size() &&
      values[it->second].name == value_name) {
    return it->second;
  }
  // The index is stale when values were added or renamed directly; fall back to a scan.
  if (it != value_index_.end() || value_index_.size() != values.size()) {
    for (size_t i = 0; i < values.size(); ++i) {
      if (values[i].name == value_name) return static_cast<ValueId>(i);
    }
  }
  return kNone;
}

ValueId Graph::GetOrAddValue(const std::string& value_name) {
  if (value_index_.size() != values.size()) {
    value_index_.clear();
    for (size_t i = 0; i < values.size(); ++i) value_index_.emplace(values[i].name, static_cast<ValueId>(i));
  }
  ValueId found = FindValue(value_name);
  if (found != kNone) {
    value_index_[value_name] = found;
    return found;
  }
  Value v;
  v.name = value_name;
  values.push_back(std::move(v));
  const auto id = static_cast<ValueId>(values.size() - 1);
  value_index_[value_name] = id;
  return id;
}

onnx::NodeProto Graph::ToProto(const Node& node) const {
  onnx::NodeProto p = node.proto;
  p.clear_input();
  p.clear_output();
  for (ValueId v : node.inputs) p.add_input(v == kNone ? std::string() : values[v].name);
  for (ValueId v : node.outputs) p.add_output(v == kNone ? std::string() : values[v].name);
  return p;
}

void Graph::RebuildLinks() {
  value_index_.clear();
  for (size_t i = 0; i < values.size(); ++i) {
    values[i].producer = kNone;
    values[i].producer_output = -1;
    values[i].consumers.clear();
    values[i].is_graph_input = false;
    values[i].is_graph_output = false;
    value_index_.emplace(values[i].name, static_cast<ValueId>(i));
  }
  for (const auto& node : nodes) {
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      const ValueId v = node.outputs[o];
      if (v == kNone || v < 0 || static_cast<size_t>(v) >= values.size()) continue;
      values[v].producer = node.id;
      values[v].producer_output = static_cast<int32_t>(o);
    }
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId v = node.inputs[i];
      if (v == kNone || v < 0 || static_cast<size_t>(v) >= values.size()) continue;
      values[v].consumers.emplace_back(node.id, static_cast<int32_t>(i));
    }
  }
  for (auto& value : values) {
    std::sort(value.consumers.begin(), value.consumers.end());
  }
  for (ValueId v : inputs) {
    if (v >= 0 && static_cast<size_t>(v) < values.size()) values[v].is_graph_input = true;
  }
  for (ValueId v : outputs) {
    if (v >= 0 && static_cast<size_t>(v) < values.size()) values[v].is_graph_output = true;
  }
}

int64_t Graph::OpsetVersion(const std::string& domain) const {
  const std::string key = (domain == "ai.onnx") ? std::string() : domain;
  auto it = opsets.find(key);
  if (it != opsets.end()) return it->second;
  if (key.empty()) {
    it = opsets.find("ai.onnx");
    if (it != opsets.end()) return it->second;
  }
  return 0;
}

}  // namespace memopt

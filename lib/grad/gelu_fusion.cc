#include "grad/gelu_fusion.h"

#include <cmath>
#include <cstring>
#include <optional>
#include <set>

#include "util/half.h"

namespace memopt::grad {
namespace {

std::optional<double> TensorScalar(const onnx::TensorProto& t) {
  int64_t n = 1;
  for (int64_t d : t.dims()) n *= d;
  if (n != 1) return std::nullopt;
  const std::string& raw = t.raw_data();
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT: {
      if (t.float_data_size() == 1) return t.float_data(0);
      if (raw.size() != 4) return std::nullopt;
      float f;
      std::memcpy(&f, raw.data(), 4);
      return f;
    }
    case onnx::TensorProto::DOUBLE: {
      if (t.double_data_size() == 1) return t.double_data(0);
      if (raw.size() != 8) return std::nullopt;
      double d;
      std::memcpy(&d, raw.data(), 8);
      return d;
    }
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16: {
      uint16_t h = 0;
      if (t.int32_data_size() == 1) {
        h = static_cast<uint16_t>(t.int32_data(0));
      } else if (raw.size() == 2) {
        std::memcpy(&h, raw.data(), 2);
      } else {
        return std::nullopt;
      }
      return t.data_type() == onnx::TensorProto::FLOAT16 ? Float16ToFloat(h) : Bfloat16ToFloat(h);
    }
    default:
      return std::nullopt;
  }
}

/// The value of a one-element constant (Constant node or small initializer).
std::optional<double> ScalarValue(const Graph& g, ValueId v) {
  if (v == kNone) return std::nullopt;
  const Value& value = g.value(v);
  if (value.producer != kNone) {
    const Node& p = g.node(value.producer);
    if (p.op_type != "Constant" || !p.domain.empty()) return std::nullopt;
    if (p.HasAttr("value_float")) return p.GetFloat("value_float", 0);
    if (const onnx::TensorProto* t = p.GetTensor("value")) return TensorScalar(*t);
    return std::nullopt;
  }
  if (value.known_values && value.known_values->size() == 1) {
    if (auto r = (*value.known_values)[0].AsRational()) return r->ToDouble();
  }
  return std::nullopt;
}

bool Near(std::optional<double> v, double want) { return v && std::abs(*v - want) <= 1e-4 * std::abs(want); }

/// The single consumer of `v` (not a graph output), or nullptr.
const Node* OnlyConsumer(const Graph& g, ValueId v) {
  if (v == kNone) return nullptr;
  const Value& value = g.value(v);
  if (value.is_graph_output || value.consumers.size() != 1) return nullptr;
  return &g.node(value.consumers[0].first);
}

bool Is(const Node* n, const char* op) { return n != nullptr && n->domain.empty() && n->op_type == op; }

/// For a binary node with inputs (a, b): the operand that is not `known` (kNone if neither is).
ValueId Other(const Node& n, ValueId known) {
  if (n.inputs.size() != 2) return kNone;
  if (n.inputs[0] == known) return n.inputs[1];
  if (n.inputs[1] == known) return n.inputs[0];
  return kNone;
}

struct Match {
  NodeId final_node = kNone;
  ValueId x = kNone;
  std::vector<NodeId> removed;
};

std::optional<Match> MatchAt(const Graph& g, const Node& erf) {
  if (erf.inputs.size() != 1 || erf.outputs.size() != 1) return std::nullopt;
  const ValueId d = erf.inputs[0];
  const Value& dv = g.value(d);
  if (dv.producer == kNone || dv.is_graph_output || dv.consumers.size() != 1) return std::nullopt;
  const Node& scale = g.node(dv.producer);
  ValueId x = kNone;
  if (Is(&scale, "Div") && scale.inputs.size() == 2 && Near(ScalarValue(g, scale.inputs[1]), std::sqrt(2.0))) {
    x = scale.inputs[0];
  } else if (Is(&scale, "Mul") && scale.inputs.size() == 2) {
    for (int i = 0; i < 2; ++i) {
      if (Near(ScalarValue(g, scale.inputs[i]), std::sqrt(0.5))) x = scale.inputs[1 - i];
    }
  }
  if (x == kNone) return std::nullopt;
  const Node* add = OnlyConsumer(g, erf.outputs[0]);
  if (!Is(add, "Add") || !Near(ScalarValue(g, Other(*add, erf.outputs[0])), 1.0)) return std::nullopt;
  const Node* mul = OnlyConsumer(g, add->outputs.empty() ? kNone : add->outputs[0]);
  if (!Is(mul, "Mul") || mul->outputs.size() != 1) return std::nullopt;
  const ValueId other = Other(*mul, add->outputs[0]);
  Match m;
  m.x = x;
  if (other == x) {  // Mul(Mul(x, 1 + erf), 0.5)
    const Node* half = OnlyConsumer(g, mul->outputs[0]);
    if (!Is(half, "Mul") || half->outputs.size() != 1 || !Near(ScalarValue(g, Other(*half, mul->outputs[0])), 0.5)) {
      return std::nullopt;
    }
    m.final_node = half->id;
    m.removed = {scale.id, erf.id, add->id, mul->id};
    return m;
  }
  // Mul(Mul(x, 0.5), 1 + erf)
  if (other == kNone) return std::nullopt;
  const Value& hv = g.value(other);
  if (hv.producer == kNone || hv.is_graph_output || hv.consumers.size() != 1) return std::nullopt;
  const Node& half = g.node(hv.producer);
  if (!Is(&half, "Mul") || Other(half, x) == kNone || !Near(ScalarValue(g, Other(half, x)), 0.5)) return std::nullopt;
  m.final_node = mul->id;
  m.removed = {scale.id, erf.id, add->id, half.id};
  return m;
}

}  // namespace

int FuseGelu(Graph& graph) {
  std::vector<Match> matches;
  std::set<NodeId> used;
  for (const Node& node : graph.nodes) {
    if (!Is(&node, "Erf")) continue;
    auto m = MatchAt(graph, node);
    if (!m) continue;
    bool clash = used.count(m->final_node) != 0;
    for (NodeId r : m->removed) clash = clash || used.count(r) != 0;
    if (clash) continue;
    used.insert(m->final_node);
    used.insert(m->removed.begin(), m->removed.end());
    matches.push_back(*m);
  }
  if (matches.empty()) return 0;

  std::set<std::string> names;
  for (const Node& n : graph.nodes) names.insert(n.name);
  std::vector<char> removed(graph.nodes.size(), 0);
  for (const Match& m : matches) {
    const Node& erf = graph.node(m.removed[1]);
    std::string base = erf.name;
    if (base.size() >= 3 && base.compare(base.size() - 3, 3, "Erf") == 0) {
      base = base.substr(0, base.size() - 3) + "Gelu";
    } else {
      base = (base.empty() ? std::string("GeluFusion") : base + "_Gelu");
    }
    std::string name = base;
    for (int k = 1; names.count(name); ++k) name = base + "_" + std::to_string(k);
    names.insert(name);
    for (NodeId r : m.removed) removed[r] = 1;
    Node& out = graph.nodes[m.final_node];
    out.name = name;
    out.op_type = "Gelu";
    out.domain = "com.microsoft";
    out.inputs = {m.x};
    out.since_version = 1;
    out.proto.Clear();
    out.proto.set_name(name);
    out.proto.set_op_type("Gelu");
    out.proto.set_domain("com.microsoft");
  }
  // Constants that fed only the fused nodes go too.
  std::vector<int> uses(graph.values.size(), 0);
  for (const Node& n : graph.nodes) {
    if (removed[n.id]) continue;
    for (ValueId v : n.inputs) {
      if (v != kNone) ++uses[v];
    }
  }
  for (const Node& n : graph.nodes) {
    if (removed[n.id] || n.op_type != "Constant" || !n.domain.empty() || n.outputs.size() != 1) continue;
    const ValueId v = n.outputs[0];
    if (v != kNone && uses[v] == 0 && !graph.value(v).is_graph_output) removed[n.id] = 1;
  }
  std::vector<Node> kept;
  kept.reserve(graph.nodes.size());
  for (Node& n : graph.nodes) {
    if (removed[n.id]) continue;
    n.id = static_cast<NodeId>(kept.size());
    kept.push_back(std::move(n));
  }
  graph.nodes = std::move(kept);
  if (graph.opsets.count("com.microsoft") == 0) graph.opsets["com.microsoft"] = 1;
  graph.RebuildLinks();
  return static_cast<int>(matches.size());
}

}  // namespace memopt::grad

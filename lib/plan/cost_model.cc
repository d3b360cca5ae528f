#include "plan/cost_model.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "analysis/plan_table.h"
#include "ir/op_registry.h"

namespace memopt {
namespace {

std::optional<SymExpr> DimAt(const Graph& graph, ValueId value, int64_t axis) {
  if (value == kNone || !graph.values[value].info.shape) return std::nullopt;
  const Shape& shape = *graph.values[value].info.shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  return shape[axis];
}

int64_t Eval(const std::optional<SymExpr>& e, const DimBindings& dims) {
  if (!e) return 0;
  std::optional<Rational> r = EvaluateWithDefault(*e, dims, kUnboundDimForOrdering);
  if (!r || r->overflow || r->den == 0) return 0;
  return std::max<int64_t>(0, r->num / r->den);
}

int64_t Bytes(const Graph& graph, ValueId v, const DimBindings& dims) {
  if (v == kNone) return 0;
  return Eval(graph.values[v].info.Bytes(), dims);
}

int64_t Elements(const Graph& graph, ValueId v, const DimBindings& dims) {
  std::optional<int64_t> n = ElementsAt(graph, v, dims);
  return n.value_or(0);
}

ValueId Input(const Node& node, size_t i) { return i < node.inputs.size() ? node.inputs[i] : kNone; }

/// Einsum: 2 FLOPs per output element and per combination of the summed-over letters (letters of
/// the inputs missing from the output); one input: one FLOP per input element.
int64_t EinsumFlops(const Graph& graph, const Node& node, int64_t out, const DimBindings& dims) {
  if (node.inputs.size() < 2) return Elements(graph, Input(node, 0), dims);
  std::string eq;
  for (char c : node.GetString("equation", "")) {
    if (c != ' ') eq += c;
  }
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms(1);
  for (char c : lhs) {
    if (c == ',') {
      terms.emplace_back();
    } else {
      terms.back() += c;
    }
  }
  std::map<char, int> uses;
  for (const std::string& t : terms) {
    for (char c : t) {
      if (std::isalpha(static_cast<unsigned char>(c))) ++uses[c];
    }
  }
  std::string output;
  if (arrow != std::string::npos) {
    output = eq.substr(arrow + 2);
  } else {
    for (const auto& [c, n] : uses) {
      if (n == 1) output += c;
    }
  }
  std::map<char, int64_t> size;
  for (size_t i = 0; i < terms.size() && i < node.inputs.size(); ++i) {
    const ValueId v = node.inputs[i];
    if (v == kNone || !graph.values[v].info.shape) continue;
    const int64_t rank = static_cast<int64_t>(graph.values[v].info.shape->size());
    const std::string& t = terms[i];
    const size_t dots = t.find("...");
    const std::string before = t.substr(0, dots);
    const std::string after = dots == std::string::npos ? std::string() : t.substr(dots + 3);
    for (size_t k = 0; k < before.size(); ++k) size[before[k]] = std::max<int64_t>(1, Eval(DimAt(graph, v, k), dims));
    for (size_t k = 0; k < after.size(); ++k) {
      size[after[k]] = std::max<int64_t>(1, Eval(DimAt(graph, v, rank - static_cast<int64_t>(after.size() - k)), dims));
    }
  }
  int64_t summed = 1;
  for (const auto& [c, n] : uses) {
    if (output.find(c) == std::string::npos && size.count(c)) summed *= size[c];
  }
  return 2 * out * summed;
}
ValueId Output0(const Node& node) { return node.outputs.empty() ? kNone : node.outputs[0]; }

}  // namespace

const OpDef* CostDef(std::string_view domain, std::string_view op_type) {
  auto has_cost = [](const OpDef& def) { return def.cost.kind != CostKind::kNone; };
  const OpDef* def = Ops().Find(domain, op_type, has_cost);
  return def != nullptr ? def : Ops().Find(kOnnxDomain, op_type, has_cost);
}

std::string DescribeRoofline(const CostModel& model) {
  return fmt::format("{:g} TFLOP/s matmul, {:g} TFLOP/s other, {:g} TB/s", model.matmul_flops_per_second / 1e12,
                     model.other_flops_per_second / 1e12, model.bytes_per_second / 1e12);
}

bool CostModelKnows(std::string_view op_type) { return CostDef(kOnnxDomain, op_type) != nullptr; }

std::optional<int64_t> ElementsAt(const Graph& graph, ValueId value, const DimBindings& dims) {
  if (value == kNone || !graph.values[value].info.shape) return std::nullopt;
  return Eval(NumElements(*graph.values[value].info.shape), dims);
}

NodeCost EstimateNodeCost(const Graph& graph, const Node& node, const DimBindings& dims, const CostModel& model) {
  NodeCost cost;
  const OpDef* def = CostDef(node.domain, node.op_type);
  const CostClass info = def != nullptr ? def->cost : CostClass{CostKind::kElementwise, 1};
  const int64_t out = Elements(graph, Output0(node), dims);

  switch (info.kind) {
    case CostKind::kMatMul: {
      const ValueId a = Input(node, 0);
      int64_t k_axis = -1;
      if (node.op_type == "FusedMatMul" && node.GetInt("transA", 0) != 0) k_axis = -2;
      cost.flops = 2 * out * std::max<int64_t>(1, Eval(DimAt(graph, a, k_axis), dims));
      cost.matmul_class = true;
      break;
    }
    case CostKind::kGemm: {
      const int64_t k_axis = node.GetInt("transA", 0) != 0 ? 0 : 1;
      cost.flops = 2 * out * std::max<int64_t>(1, Eval(DimAt(graph, Input(node, 0), k_axis), dims));
      if (Input(node, 2) != kNone) cost.flops += out;
      cost.matmul_class = true;
      break;
    }
    case CostKind::kConv:
    case CostKind::kConvTranspose: {
      const ValueId w = Input(node, 1);
      int64_t per = 1;
      if (w != kNone && graph.values[w].info.shape) {
        const Shape& ws = *graph.values[w].info.shape;
        for (size_t d = 1; d < ws.size(); ++d) per *= std::max<int64_t>(1, Eval(ws[d], dims));
      }
      const int64_t base = info.kind == CostKind::kConv ? out : Elements(graph, Input(node, 0), dims);
      cost.flops = 2 * base * per;
      cost.matmul_class = true;
      break;
    }
    case CostKind::kPool: {  // one operation per window element of every output
      int64_t window = 1;
      for (int64_t k : node.GetInts("kernel_shape")) window *= std::max<int64_t>(1, k);
      cost.flops = out * window;
      break;
    }
    case CostKind::kReduce: cost.flops = Elements(graph, Input(node, 0), dims); break;
    case CostKind::kEinsum:
      cost.flops = EinsumFlops(graph, node, out, dims);
      cost.matmul_class = node.inputs.size() >= 2;
      break;
    case CostKind::kElementwise: cost.flops = out * info.factor; break;
    case CostKind::kMove:
    case CostKind::kView:
    case CostKind::kNone: break;
  }
  if (info.kind != CostKind::kView) {
    for (ValueId v : node.inputs) cost.bytes += Bytes(graph, v, dims);
    for (ValueId v : node.outputs) cost.bytes += Bytes(graph, v, dims);
  }
  const double compute = cost.matmul_class ? cost.flops / model.matmul_flops_per_second
                                           : cost.flops / model.other_flops_per_second;
  cost.seconds = std::max(compute, cost.bytes / model.bytes_per_second);
  return cost;
}

}  // namespace memopt

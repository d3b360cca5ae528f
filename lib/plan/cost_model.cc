#include "plan/cost_model.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "analysis/plan_table.h"

namespace memopt {
namespace {

enum class Kind { kMatMul, kGemm, kConv, kConvTranspose, kPool, kReduce, kElementwise, kMove, kView };

struct OpInfo {
  Kind kind;
  int factor = 1;  ///< FLOPs per output element (kElementwise)
};

const std::unordered_map<std::string_view, OpInfo>& OpTableForCost() {
  static const auto* table = [] {
    auto* t = new std::unordered_map<std::string_view, OpInfo>();
    for (std::string_view op : {"MatMul", "FusedMatMul", "MatMulInteger", "TransposeMatMul"}) {
      (*t)[op] = {Kind::kMatMul};
    }
    (*t)["Gemm"] = {Kind::kGemm};
    (*t)["Conv"] = {Kind::kConv};
    (*t)["ConvTranspose"] = {Kind::kConvTranspose};
    for (std::string_view op : {"MaxPool", "AveragePool", "LpPool"}) (*t)[op] = {Kind::kPool};
    for (std::string_view op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                                "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ArgMax",
                                "ArgMin", "ReduceSumTraining", "GlobalAveragePool", "GlobalMaxPool",
                                "GlobalLpPool"}) {
      (*t)[op] = {Kind::kReduce};
    }
    for (std::string_view op : {"Exp", "Log", "Tanh", "Sigmoid", "Erf", "Softplus", "Softsign", "Sin", "Cos",
                                "HardSigmoid", "Elu", "Selu", "Celu", "Mish", "HardSwish", "Swish", "QuickGelu", "Pow"}) {
      (*t)[op] = {Kind::kElementwise, 4};
    }
    // Arithmetic, comparison and simple activations: one FLOP per output element.
    for (std::string_view op : {"Add", "Sub", "Mul", "Div", "Neg", "Abs", "Sqrt", "Reciprocal", "Floor", "Ceil",
                                "Sign", "Relu", "LeakyRelu", "PRelu", "ThresholdedRelu", "Clip", "Max", "Min", "Sum",
                                "Mean", "Where", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not",
                                "And", "Or", "CumSum"}) {
      (*t)[op] = {Kind::kElementwise, 1};
    }
    for (std::string_view op : {"Softmax", "LogSoftmax", "SoftmaxGrad", "SoftmaxGrad_13"}) {
      (*t)[op] = {Kind::kElementwise, 5};
    }
    (*t)["BiasSoftmax"] = {Kind::kElementwise, 6};
    for (std::string_view op : {"Gelu", "FastGelu", "BiasGelu", "BiasFastGelu", "GeluGrad", "FastGeluGrad",
                                "BiasGeluGrad_dX", "LayerNormalization", "SimplifiedLayerNormalization",
                                "SkipLayerNormalization", "SkipSimplifiedLayerNormalization", "GroupNorm",
                                "InstanceNormalization", "BatchNormalization", "RMSNormalization"}) {
      (*t)[op] = {Kind::kElementwise, 8};
    }
    for (std::string_view op : {"Dropout", "BiasDropout", "BitmaskDropout", "BitmaskBiasDropout",
                                "BiasSoftmaxDropout"}) {
      (*t)[op] = {Kind::kElementwise, 3};
    }
    for (std::string_view op : {"Transpose", "Cast", "Expand", "Tile", "Concat", "ConcatTraining", "Slice", "Gather",
                                "GatherElements", "GatherND", "Split", "SplitTraining", "Pad", "Constant",
                                "ConstantOfShape", "Range", "ScatterND", "ScatterElements", "Trilu", "OneHot",
                                "DepthToSpace", "SpaceToDepth", "Resize", "CastLike", "EyeLike"}) {
      (*t)[op] = {Kind::kMove};
    }
    for (std::string_view op : {"Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity", "Shape", "Size"}) {
      (*t)[op] = {Kind::kView};
    }
    return t;
  }();
  return *table;
}

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
ValueId Output0(const Node& node) { return node.outputs.empty() ? kNone : node.outputs[0]; }

}  // namespace

bool CostModelKnows(std::string_view op_type) { return OpTableForCost().count(op_type) != 0; }

std::optional<int64_t> ElementsAt(const Graph& graph, ValueId value, const DimBindings& dims) {
  if (value == kNone || !graph.values[value].info.shape) return std::nullopt;
  return Eval(NumElements(*graph.values[value].info.shape), dims);
}

NodeCost EstimateNodeCost(const Graph& graph, const Node& node, const DimBindings& dims, const CostModel& model) {
  NodeCost cost;
  const auto& table = OpTableForCost();
  auto it = table.find(node.op_type);
  const OpInfo info = it != table.end() ? it->second : OpInfo{Kind::kElementwise, 1};
  const int64_t out = Elements(graph, Output0(node), dims);

  switch (info.kind) {
    case Kind::kMatMul: {
      const ValueId a = Input(node, 0);
      int64_t k_axis = -1;
      if (node.op_type == "FusedMatMul" && node.GetInt("transA", 0) != 0) k_axis = -2;
      cost.flops = 2 * out * std::max<int64_t>(1, Eval(DimAt(graph, a, k_axis), dims));
      cost.matmul_class = true;
      break;
    }
    case Kind::kGemm: {
      const int64_t k_axis = node.GetInt("transA", 0) != 0 ? 0 : 1;
      cost.flops = 2 * out * std::max<int64_t>(1, Eval(DimAt(graph, Input(node, 0), k_axis), dims));
      if (Input(node, 2) != kNone) cost.flops += out;
      cost.matmul_class = true;
      break;
    }
    case Kind::kConv:
    case Kind::kConvTranspose: {
      const ValueId w = Input(node, 1);
      int64_t per = 1;
      if (w != kNone && graph.values[w].info.shape) {
        const Shape& ws = *graph.values[w].info.shape;
        for (size_t d = 1; d < ws.size(); ++d) per *= std::max<int64_t>(1, Eval(ws[d], dims));
      }
      const int64_t base = info.kind == Kind::kConv ? out : Elements(graph, Input(node, 0), dims);
      cost.flops = 2 * base * per;
      cost.matmul_class = true;
      break;
    }
    case Kind::kPool: {  // one operation per window element of every output
      int64_t window = 1;
      for (int64_t k : node.GetInts("kernel_shape")) window *= std::max<int64_t>(1, k);
      cost.flops = out * window;
      break;
    }
    case Kind::kReduce: cost.flops = Elements(graph, Input(node, 0), dims); break;
    case Kind::kElementwise: cost.flops = out * info.factor; break;
    case Kind::kMove:
    case Kind::kView: break;
  }
  if (info.kind != Kind::kView) {
    for (ValueId v : node.inputs) cost.bytes += Bytes(graph, v, dims);
    for (ValueId v : node.outputs) cost.bytes += Bytes(graph, v, dims);
  }
  const double compute = cost.matmul_class ? cost.flops / model.matmul_flops_per_second
                                           : cost.flops / model.other_flops_per_second;
  cost.seconds = std::max(compute, cost.bytes / model.bytes_per_second);
  return cost;
}

}  // namespace memopt

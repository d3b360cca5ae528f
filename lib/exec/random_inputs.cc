#include "exec/random_inputs.h"

#include <functional>
#include <set>

#include "exec/input_binding.h"

namespace memopt {

namespace {

/// splitmix64: a small, well-mixed counter-based generator.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t HashName(const std::string& s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

/// Ops that pass integer values through unchanged (only their shape or type changes).
bool PassesValues(const std::string& op) {
  static const std::set<std::string> kOps = {"Reshape", "Squeeze", "Unsqueeze", "Flatten", "Cast", "Identity",
                                             "Expand",  "Transpose", "Tile",   "Slice"};
  return kOps.count(op) != 0;
}

std::optional<int64_t> DimAt(const Graph& graph, ValueId v, int64_t axis, const DimBindings& dims) {
  if (v == kNone) return std::nullopt;
  const TensorInfo& info = graph.value(v).info;
  if (!info.shape.has_value()) return std::nullopt;
  const auto rank = static_cast<int64_t>(info.shape->size());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  auto d = (*info.shape)[axis].EvaluateInt(dims);
  if (!d.ok() || *d <= 0) return std::nullopt;
  return *d;
}

/// Upper bound for integers read by `node` at input `slot`, when the use implies one.
std::optional<int64_t> UseBound(const Graph& graph, const Node& node, int32_t slot, const DimBindings& dims) {
  const std::string& op = node.op_type;
  auto input = [&](int i) { return i < static_cast<int>(node.inputs.size()) ? node.inputs[i] : kNone; };
  if (slot == 1 && (op == "Gather" || op == "GatherElements")) {
    return DimAt(graph, input(0), node.GetInt("axis", 0), dims);
  }
  if (slot == 1 && op == "GatherND") return DimAt(graph, input(0), 0, dims);
  if (slot == 1 && (op == "SoftmaxCrossEntropyLoss" || op == "SoftmaxCrossEntropyLossInternal" ||
                    op == "NegativeLogLikelihoodLoss" || op == "NegativeLogLikelihoodLossInternal")) {
    return DimAt(graph, input(0), 1, dims);  // scores/log-probs are [N, C, d1, ...]
  }
  if (slot == 1 && (op == "SparseSoftmaxCrossEntropy" || op == "SoftmaxCrossEntropy")) {
    return DimAt(graph, input(0), -1, dims);  // logits [.., D]
  }
  if (slot == 0 && op == "Embedding") return DimAt(graph, input(1), 0, dims);
  return std::nullopt;
}

std::optional<int64_t> FindBound(const Graph& graph, ValueId v, const DimBindings& dims, int depth) {
  std::optional<int64_t> best;
  for (const auto& [consumer, slot] : graph.value(v).consumers) {
    const Node& node = graph.node(consumer);
    std::optional<int64_t> b = UseBound(graph, node, slot, dims);
    if (!b && depth < 4 && slot == 0 && PassesValues(node.op_type) && !node.outputs.empty() &&
        node.outputs[0] != kNone) {
      b = FindBound(graph, node.outputs[0], dims, depth + 1);
    }
    if (b && (!best || *b < *best)) best = b;
  }
  return best;
}

}  // namespace

Expected<std::vector<int64_t>> ConcreteInputShape(const Graph& graph, ValueId value, const DimBindings& dims) {
  const Value& v = graph.value(value);
  if (!v.info.shape.has_value()) {
    return InvalidInput("input '" + v.name + "' has no declared shape; give it a value with --inputs");
  }
  std::vector<int64_t> shape;
  for (size_t i = 0; i < v.info.shape->size(); ++i) {
    const SymExpr& dim = (*v.info.shape)[i];
    auto d = dim.EvaluateInt(dims);
    if (!d.ok()) {
      const std::vector<std::string> symbols = dim.Symbols();
      std::string missing;
      for (const auto& s : symbols) {
        if (!dims.Get(s).has_value()) missing = s;
      }
      if (missing.empty()) return d.status().WithContext("input '" + v.name + "' dim " + std::to_string(i));
      return UsageError("input '" + v.name + "' dim " + std::to_string(i) + " is '" + missing +
                        "', which is not bound; pass --dims " + missing + "=<value>");
    }
    if (*d < 0) {
      return InvalidInput("input '" + v.name + "' dim " + std::to_string(i) + " evaluates to " + std::to_string(*d));
    }
    shape.push_back(*d);
  }
  return shape;
}

std::pair<int64_t, int64_t> IntegerInputRange(const Graph& graph, ValueId value, const DimBindings& dims) {
  if (auto bound = FindBound(graph, value, dims, 0)) return {0, *bound};
  return {0, 2};
}

void FillUniform(Tensor& t, uint64_t seed, const std::string& name) {
  const uint64_t key = Mix(seed ^ HashName(name));
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t r = Mix(key + static_cast<uint64_t>(i));
    const double u = static_cast<double>(r >> 11) * 0x1.0p-53;  // [0, 1)
    t.SetFromDouble(i, 2.0 * u - 1.0);
  }
  if (t.dtype() == DataType::kFloat16 || t.dtype() == DataType::kBfloat16) {
    // Rounding may reach +1.0 exactly; keep the half-open range.
    for (int64_t i = 0; i < n; ++i) {
      if (t.GetAsDouble(i) >= 1.0) t.SetFromDouble(i, 0.99609375);
    }
  }
}

Expected<Tensor> RandomInput(const Graph& graph, ValueId value, const DimBindings& dims, uint64_t seed) {
  const Value& v = graph.value(value);
  if (!v.info.is_tensor) return Unsupported("input '" + v.name + "' is not a tensor; random values need a tensor");
  MEMOPT_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ConcreteInputShape(graph, value, dims));
  const DataType dt = v.info.dtype;
  MEMOPT_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dt, shape, "input '" + v.name + "'"));
  const uint64_t key = Mix(seed ^ HashName(v.name));
  const int64_t n = t.numel();
  if (IsFloatingPoint(dt) && ElemByteSize(dt) >= 2) {
    FillUniform(t, seed, v.name);
    return t;
  }
  if (dt == DataType::kBool || IsInteger(dt)) {
    auto [lo, hi] = dt == DataType::kBool ? std::pair<int64_t, int64_t>{0, 2} : IntegerInputRange(graph, value, dims);
    const uint64_t span = static_cast<uint64_t>(hi - lo);
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t r = Mix(key + static_cast<uint64_t>(i));
      t.SetFromDouble(i, static_cast<double>(lo + static_cast<int64_t>(r % span)));
    }
    return t;
  }
  if (dt == DataType::kString) {
    for (int64_t i = 0; i < n; ++i) t.strings()[i] = "s" + std::to_string(Mix(key + static_cast<uint64_t>(i)) % 100);
    return t;
  }
  return Unsupported("input '" + v.name + "': cannot make random values of type '" + DataTypeName(dt) + "'");
}

Expected<std::map<std::string, Tensor>> CompleteFeeds(const Graph& graph, const std::map<std::string, Tensor>& given,
                                                      const DimBindings& dims, uint64_t seed) {
  // Given tensors must agree with the model and with the dims the user bound.
  BoundDims bound;
  for (const auto& [name, value] : dims.values()) bound.emplace(name, std::make_pair(value, std::string("--dims")));
  for (const auto& [name, tensor] : given) {
    const ValueId v = graph.FindValue(name);
    if (v == kNone || !graph.value(v).is_graph_input) continue;
    MEMOPT_RETURN_IF_ERROR(CheckFeed(graph, v, tensor, bound));
  }
  DimBindings all = dims;
  const DimBindings from_feeds = DimsFromFeeds(graph, given);
  for (const auto& [name, value] : from_feeds.values()) {
    if (!all.Get(name).has_value()) all.Set(name, value);
  }
  std::map<std::string, Tensor> feeds = given;
  for (ValueId v : graph.inputs) {
    const Value& value = graph.value(v);
    if (feeds.count(value.name) != 0 || value.initializer.has_value()) continue;
    MEMOPT_ASSIGN_OR_RETURN(Tensor t, RandomInput(graph, v, all, seed));
    feeds.emplace(value.name, std::move(t));
  }
  return feeds;
}

}  // namespace memopt

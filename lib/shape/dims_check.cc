#include "shape/dims_check.h"

#include <limits>
#include <string>

#include "shape/shape_infer.h"

namespace memopt {

namespace {

std::optional<Shape> Bound(const std::optional<Shape>& shape, const DimBindings& dims) {
  if (!shape.has_value()) return std::nullopt;
  Shape out = *shape;
  for (SymExpr& d : out) d = d.Substitute(dims);
  return out;
}

bool AllConstant(const Shape& shape) {
  for (const SymExpr& d : shape) {
    if (!d.AsInt().has_value()) return false;
  }
  return true;
}

/// True when some dim is constant on both sides with different values. `only_where_symbolic`
/// restricts the comparison to dims that `before` had symbolic (ignores the model's own
/// disagreements that no binding causes).
bool Contradicts(const Shape& a, const Shape& b, const Shape* before = nullptr) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k) {
    if (before != nullptr && (*before)[k].IsConstant()) continue;
    const auto x = a[k].AsInt();
    const auto y = b[k].AsInt();
    if (x.has_value() && y.has_value() && *x != *y) return true;
  }
  return false;
}

std::string DimsText(const DimBindings& dims) {
  std::string s;
  for (const auto& [name, value] : dims.values()) s += (s.empty() ? "" : ",") + name + "=" + std::to_string(value);
  return s;
}

std::string ProducerText(const Graph& g, ValueId v) {
  const NodeId p = g.value(v).producer;
  return p == kNone ? std::string() : " (computed by node " + g.nodes[p].Describe() + ")";
}

}  // namespace

std::vector<TensorInfo> DeclaredInfos(const Graph& graph) {
  std::vector<TensorInfo> out;
  out.reserve(graph.values.size());
  for (const Value& v : graph.values) out.push_back(v.info);
  return out;
}

Status CheckDimBindings(const Graph& inferred, const std::vector<TensorInfo>& declared, const DimBindings& dims) {
  if (dims.empty() || declared.size() != inferred.values.size()) return Status::Ok();
  const std::string prefix = "--dims " + DimsText(dims) + " contradicts the model: ";

  // The graph as loaded, with the bindings substituted into its inputs, inferred again.
  Graph rebound = inferred;
  for (size_t v = 0; v < declared.size(); ++v) rebound.values[v].info = declared[v];
  for (ValueId v : rebound.inputs) {
    auto& shape = rebound.value(v).info.shape;
    shape = Bound(shape, dims);
  }
  auto stats = InferShapes(rebound);
  if (!stats.ok()) return UsageError(prefix + stats.status().message());

  for (size_t i = 0; i < inferred.values.size(); ++i) {
    const ValueId v = static_cast<ValueId>(i);
    const Value& first = inferred.value(v);
    const auto& again = rebound.value(v).info.shape;
    if (!first.info.shape.has_value() || !again.has_value()) continue;
    const Shape bound = *Bound(first.info.shape, dims);
    if (Contradicts(bound, *again)) {
      const std::string was = ShapeToString(*first.info.shape);
      const std::string now = ShapeToString(bound);
      return UsageError(prefix + "tensor '" + first.name + "' is " + was +
                        (was == now ? std::string() : " (" + now + " under these dims)") +
                        ", but these dims make its inputs give " + ShapeToString(*again) +
                        ProducerText(inferred, v) + "; check the --dims values");
    }
    // A declared concrete dim that inference had left symbolic and the binding now contradicts.
    const auto& dec = declared[i].shape;
    if (dec.has_value() && AllConstant(*again) && Contradicts(*Bound(dec, dims), *again, &*first.info.shape)) {
      return UsageError(prefix + "tensor '" + first.name + "' is declared " + ShapeToString(*dec) +
                        ", but under these dims its inputs make it " + ShapeToString(*again) +
                        ProducerText(inferred, v) + "; check the --dims values");
    }
  }
  return Status::Ok();
}

int64_t MaxCountableValueBytes(const Graph& graph) {
  return std::numeric_limits<int64_t>::max() / static_cast<int64_t>(graph.values.size() + 1);
}

Status CheckSizesAtDims(const Graph& graph, const DimBindings& dims) {
  const int64_t limit = MaxCountableValueBytes(graph);
  for (size_t id = 0; id < graph.values.size(); ++id) {
    const Value& v = graph.values[id];
    const std::optional<SymExpr> bytes = v.info.Bytes();
    if (!bytes.has_value()) continue;
    bool bound = true, uses_dims = false;
    for (const std::string& name : bytes->Symbols()) {
      if (!dims.Get(name).has_value()) bound = false;
      uses_dims = true;
    }
    if (!bound) continue;
    const Expected<int64_t> b = bytes->EvaluateInt(dims);
    if (b.ok() && *b >= 0 && *b <= limit) continue;
    const std::string shape = v.info.shape ? ShapeToString(*v.info.shape) : std::string("?");
    const std::string what = "tensor '" + v.name + "' " + shape + " (" + DataTypeName(v.info.dtype) + ")" +
                             ProducerText(graph, static_cast<ValueId>(id));
    const std::string size = b.ok() && *b >= 0 ? "needs " + std::to_string(*b) + " bytes, more than the " +
                                                     std::to_string(limit) + " memopt can add up for this graph"
                                               : "has a byte count that overflows 64 bits";
    if (uses_dims) {
      return UsageError(what + " " + size + " at --dims " + DimsText(dims) + "; give the dims realistic values");
    }
    return InvalidInput(what + " " + size + "; fix the dims in the model");
  }
  return Status::Ok();
}

}  // namespace memopt

// The inference driver: a topological walk (Kahn's algorithm, ready nodes taken in node-id
// order), one rule per node from the registry, then a merge of each output with what the model
// declared. Linear in nodes + edges apart from the O(log n) ready heap.
//
// Merge policy (options.use_declared_shapes):
//   * the inferred shape wins when known;
//   * an inferred dim that is a fresh `unk__<N>` of this node is replaced by the declared dim when
//     the declared rank matches (the replacement is applied to every output of the node that has
//     that exact dim, and the diagnostic of the resolved dim is dropped);
//   * an inferred Max(a, b) from broadcasting two different symbols is replaced by a declared dim
//     equal to a or b (both are equal at run time unless one is 1);
//   * an inferred dim that is not a plain polynomial (floor/ceiling/Mod/Max/Min atom) is replaced
//     by a declared polynomial dim;
//   * a declared shape is used when inference has no shape at all;
//   * dtypes: the inferred dtype wins; a conflict with the declared one is a diagnostic; a
//     declared dtype fills an undefined inferred one.
// Learned dims: an op that requires two dims to be equal (a matmul inner dim, bare symbol vs
// constant) binds the symbol to the constant, and later outputs use the constant (e.g. the
// weight gradient [500, D] of an MLP whose first Gemm proved D = 784 becomes [500, 784]).
// Declared dim_params that are expressions in sympy syntax ("16*batch", "b*(s - 1)") are parsed
// first (dim_expr.h), for graph inputs as well, so that they compare equal to inferred dims.
// Known values (value propagation) are kept only for integer and bool tensors (and float tensors
// holding integral values, e.g. Cast(Shape(x))) with at most 4096 elements whose count matches
// the shape.
#include <algorithm>
#include <functional>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>

#include "ir/op_key.h"
#include "ir/topo_order.h"
#include "shape/dim_expr.h"
#include "shape/infer_context.h"
#include "shape/rule_registry.h"
#include "shape/shape_infer.h"

namespace memopt {

namespace {

using shape::InferContext;
using shape::InferState;

constexpr size_t kMaxKnownValues = 4096;
/// The prefixes of dims inference makes up (InferContext::FreshDim, DataDependentDim); their
/// numbers come from one counter.
constexpr std::string_view kFreshPrefixes[] = {"unk__", "nonzero__"};

/// The number of a made-up dim's name ("unk__12" -> "12"), or "" for other names.
std::string FreshDigits(const std::string& name) {
  for (std::string_view prefix : kFreshPrefixes) {
    if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0) return name.substr(prefix.size());
  }
  return {};
}

bool IsFreshName(const std::string& name) { return !FreshDigits(name).empty(); }

/// The name when `e` is a bare symbol, else "".
std::string BareSymbolName(const SymExpr& e) {
  if (e.IsConstant()) return {};
  std::vector<std::string> syms = e.Symbols();
  if (syms.size() != 1) return {};
  if (!(e == SymExpr::Symbol(syms[0]))) return {};
  return syms[0];
}

/// A declared dim that carries information (not itself an unknown placeholder).
bool IsInformativeDim(const SymExpr& d) {
  const std::string name = BareSymbolName(d);
  return name.empty() || !IsFreshName(name);
}

int64_t FirstFreeFreshIndex(const Graph& graph) {
  int64_t next = 0;
  for (const Value& v : graph.values) {
    if (!v.info.shape.has_value()) continue;
    for (const SymExpr& d : *v.info.shape) {
      if (d.IsConstant()) continue;
      for (const std::string& s : d.Symbols()) {
        if (!IsFreshName(s)) continue;
        const std::string digits = FreshDigits(s);
        if (digits.empty() || digits.size() > 15 ||
            !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
          continue;
        }
        next = std::max<int64_t>(next, std::stoll(digits) + 1);
      }
    }
  }
  return next;
}

bool KeepsKnownValues(const TensorInfo& info, size_t count) {
  if (count > kMaxKnownValues) return false;
  if (!(IsInteger(info.dtype) || info.dtype == DataType::kBool || IsFloatingPoint(info.dtype))) {
    return false;
  }
  if (!info.shape.has_value()) return false;
  auto numel = NumElements(*info.shape).AsInt();
  return numel.has_value() && *numel == static_cast<int64_t>(count);
}

class Driver {
 public:
  Driver(Graph& graph, const ShapeInferenceOptions& options) : graph_(graph), options_(options) {}

  Expected<ShapeInferenceStats> Run() {
    MEMOPT_ASSIGN_OR_RETURN(std::vector<NodeId> order,
                            TopologicalOrder(graph_, {.cycle_hint = "shape inference needs an acyclic graph"}));
    // Declared dims written as expressions ("16*batch") become real expressions.
    for (Value& v : graph_.values) {
      if (!v.info.shape.has_value()) continue;
      for (SymExpr& d : *v.info.shape) d = shape::NormalizeDeclaredDim(d);
    }
    declared_.reserve(graph_.values.size());
    for (const Value& v : graph_.values) declared_.push_back(v.info);
    state_.next_fresh = FirstFreeFreshIndex(graph_);
    // Node outputs are inferred from scratch; their declared info is kept aside for the merge.
    for (const Node& node : graph_.nodes) {
      for (ValueId v : node.outputs) {
        if (v == kNone) continue;
        Value& value = graph_.value(v);
        const bool is_tensor = value.info.is_tensor;
        value.info = TensorInfo{};
        value.info.is_tensor = is_tensor;
        value.known_values.reset();
      }
    }
    for (NodeId id : order) {
      MEMOPT_RETURN_IF_ERROR(VisitNode(graph_.nodes[id]));
      ++stats_.nodes_visited;
    }
    for (const Value& v : graph_.values) {
      if (!v.info.is_tensor) continue;  // sequences, maps, optionals are never sized
      if (v.info.shape.has_value()) {
        ++stats_.values_with_shape;
      } else {
        ++stats_.values_without_shape;
      }
    }
    stats_.diagnostics = std::move(state_.diagnostics);
    stats_.ops_without_rule.assign(ops_without_rule_.begin(), ops_without_rule_.end());
    return std::move(stats_);
  }

 private:
  Status VisitNode(Node& node) {
    InferContext ctx(graph_, node, state_);
    ctx.set_declared(&declared_);
    const size_t first_diag = state_.diagnostics.size();
    const OpDef* rule = shape::FindShapeRule(node.domain, node.op_type);
    if (rule != nullptr && rule->shape != nullptr) {
      Status s = rule->shape(ctx);
      if (!s.ok()) return s;
      if (rule->values != nullptr) {
        Status v = rule->values(ctx);
        if (!v.ok()) ctx.Diagnose(ctx.OutputName(0), "value propagation skipped: " + v.message());
      }
    }
    ApplyLearnedDims(node);
    MergeDeclared(ctx, first_diag);
    if (rule == nullptr || rule->shape == nullptr || ctx.declined()) {
      bool complete = true;
      for (size_t i = 0; i < node.outputs.size(); ++i) {
        if (!ctx.HasOutput(i)) continue;
        const TensorInfo& info = ctx.OutputInfo(i);
        if (info.is_tensor && (info.dtype == DataType::kUndefined || !info.shape.has_value())) complete = false;
      }
      if (!complete) {
        ops_without_rule_.insert(OpKey::Of(node).ToString());
        ctx.Diagnose(ctx.OutputName(0), "no shape rule for op '" + node.op_type + "' (domain '" +
                                            node.domain + "') and no declared type/shape for its outputs");
      }
    }
    CleanKnownValues(ctx);
    return Status::Ok();
  }

  /// Substitutes the dims learned so far (InferState::learned) into the node's outputs.
  void ApplyLearnedDims(const Node& node) {
    if (state_.learned.empty()) return;
    auto substitute = [&](SymExpr& e) {
      if (!e.IsConstant()) e = e.Substitute(state_.learned);
    };
    for (ValueId v : node.outputs) {
      if (v == kNone) continue;
      Value& value = graph_.value(v);
      if (value.info.shape.has_value()) {
        for (SymExpr& d : *value.info.shape) substitute(d);
      }
      if (value.known_values.has_value()) {
        for (SymExpr& e : *value.known_values) substitute(e);
      }
    }
  }

  void MergeDeclared(InferContext& ctx, size_t first_diag) {
    const Node& node = ctx.node();
    // fresh symbol name -> the declared dim that resolved it
    std::unordered_map<std::string, SymExpr> resolved;
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (!ctx.HasOutput(i)) continue;
      Value& value = graph_.value(node.outputs[i]);
      const TensorInfo& dec = declared_[node.outputs[i]];
      TensorInfo& inf = value.info;
      if (inf.dtype == DataType::kUndefined) {
        inf.dtype = dec.dtype;
      } else if (dec.dtype != DataType::kUndefined && dec.dtype != inf.dtype) {
        ctx.Diagnose(value.name, "dtype conflict: inferred " + DataTypeName(inf.dtype) + ", declared " +
                                     DataTypeName(dec.dtype) + "; keeping the inferred one");
      }
      if (!options_.use_declared_shapes || !dec.shape.has_value()) continue;
      if (!inf.shape.has_value()) {
        inf.shape = dec.shape;
        continue;
      }
      if (inf.shape->size() != dec.shape->size()) continue;
      for (size_t k = 0; k < inf.shape->size(); ++k) {
        SymExpr& d = (*inf.shape)[k];
        const SymExpr& dd = (*dec.shape)[k];
        if (d == dd || !IsInformativeDim(dd)) continue;
        const std::string name = BareSymbolName(d);
        if (!name.empty() && ctx.fresh_names().count(name) != 0) {
          resolved.emplace(name, dd);
          d = dd;
        } else if (state_.broadcast.Admits(d, dd)) {
          d = dd;
        } else if (!d.IsPolynomial() && dd.IsPolynomial()) {
          // The graph's own declaration is simpler than an inferred floor/ceiling/Mod/Max/Min
          // (e.g. Tile repeats computed by Div on a shape value): keep the declared dim, as ORT's
          // graph resolution does when it merges inferred and existing type info.
          d = dd;
        }
      }
    }
    if (!resolved.empty()) {
      // The same fresh dim may appear in several outputs; resolve it everywhere.
      for (ValueId v : node.outputs) {
        if (v == kNone || !graph_.value(v).info.shape.has_value()) continue;
        for (SymExpr& d : *graph_.value(v).info.shape) {
          const std::string name = BareSymbolName(d);
          if (name.empty()) continue;
          auto it = resolved.find(name);
          if (it != resolved.end()) d = it->second;
        }
      }
      auto& diags = state_.diagnostics;
      auto is_resolved = [&](const ShapeDiagnostic& diag) {
        for (const auto& [name, dim] : resolved) {
          const std::string tag = "(now " + name + ")";
          if (diag.message.size() >= tag.size() &&
              diag.message.compare(diag.message.size() - tag.size(), tag.size(), tag) == 0) {
            return true;
          }
        }
        return false;
      };
      diags.erase(std::remove_if(diags.begin() + static_cast<std::ptrdiff_t>(first_diag), diags.end(), is_resolved),
                  diags.end());
    }
  }

  void CleanKnownValues(InferContext& ctx) {
    for (ValueId v : ctx.node().outputs) {
      if (v == kNone) continue;
      Value& value = graph_.value(v);
      if (value.known_values.has_value() && !KeepsKnownValues(value.info, value.known_values->size())) {
        value.known_values.reset();
      }
    }
  }

  Graph& graph_;
  const ShapeInferenceOptions& options_;
  InferState state_;
  std::vector<TensorInfo> declared_;
  std::set<std::string> ops_without_rule_;
  ShapeInferenceStats stats_;
};

}  // namespace

Expected<ShapeInferenceStats> InferShapes(Graph& graph, const ShapeInferenceOptions& options) {
  Driver driver(graph, options);
  return driver.Run();
}

}  // namespace memopt

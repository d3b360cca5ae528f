#include "shape/lower_sequences.h"

#include <functional>
#include <optional>
#include <set>
#include <unordered_map>

#include "ir/op_key.h"
#include "shape/shape_infer.h"

namespace memopt {
namespace {

const std::set<std::string> kSequenceOps = {"SplitToSequence", "SequenceConstruct", "SequenceEmpty",
                                            "SequenceInsert",  "SequenceErase",     "SequenceAt",
                                            "SequenceLength",  "ConcatFromSequence"};
const std::set<std::string> kMakesSequence = {"SplitToSequence", "SequenceConstruct", "SequenceEmpty",
                                              "SequenceInsert", "SequenceErase"};

constexpr int kMaxRounds = 8;

/// One warning for the sequence nodes left: the first three with their reasons, then a count.
std::string Summary(const std::vector<std::string>& left) {
  std::string out = std::to_string(left.size()) + " sequence op(s) left as they are: ";
  for (size_t i = 0; i < left.size() && i < 3; ++i) out += (i ? "; " : "") + left[i];
  if (left.size() > 3) out += "; ... (" + std::to_string(left.size() - 3) + " more)";
  return out + ". memopt lowers sequences to tensors when their lengths and positions are known on load; the "
               "executors and grad cannot run the rest";
}

bool IsSequenceOp(const Node& n) { return n.domain.empty() && kSequenceOps.count(n.op_type) > 0; }
bool MakesSequence(const Node& n) { return n.domain.empty() && kMakesSequence.count(n.op_type) > 0; }
bool HasInput(const Node& n, size_t i) { return n.inputs.size() > i && n.inputs[i] != kNone; }

/// The known integer values of `v` ("" when some are unknown).
std::optional<std::vector<int64_t>> KnownInts(const Graph& inferred, ValueId v) {
  const auto& known = inferred.value(v).known_values;
  if (!known.has_value()) return std::nullopt;
  std::vector<int64_t> out;
  for (const SymExpr& e : *known) {
    auto i = e.AsInt();
    if (!i.has_value()) return std::nullopt;
    out.push_back(*i);
  }
  return out;
}

std::optional<int64_t> KnownScalar(const Graph& inferred, ValueId v) {
  auto ints = KnownInts(inferred, v);
  if (!ints.has_value() || ints->size() != 1) return std::nullopt;
  return (*ints)[0];
}

/// Names read inside subgraphs (If/Loop/Scan bodies), which a rename of value ids cannot reach.
void CollectSubgraphReads(const onnx::GraphProto& g, std::set<std::string>& out) {
  for (const auto& n : g.node()) {
    for (const auto& in : n.input()) out.insert(in);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) CollectSubgraphReads(a.g(), out);
      for (const auto& sg : a.graphs()) CollectSubgraphReads(sg, out);
    }
  }
}

/// What one SplitToSequence produces: the piece sizes along `axis`, and whether pieces are squeezed.
struct SplitPlan {
  int64_t axis = 0;
  std::vector<int64_t> sizes;
  bool squeeze = false;
};

class Lowering {
 public:
  Lowering(Graph& graph, const Graph& inferred) : graph_(graph), inferred_(inferred) {
    for (const Node& n : graph_.nodes) {
      for (const auto& a : n.proto.attribute()) {
        if (a.has_g()) CollectSubgraphReads(a.g(), subgraph_reads_);
        for (const auto& sg : a.graphs()) CollectSubgraphReads(sg, subgraph_reads_);
      }
    }
  }

  /// Decides which sequences become tensor lists; one warning per sequence node left.
  void Analyse(std::vector<std::string>& warnings) {
    for (const Node& n : graph_.nodes) {
      if (MakesSequence(n) && !n.outputs.empty() && n.outputs[0] != kNone) Length(n);
    }
    // A sequence stays when anything but a lowerable node reads it, or its producer stays.
    for (bool changed = true; changed;) {
      changed = false;
      for (auto& [v, length] : length_) {
        if (!length.has_value()) continue;
        const Value& value = graph_.value(v);
        std::string why;
        if (value.is_graph_output) why = "it is a graph output";
        if (subgraph_reads_.count(value.name)) why = "a subgraph reads it";
        if (why.empty() && !NodeLowers(graph_.node(value.producer))) why = "its input sequence stays";
        for (const auto& [consumer, slot] : value.consumers) {
          const Node& c = graph_.node(consumer);
          if (!why.empty()) break;
          if (!IsSequenceOp(c)) why = "node " + c.Describe() + " reads it";
          else if (!NodeLowers(c)) why = "node " + c.Describe() + " cannot be lowered";
        }
        if (!why.empty()) {
          length = std::nullopt;
          reason_[v] = why;
          changed = true;
        }
      }
    }
    for (const Node& n : graph_.nodes) {
      if (!IsSequenceOp(n) || NodeLowers(n)) continue;
      warnings.push_back(n.Describe() + " (" + Reason(n) + ")");
    }
  }

  /// The graph's nodes with every lowerable sequence node replaced.
  int Emit() {
    std::vector<Node> out;
    out.reserve(graph_.nodes.size());
    int lowered = 0;
    for (Node& node : graph_.nodes) {
      if (IsSequenceOp(node) && NodeLowers(node)) {  // reads the inputs' original ids
        ++lowered;
        EmitOne(node, out);
        continue;
      }
      for (ValueId& in : node.inputs) in = Renamed(in);
      out.push_back(std::move(node));
    }
    graph_.nodes = std::move(out);
    for (size_t i = 0; i < graph_.nodes.size(); ++i) graph_.nodes[i].id = static_cast<NodeId>(i);
    graph_.RebuildLinks();
    ResolveSinceVersions(graph_);
    return lowered;
  }

 private:
  ValueId Renamed(ValueId v) const {
    auto it = rename_.find(v);
    return it == rename_.end() ? v : it->second;
  }

  std::optional<int64_t> LengthOf(ValueId v) const {
    auto it = length_.find(v);
    return it == length_.end() ? std::nullopt : it->second;
  }

  std::string Reason(const Node& n) const {
    if (n.op_type == "SequenceAt" && !(HasInput(n, 1) && KnownScalar(inferred_, n.inputs[1]).has_value())) {
      return "the position is not known on load";
    }
    for (ValueId v : n.outputs) {
      if (auto it = reason_.find(v); it != reason_.end()) return it->second;
    }
    for (ValueId v : n.inputs) {
      if (auto it = reason_.find(v); it != reason_.end()) return "input '" + graph_.value(v).name + "': " + it->second;
    }
    if (n.op_type == "SequenceAt") return "the position is out of range";
    if (n.op_type == "ConcatFromSequence") return "the sequence is empty";
    return "its sequence is not known on load";
  }

  /// Normalises position `pos` into [0, length) (`length` + 1 for an insertion), or nullopt.
  static std::optional<int64_t> Position(int64_t pos, int64_t length, bool insert) {
    const int64_t bound = length + (insert ? 1 : 0);
    if (pos < 0) pos += length;
    if (pos < 0 || pos >= bound) return std::nullopt;
    return pos;
  }

  /// The position input `i` of `n`, normalised; `fallback` when the input is absent.
  std::optional<int64_t> PositionInput(const Node& n, size_t i, int64_t length, int64_t fallback, bool insert) const {
    if (!HasInput(n, i)) return fallback;
    auto pos = KnownScalar(inferred_, n.inputs[i]);
    if (!pos.has_value()) return std::nullopt;
    return Position(*pos, length, insert);
  }

  /// Whether node `n` (a sequence op) becomes tensor ops.
  bool NodeLowers(const Node& n) const {
    for (ValueId v : n.inputs) {
      if (v != kNone && length_.count(v) && !LengthOf(v).has_value()) return false;
    }
    if (MakesSequence(n)) return n.outputs[0] != kNone && LengthOf(n.outputs[0]).has_value();
    const std::optional<int64_t> length = HasInput(n, 0) ? LengthOf(n.inputs[0]) : std::nullopt;
    if (!length.has_value()) return false;
    if (n.op_type == "SequenceAt") return HasInput(n, 1) && PositionInput(n, 1, *length, 0, false).has_value();
    if (n.op_type == "ConcatFromSequence") return *length > 0;
    return true;  // SequenceLength
  }

  /// The length of the sequence node `n` makes, or the reason it is unknown.
  void Length(const Node& n) {
    const ValueId out = n.outputs[0];
    std::optional<int64_t> length;
    std::string why = "its length is not known on load";
    if (n.op_type == "SequenceConstruct") {
      length = static_cast<int64_t>(n.inputs.size());
    } else if (n.op_type == "SequenceEmpty") {
      length = 0;
    } else if (n.op_type == "SplitToSequence") {
      auto plan = PlanSplit(n, why);
      if (plan.has_value()) length = static_cast<int64_t>(plan->sizes.size());
    } else if (HasInput(n, 0) && LengthOf(n.inputs[0]).has_value()) {  // SequenceInsert / SequenceErase
      const int64_t in = *LengthOf(n.inputs[0]);
      const bool insert = n.op_type == "SequenceInsert";
      const size_t pos_input = insert ? 2 : 1;
      if (!insert && in == 0) {
        why = "it erases from an empty sequence";
      } else if (PositionInput(n, pos_input, in, insert ? in : in - 1, insert).has_value()) {
        length = in + (insert ? 1 : -1);
      } else {
        why = "the position is not known on load or out of range";
      }
    }
    length_[out] = length;
    if (!length.has_value()) reason_[out] = why;
  }

  std::optional<SplitPlan> PlanSplit(const Node& n, std::string& why) const {
    const auto& shape = inferred_.value(n.inputs[0]).info.shape;
    if (!shape.has_value()) {
      why = "the rank of its input is not known";
      return std::nullopt;
    }
    const int64_t rank = static_cast<int64_t>(shape->size());
    SplitPlan plan;
    plan.axis = n.GetInt("axis", 0);
    if (plan.axis < -rank || plan.axis >= rank) {
      why = "axis " + std::to_string(plan.axis) + " is out of range for rank " + std::to_string(rank);
      return std::nullopt;
    }
    if (plan.axis < 0) plan.axis += rank;
    const std::optional<int64_t> dim = (*shape)[plan.axis].AsInt();
    if (HasInput(n, 1)) {
      auto split = KnownInts(inferred_, n.inputs[1]);
      const auto& split_shape = inferred_.value(n.inputs[1]).info.shape;
      if (!split.has_value() || !split_shape.has_value()) {
        why = "its split sizes are not known on load";
        return std::nullopt;
      }
      if (!split_shape->empty()) {  // one size per piece
        plan.sizes = *split;
        return plan;
      }
      if (!dim.has_value()) {
        why = "the length of axis " + std::to_string(plan.axis) + " is the symbolic dim " + (*shape)[plan.axis].ToString();
        return std::nullopt;
      }
      const int64_t chunk = (*split)[0];
      if (chunk <= 0) {
        why = "split size " + std::to_string(chunk) + " is not positive";
        return std::nullopt;
      }
      // ONNX Runtime honours keepdims=0 with a scalar split too (PyTorch's unbind relies on it);
      // the ONNX spec says it is ignored whenever split is given. Pieces of size 1 lose the axis.
      plan.squeeze = n.GetInt("keepdims", 1) == 0;
      if (plan.squeeze && chunk != 1) {
        why = "keepdims=0 drops the axis of pieces of size " + std::to_string(chunk);
        return std::nullopt;
      }
      for (int64_t left = *dim; left > 0; left -= chunk) plan.sizes.push_back(std::min(chunk, left));
      return plan;
    }
    if (!dim.has_value()) {
      why = "the length of axis " + std::to_string(plan.axis) + " is the symbolic dim " + (*shape)[plan.axis].ToString();
      return std::nullopt;
    }
    plan.sizes.assign(static_cast<size_t>(*dim), 1);
    plan.squeeze = n.GetInt("keepdims", 1) == 0;
    return plan;
  }

  ValueId Fresh(const std::string& base) {
    std::string name = base;
    for (int k = 1; graph_.FindValue(name) != kNone; ++k) name = base + "__" + std::to_string(k);
    return graph_.GetOrAddValue(name);
  }

  Node MakeNode(const Node& from, const std::string& op, const std::string& suffix, std::vector<ValueId> inputs,
                std::vector<ValueId> outputs) {
    Node n;
    n.name = from.name.empty() ? std::string() : from.name + "/" + suffix;
    n.op_type = op;
    n.module = from.module;
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    n.proto.set_op_type(op);
    n.proto.set_name(n.name);
    return n;
  }

  /// A Constant int64 tensor (1-D, or a scalar when `scalar`) for `from`'s replacement.
  ValueId Constant(const Node& from, const std::string& base, const std::vector<int64_t>& ints, bool scalar,
                   std::vector<Node>& out) {
    const ValueId v = Fresh(base);
    Node c = MakeNode(from, "Constant", graph_.value(v).name, {}, {v});
    auto* attr = c.proto.add_attribute();
    attr->set_name("value");
    attr->set_type(onnx::AttributeProto::TENSOR);
    auto* t = attr->mutable_t();
    t->set_data_type(onnx::TensorProto::INT64);
    if (!scalar) t->add_dims(static_cast<int64_t>(ints.size()));
    for (int64_t i : ints) t->add_int64_data(i);
    out.push_back(std::move(c));
    return v;
  }

  static void IntsAttr(Node& n, const std::string& name, const std::vector<int64_t>& ints) {
    auto* a = n.proto.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t i : ints) a->add_ints(i);
  }

  static void IntAttr(Node& n, const std::string& name, int64_t value) {
    auto* a = n.proto.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
  }

  /// Squeeze or Unsqueeze of `x` at `axis`, in the form the model's opset takes.
  ValueId Reshaped(const Node& from, const std::string& op, ValueId x, int64_t axis, const std::string& base,
                   std::vector<Node>& out) {
    const ValueId y = Fresh(base);
    std::vector<ValueId> inputs = {x};
    if (graph_.OpsetVersion("") >= 13) inputs.push_back(Constant(from, base + "_axes", {axis}, false, out));
    Node n = MakeNode(from, op, graph_.value(y).name, std::move(inputs), {y});
    if (graph_.OpsetVersion("") < 13) IntsAttr(n, "axes", {axis});
    out.push_back(std::move(n));
    return y;
  }

  /// Appends `n`'s replacement to `out`. `n` still holds its inputs' original ids (what the
  /// inferred graph describes); the tensors it passes on are read through the renames.
  void EmitOne(const Node& n, std::vector<Node>& out) {
    const std::string& op = n.op_type;
    auto in = [&](size_t i) { return Renamed(n.inputs[i]); };
    if (op == "SplitToSequence") {
      std::string unused;
      const SplitPlan plan = *PlanSplit(n, unused);
      const std::string base = graph_.value(n.outputs[0]).name;
      std::vector<ValueId> pieces;
      for (size_t i = 0; i < plan.sizes.size(); ++i) pieces.push_back(Fresh(base + "_" + std::to_string(i)));
      std::vector<ValueId> inputs = {in(0)};
      if (graph_.OpsetVersion("") >= 13) inputs.push_back(Constant(n, base + "_sizes", plan.sizes, false, out));
      Node split = MakeNode(n, "Split", "split", std::move(inputs), pieces);
      IntAttr(split, "axis", plan.axis);
      if (graph_.OpsetVersion("") < 13) IntsAttr(split, "split", plan.sizes);
      out.push_back(std::move(split));
      if (plan.squeeze) {
        for (ValueId& p : pieces) p = Reshaped(n, "Squeeze", p, plan.axis, graph_.value(p).name + "_squeezed", out);
      }
      elements_[n.outputs[0]] = std::move(pieces);
    } else if (op == "SequenceConstruct") {
      std::vector<ValueId> list;
      for (size_t i = 0; i < n.inputs.size(); ++i) list.push_back(in(i));
      elements_[n.outputs[0]] = std::move(list);
    } else if (op == "SequenceEmpty") {
      elements_[n.outputs[0]] = {};
    } else if (op == "SequenceInsert" || op == "SequenceErase") {
      std::vector<ValueId> list = elements_.at(n.inputs[0]);
      const int64_t length = static_cast<int64_t>(list.size());
      if (op == "SequenceInsert") {
        list.insert(list.begin() + *PositionInput(n, 2, length, length, true), in(1));
      } else {
        list.erase(list.begin() + *PositionInput(n, 1, length, length - 1, false));
      }
      elements_[n.outputs[0]] = std::move(list);
    } else if (op == "SequenceAt") {
      const std::vector<ValueId>& list = elements_.at(n.inputs[0]);
      const ValueId element = list[*PositionInput(n, 1, static_cast<int64_t>(list.size()), 0, false)];
      const Value& result = graph_.value(n.outputs[0]);
      if (result.is_graph_output || subgraph_reads_.count(result.name)) {
        out.push_back(MakeNode(n, "Identity", "at", {element}, {n.outputs[0]}));
      } else {
        rename_[n.outputs[0]] = element;
      }
    } else if (op == "SequenceLength") {
      const int64_t length = static_cast<int64_t>(elements_.at(n.inputs[0]).size());
      Node c = MakeNode(n, "Constant", "length", {}, {n.outputs[0]});
      auto* attr = c.proto.add_attribute();
      attr->set_name("value");
      attr->set_type(onnx::AttributeProto::TENSOR);
      attr->mutable_t()->set_data_type(onnx::TensorProto::INT64);
      attr->mutable_t()->add_int64_data(length);
      out.push_back(std::move(c));
    } else {  // ConcatFromSequence
      std::vector<ValueId> list = elements_.at(n.inputs[0]);
      const int64_t axis = n.GetInt("axis", 0);
      if (n.GetInt("new_axis", 0) != 0) {
        for (ValueId& v : list) v = Reshaped(n, "Unsqueeze", v, axis, graph_.value(v).name + "_unsqueezed", out);
      }
      Node concat = MakeNode(n, "Concat", "concat", std::move(list), {n.outputs[0]});
      IntAttr(concat, "axis", axis);
      out.push_back(std::move(concat));
    }
  }

  Graph& graph_;
  const Graph& inferred_;
  std::set<std::string> subgraph_reads_;
  std::unordered_map<ValueId, std::optional<int64_t>> length_;  ///< every sequence value
  std::unordered_map<ValueId, std::string> reason_;
  std::unordered_map<ValueId, std::vector<ValueId>> elements_;
  std::unordered_map<ValueId, ValueId> rename_;
};

}  // namespace

Expected<LowerSequencesStats> LowerSequences(Graph& graph) {
  LowerSequencesStats stats;
  // Rounds: a sequence read back with SequenceAt may feed the next split, whose input shape
  // inference knows only once the first one is lowered (an unrolled recurrence).
  for (int round = 0; round < kMaxRounds; ++round) {
    bool any = false;
    for (const Node& n : graph.nodes) any = any || IsSequenceOp(n);
    if (!any) break;
    Graph inferred = graph;
    if (!InferShapes(inferred).ok()) break;  // the analysis reports the problem later
    Lowering lowering(graph, inferred);
    std::vector<std::string> left;
    lowering.Analyse(left);
    const int lowered = lowering.Emit();
    stats.lowered_nodes += lowered;
    if (lowered == 0 || left.empty()) {
      if (!left.empty()) stats.warnings.push_back(Summary(left));
      break;
    }
  }
  return stats;
}

}  // namespace memopt

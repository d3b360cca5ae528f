#include "analysis/recompute_search.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "analysis/exec_order.h"
#include "ir/op_key.h"

namespace memopt {
namespace {

/// Why `node` cannot start or join a recompute subgraph at `probe_level`.
std::string NotRecomputableReason(const Node& node, const OpTable& table, int probe_level) {
  const OpTable::OpEntry* entry = table.Find(node.domain, node.op_type);
  if (entry == nullptr) return fmt::format("op {} is not in the recomputable-op table", OpKey::Of(node).ToString());
  if (entry->level > probe_level) {
    return fmt::format("op {} is recomputable only at probe level {} (this scan uses probe level {})",
                       OpKey::Of(node).ToString(), entry->level, probe_level);
  }
  if (entry->versions.count(node.since_version) == 0) {
    return fmt::format("op {} since-version {} is not listed in the recomputable-op table", OpKey::Of(node).ToString(),
                       node.since_version);
  }
  return fmt::format("PythonOp func_name '{}' is not allow-listed for recompute", node.GetString("func_name", ""));
}

struct SearchOutcome {
  bool ok = false;
  bool can_compromise = false;
  Rational save_ratio = 1;
  std::vector<NodeId> subgraph;
  std::string failure;
};

class Searcher {
 public:
  Searcher(const Graph& graph, const ExecutionOrder& order, const StashedCandidates& stashed, const OpTable& table,
           const RecomputeSearchOptions& options)
      : graph_(graph), order_(order), stashed_(stashed), table_(table), options_(options),
        recomputable_(graph.nodes.size(), 0), seen_(graph.nodes.size(), -1),
        small_static_(graph.values.size(), -1) {
    for (const Node& node : graph.nodes) recomputable_[node.id] = table.IsRecomputable(node, options.probe_level);
  }

  bool recomputable(NodeId n) const { return recomputable_[n] != 0; }

  SearchOutcome Search(NodeId entry, bool compromise) {
    SearchOutcome out;
    ++stamp_;
    std::vector<std::pair<NodeId, int32_t>> work, level;
    for (int32_t k : stashed_.outputs[entry]) work.emplace_back(entry, k);
    bool first_level = true;
    bool failed = false;
    while ((options_.max_nodes == 0 || out.subgraph.size() < options_.max_nodes) && !work.empty() && !failed) {
      level.swap(work);
      work.clear();
      for (const auto& [n, k] : level) {
        if (seen_[n] == stamp_) continue;
        seen_[n] = stamp_;
        const bool r = recomputable_[n] != 0;
        if (first_level) {
          if (!r) {
            failed = true;
            out.failure = NotRecomputableReason(graph_.nodes[n], table_, options_.probe_level);
            break;
          }
        } else {
          const bool candidate = stashed_.IsCandidate(n);
          if (candidate) continue;  // boundary: the stashed tensor is read instead
          if (!r) {
            failed = true;
            out.failure = fmt::format("needs {}, which is not stashed and not recomputable: {}",
                                      graph_.nodes[n].Describe(),
                                      NotRecomputableReason(graph_.nodes[n], table_, options_.probe_level));
            break;
          }
        }
        out.subgraph.push_back(n);
        const Node& node = graph_.nodes[n];
        const Rational ratio = CastSizeRatio(graph_, node);
        const bool widening = ratio < Rational(1);
        if (widening) out.can_compromise = true;
        if (widening && compromise) {
          out.save_ratio = Rational(1) - ratio;
          continue;  // stop at the Cast: its smaller input stays stashed
        }
        const std::vector<int>& ignorable = table_.IgnorableInputs(node);
        for (const InEdge& e : InputEdges(graph_, n)) {
          if (std::binary_search(ignorable.begin(), ignorable.end(), e.dst)) continue;
          if (IsSmallStatic(node.inputs[e.dst])) continue;
          work.emplace_back(e.producer, e.src);
        }
      }
      first_level = false;
    }
    if (!failed && !work.empty()) {
      failed = true;
      out.failure = fmt::format("subgraph search stopped at the node limit ({} nodes)", options_.max_nodes);
    }
    if (failed) {
      out.subgraph.clear();
      return out;
    }
    std::sort(out.subgraph.begin(), out.subgraph.end(),
              [&](NodeId a, NodeId b) { return order_.position[a] < order_.position[b]; });
    out.ok = true;
    return out;
  }

 private:
  // Fully static shape with fewer than the table's small_static_elements (ORT: 2^20; a scalar
  // counts 1): not traversed, the clone reads the original tensor.
  bool IsSmallStatic(ValueId v) {
    const int64_t limit = table_.small_static_elements();
    if (small_static_[v] >= 0) return small_static_[v] != 0;
    bool small = false;
    const TensorInfo& info = graph_.values[v].info;
    if (info.is_tensor && info.shape.has_value()) {
      small = true;
      int64_t elements = 1;
      for (const SymExpr& dim : *info.shape) {
        std::optional<int64_t> d = dim.AsInt();
        if (!d || *d < 0) {
          small = false;
          break;
        }
        if (*d != 0 && elements > limit / *d) {
          elements = limit;  // saturate: not small
        } else {
          elements *= *d;
        }
      }
      if (small) small = elements < limit;
    }
    small_static_[v] = small ? 1 : 0;
    return small;
  }

  const Graph& graph_;
  const ExecutionOrder& order_;
  const StashedCandidates& stashed_;
  const OpTable& table_;
  const RecomputeSearchOptions& options_;
  std::vector<char> recomputable_;
  std::vector<int32_t> seen_;
  std::vector<int8_t> small_static_;
  int32_t stamp_ = 0;
};

}  // namespace

std::string ClusterId(const Graph& graph, const std::vector<NodeId>& subgraph) {
  std::string id;
  for (NodeId n : subgraph) id.append(graph.nodes[n].op_type).append("+");
  return id;
}

Rational CastSizeRatio(const Graph& graph, const Node& node) {
  if (node.op_type != "Cast" || !node.domain.empty() || node.inputs.empty() || node.outputs.empty()) return 1;
  if (node.inputs[0] == kNone || node.outputs[0] == kNone) return 1;
  DataType in = graph.values[node.inputs[0]].info.dtype;
  DataType out = graph.values[node.outputs[0]].info.dtype;
  if (out == DataType::kUndefined && node.HasAttr("to")) out = static_cast<DataType>(node.GetInt("to", 0));
  const int64_t in_bytes = ElemByteSize(in);
  const int64_t out_bytes = ElemByteSize(out);
  if (in_bytes <= 0 || out_bytes <= 0) return 1;
  return Rational::Make(in_bytes, out_bytes);
}

RecomputeSearchResult SearchRecomputePlans(const Graph& graph, const ExecutionOrder& order,
                                           const StashedCandidates& stashed,
                                           const std::vector<NodeId>& layer_boundaries, const OpTable& table,
                                           const RecomputeSearchOptions& options) {
  RecomputeSearchResult result;
  Searcher searcher(graph, order, stashed, table, options);
  std::vector<char> is_boundary_ln(graph.nodes.size(), 0);
  if (options.layer_boundary) {
    for (NodeId n : layer_boundaries) is_boundary_ln[n] = 1;
  }
  for (auto it = stashed.nodes.rbegin(); it != stashed.nodes.rend(); ++it) {
    const NodeId entry = *it;
    const Node& node = graph.nodes[entry];
    if (!searcher.recomputable(entry)) {
      result.rejected.push_back(
          {entry, "not recomputable: " + NotRecomputableReason(node, table, options.probe_level)});
      continue;
    }
    std::string gate;
    if (options.layer_boundary) {
      for (int32_t k : stashed.outputs[entry]) {
        const Value& v = graph.values[node.outputs[k]];
        for (const auto& [consumer, slot] : v.consumers) {
          if (slot == 0 && is_boundary_ln[consumer]) {
            gate = fmt::format("output '{}' is input 0 of layer-boundary LayerNorm {}: kept stashed as the layer "
                               "checkpoint",
                               v.name, graph.nodes[consumer].Describe());
            break;
          }
        }
        if (!gate.empty()) break;
      }
    }
    if (!gate.empty()) {
      result.rejected.push_back({entry, gate});
      continue;
    }
    auto add_plan = [&](SearchOutcome& outcome, bool compromise) {
      RecomputePlan plan;
      plan.entry = entry;
      for (int32_t k : stashed.outputs[entry]) {
        StashedOutput out;
        out.output_index = k;
        out.value = node.outputs[k];
        out.bytes = graph.values[out.value].info.Bytes();
        plan.outputs.push_back(std::move(out));
      }
      plan.subgraph = std::move(outcome.subgraph);
      plan.compromise = compromise;
      plan.save_ratio = compromise ? outcome.save_ratio : Rational(1);
      plan.cluster_id = ClusterId(graph, plan.subgraph);
      result.plans.push_back(std::move(plan));
    };
    SearchOutcome full = searcher.Search(entry, /*compromise=*/false);
    // ORT 1.19.2 searches the compromise plan whenever the full search met a widening Cast, and
    // keeps both plans (type 1 first); ORT's later sources only when the full search failed.
    const bool try_compromise = full.can_compromise && (!full.ok || !options.compromise_only_on_failure);
    SearchOutcome second = try_compromise ? searcher.Search(entry, /*compromise=*/true) : SearchOutcome{};
    if (!full.ok && !second.ok) {
      result.rejected.push_back({entry, "no recompute subgraph: " + full.failure});
      continue;
    }
    if (full.ok) add_plan(full, false);
    if (second.ok) add_plan(second, true);
  }
  std::reverse(result.rejected.begin(), result.rejected.end());
  return result;
}

}  // namespace memopt

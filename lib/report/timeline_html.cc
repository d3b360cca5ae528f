#include "report/timeline_html.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "report/module_label.h"
#include "report/timeline_escape.h"

namespace memopt {

namespace {

std::string NodeLabel(const Node& node) {
  return (node.name.empty() ? node.op_type + "#" + std::to_string(node.id) : node.name) + InModule(node);
}

std::string TypeText(const Value& v) {
  if (!v.info.is_tensor) return "non-tensor";
  return DataTypeName(v.info.dtype) + (v.info.shape ? ShapeToString(*v.info.shape) : std::string("[?]"));
}

/// Rows of the page's node table, shared by both timelines (keyed by timeline and node id).
class NodeTable {
 public:
  static constexpr size_t kMaxOutputs = 3;

  int Index(int timeline, const TimelineData& t, NodeId id) {
    auto [it, inserted] = index_.try_emplace({timeline, id}, static_cast<int>(rows_.size()));
    if (inserted) rows_.push_back(Row(t, id));
    return it->second;
  }
  nlohmann::json Take() { return std::move(rows_); }

 private:
  static nlohmann::json Row(const TimelineData& t, NodeId id) {
    const Graph& g = *t.graph;
    const Node& node = g.node(id);
    std::vector<ValueId> outs;
    for (ValueId v : node.outputs) {
      if (v != kNone) outs.push_back(v);
    }
    auto bytes = [&](ValueId v) { return static_cast<size_t>(v) < t.value_bytes.size() ? t.value_bytes[v] : 0; };
    auto kind = [&](ValueId v) {
      return static_cast<size_t>(v) < t.value_kind.size() ? std::max<int>(t.value_kind[v], 0) : 0;
    };
    std::stable_sort(outs.begin(), outs.end(), [&](ValueId a, ValueId b) { return bytes(a) > bytes(b); });
    nlohmann::json outputs = nlohmann::json::array();
    for (size_t i = 0; i < outs.size() && i < kMaxOutputs; ++i) {
      const Value& v = g.value(outs[i]);
      outputs.push_back({v.name, TypeText(v), bytes(outs[i]), kind(outs[i])});
    }
    return nlohmann::json::array({NodeLabel(node), node.op_type, outputs, static_cast<int>(outs.size())});
  }

  std::map<std::pair<int, NodeId>, int> index_;
  nlohmann::json rows_ = nlohmann::json::array();
};

nlohmann::json TimelineJson(int index, const std::string& label, const TimelineData& t, size_t max_points,
                            NodeTable& nodes) {
  const std::vector<TimelineBucket> buckets = AggregateTimeline(t, max_points);
  nlohmann::json j;
  j["label"] = label;
  j["steps"] = t.steps();
  j["last_forward"] = t.last_forward;
  j["sized"] = t.sized;
  j["unbound_dims"] = t.unbound_dims;
  j["unsized_values"] = t.unsized_values;
  j["aggregated"] = buckets.size() < t.steps();
  nlohmann::json peak;
  peak["bytes"] = t.peak_bytes;
  peak["step"] = t.peak_position;
  peak["node"] = t.peak_node == kNone ? "" : NodeLabel(t.graph->node(t.peak_node));
  peak["op"] = t.peak_node == kNone ? "" : t.graph->node(t.peak_node).op_type;
  peak["text"] = TimelinePeakText(t);
  j["peak"] = peak;
  std::vector<int32_t> first, rep;
  std::vector<int64_t> min_total;
  std::vector<int> node;
  std::vector<std::vector<int64_t>> kinds(kNumLiveKinds);
  for (const TimelineBucket& b : buckets) {
    first.push_back(b.first);
    rep.push_back(b.rep);
    min_total.push_back(b.min_total);
    node.push_back(nodes.Index(index, t, t.order[b.rep]));
    for (int k = 0; k < kNumLiveKinds; ++k) kinds[k].push_back(b.at_rep[k]);
  }
  j["first"] = first;
  j["rep"] = rep;
  j["min"] = min_total;
  j["kinds"] = kinds;
  j["node"] = node;
  nlohmann::json at_peak = nlohmann::json::array();
  for (const TimelineTensor& tt : t.live_at_peak) {
    const Value& v = t.graph->value(tt.value);
    nlohmann::json row;
    row["tensor"] = v.name;
    row["kind"] = static_cast<int>(tt.kind);
    row["type"] = TypeText(v);
    row["bytes"] = tt.bytes;
    row["producer"] = v.producer == kNone ? "" : NodeLabel(t.graph->node(v.producer));
    row["producer_op"] = v.producer == kNone ? "" : t.graph->node(v.producer).op_type;
    at_peak.push_back(row);
  }
  j["live_at_peak"] = at_peak;
  return j;
}

}  // namespace

nlohmann::json TimelineToJson(const TimelineView& view, size_t max_points) {
  nlohmann::json j;
  j["schema_version"] = 1;
  j["title"] = view.title;
  j["subtitle"] = view.subtitle;
  nlohmann::json kinds = nlohmann::json::array();
  for (int k = 0; k < kNumLiveKinds; ++k) {
    const LiveKind kind = static_cast<LiveKind>(k);
    kinds.push_back({{"key", LiveKindKey(kind)}, {"label", LiveKindLabel(kind)}, {"color", LiveKindColor(kind)}});
  }
  j["kinds"] = kinds;
  j["overlay_color"] = kOverlayColor;
  j["series_count"] = TimelineSeriesCount(view);
  NodeTable nodes;
  nlohmann::json timelines = nlohmann::json::array();
  timelines.push_back(TimelineJson(0, view.original_label, *view.original, max_points, nodes));
  if (view.rewritten) timelines.push_back(TimelineJson(1, view.rewritten_label, *view.rewritten, max_points, nodes));
  j["timelines"] = timelines;
  j["nodes"] = nodes.Take();
  return j;
}

std::string RenderTimelineHtml(const TimelineView& view, size_t max_points) {
  // Names that are not valid UTF-8 are replaced, not thrown on.
  const std::string json =
      TimelineToJson(view, max_points).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return TimelineHtmlPage(view.title, JsonForScript(json));
}

}  // namespace memopt

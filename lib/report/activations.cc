#include "report/activations.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "analysis/layer_boundary.h"
#include "analysis/stashed.h"
#include "report/module_label.h"
#include "util/bytes.h"

namespace memopt {

namespace {

struct PlanMark {
  std::string config;
  Rational ratio = 1;
};

/// The rows (indices into the unfolded list, in order) of one part of the forward pass.
struct Segment {
  enum Kind { kPre, kLayer, kPost } kind = kPre;
  int layer = -1;
  std::vector<size_t> rows;
};

/// What must match for two layers' tensors to fold: not the names, not the plan's cluster string
/// (the first layer's cluster often also holds shared subgraphs such as an attention mask).
std::string Signature(const Graph& g, const ActivationRow& r) {
  const Value& v = g.value(r.values[0]);
  return fmt::format("{}|{}|{}|{}|{}", g.node(r.producer).op_type, r.output_index, static_cast<int>(v.info.dtype),
                     v.info.shape ? ShapeToString(*v.info.shape) : "?", r.recompute ? 1 : 0);
}

bool SameRows(const std::vector<std::string>& sig, const Segment& a, const Segment& b) {
  if (a.rows.size() != b.rows.size()) return false;
  for (size_t i = 0; i < a.rows.size(); ++i) {
    if (sig[a.rows[i]] != sig[b.rows[i]]) return false;
  }
  return true;
}

/// Splits the last layer into the rows that repeat `prev` (in order, as a subsequence) and the
/// rest ("post": final norm, head, loss, shape bookkeeping). False when `prev` does not repeat.
bool SplitTail(const std::vector<std::string>& sig, const Segment& prev, Segment& last, Segment* post) {
  std::vector<size_t> layer_rows, rest;
  size_t next = 0;
  for (size_t r : last.rows) {
    if (next < prev.rows.size() && sig[r] == sig[prev.rows[next]]) {
      layer_rows.push_back(r);
      ++next;
    } else {
      rest.push_back(r);
    }
  }
  if (next < prev.rows.size() || rest.empty()) return false;
  last.rows = std::move(layer_rows);
  post->kind = Segment::kPost;
  post->rows = std::move(rest);
  return true;
}

std::string ShapeAtDims(const Value& v, const DimBindings& dims) {
  if (!v.info.shape) return "[?]";
  Shape s;
  for (const SymExpr& d : *v.info.shape) s.push_back(d.Substitute(dims));
  return ShapeToString(s);
}

std::string BytesCell(const std::optional<SymExpr>& bytes, const DimBindings& dims) {
  if (!bytes) return "unknown";
  Expected<int64_t> b = bytes->EvaluateInt(dims);
  return b.ok() ? HumanBytes(*b) : bytes->ToString() + " B";
}

std::string BytesSummary(const SymExpr& bytes, const DimBindings& dims) {
  Expected<int64_t> b = bytes.EvaluateInt(dims);
  return b.ok() ? fmt::format("{} ({} bytes)", HumanBytes(*b), WithThousands(*b)) : bytes.ToString() + " bytes";
}

}  // namespace

std::vector<size_t> TablePlans(const ScanResult& scan) {
  std::vector<size_t> plans;
  for (const PlanGroup& g : scan.groups) plans.insert(plans.end(), g.plans.begin(), g.plans.end());
  std::sort(plans.begin(), plans.end());
  return plans;
}

ActivationTable BuildActivationTable(const Graph& graph, const ScanResult& scan, const ActivationOptions& options) {
  ActivationTable table;
  const StashedCandidates stashed = FindStashedCandidates(graph, scan.order);
  std::map<ValueId, PlanMark> marks;
  for (size_t p : options.plans) {
    if (p >= scan.plans.size()) continue;
    const RecomputePlan& plan = scan.plans[p];
    for (const StashedOutput& so : plan.outputs) {
      marks.emplace(so.value, PlanMark{fmt::format("{}:{}:-1", plan.cluster_id, plan.type()), plan.save_ratio});
    }
  }

  // Unfolded rows, in execution order of the producers.
  std::vector<ActivationRow> rows;
  for (NodeId n : stashed.nodes) {
    if (graph.node(n).op_type == "YieldOp") continue;  // its outputs are incoming gradients
    for (int32_t idx : stashed.outputs[n]) {
      ActivationRow r;
      r.values = {graph.node(n).outputs[idx]};
      r.producer = n;
      r.output_index = idx;
      r.forward_position = scan.order.position[n];
      for (const auto& [consumer, slot] : graph.value(r.values[0]).consumers) {
        if (scan.order.IsBackward(consumer)) r.last_use_position = std::max(r.last_use_position, scan.order.position[consumer]);
      }
      auto mark = marks.find(r.values[0]);
      if (mark != marks.end()) {
        r.recompute = true;
        r.config = mark->second.config;
      }
      r.configs = {r.config};
      r.bytes = graph.value(r.values[0]).info.Bytes();
      if (r.bytes) {
        table.total_bytes += *r.bytes;
        if (r.recompute) table.recompute_bytes += r.bytes->Scaled(mark->second.ratio);
      }
      table.tensors += 1;
      table.recompute_tensors += r.recompute ? 1 : 0;
      rows.push_back(std::move(r));
    }
  }

  // Segments at the layer boundaries.
  std::vector<NodeId> boundaries = scan.layer_boundaries;
  if (boundaries.empty() && scan.boundary.kind != Boundary::Kind::kNone) {
    boundaries = FindLayerBoundaryLayerNormNodes(graph, scan.order, scan.boundary);
  }
  std::vector<int32_t> starts;
  for (NodeId b : boundaries) starts.push_back(scan.order.position[b]);
  std::sort(starts.begin(), starts.end());
  table.layers = static_cast<int>(starts.size());
  std::vector<Segment> segments;
  for (size_t i = 0; i < rows.size(); ++i) {
    const int s = static_cast<int>(std::upper_bound(starts.begin(), starts.end(), rows[i].forward_position) -
                                   starts.begin());
    if (segments.empty() || segments.back().layer != s - 1) {
      Segment seg;
      seg.kind = s == 0 ? Segment::kPre : Segment::kLayer;
      seg.layer = s - 1;
      segments.push_back(seg);
    }
    segments.back().rows.push_back(i);
  }
  std::vector<std::string> sig(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) sig[i] = Signature(graph, rows[i]);
  // The last layer also holds the head: split it off when the layer part repeats the layer before.
  if (segments.size() >= 2 && segments.back().kind == Segment::kLayer &&
      segments[segments.size() - 2].kind == Segment::kLayer) {
    Segment post;
    if (SplitTail(sig, segments[segments.size() - 2], segments.back(), &post)) segments.push_back(std::move(post));
  }
  if (starts.empty()) {
    for (Segment& s : segments) s.kind = Segment::kPost;  // no layers: one unlabelled run
  }

  for (size_t i = 0; i < segments.size();) {
    size_t j = i + 1;
    if (options.fold && segments[i].kind == Segment::kLayer) {
      while (j < segments.size() && segments[j].kind == Segment::kLayer && SameRows(sig, segments[i], segments[j])) ++j;
    }
    const Segment& first = segments[i];
    std::string label;
    if (starts.empty()) {
      label = "";
    } else if (first.kind == Segment::kPre) {
      label = "pre";
    } else if (first.kind == Segment::kPost) {
      label = "post";
    } else if (j - i == 1) {
      label = fmt::format("layer {}", first.layer);
    } else {
      label = fmt::format("layers {}-{}", first.layer, segments[j - 1].layer);
    }
    for (size_t r = 0; r < first.rows.size(); ++r) {
      ActivationRow row = rows[first.rows[r]];
      for (size_t k = i + 1; k < j; ++k) {
        const ActivationRow& other = rows[segments[k].rows[r]];
        row.values.push_back(other.values[0]);
        row.configs.push_back(other.configs[0]);
      }
      row.segment = label;
      if (first.kind == Segment::kLayer) {
        row.layer_first = first.layer;
        row.layer_last = segments[j - 1].layer;
      }
      table.rows.push_back(std::move(row));
    }
    i = j;
  }
  return table;
}

TextTable ActivationTextTable(const Graph& graph, const ActivationTable& table, const DimBindings& dims) {
  const bool modules = HasModules(graph);
  std::vector<std::string> header = {"layer", "tensor", "producer", "op", "shape", "at dims", "dtype", "bytes",
                                     "live (steps)", "decision", "plan"};
  if (modules) header.insert(header.begin() + 3, "module");
  TextTable t(header);
  for (const ActivationRow& r : table.rows) {
    const Value& v = graph.value(r.values[0]);
    std::string layer = r.segment;
    if (r.values.size() > 1) layer += fmt::format(" (x{})", r.values.size());
    const std::string live = r.last_use_position >= 0
                                 ? fmt::format("{}-{}", r.forward_position + 1, r.last_use_position + 1)
                                 : fmt::format("{}-", r.forward_position + 1);
    std::vector<std::string> row = {layer, v.name, graph.node(r.producer).name, graph.node(r.producer).op_type,
                                    v.info.shape ? ShapeToString(*v.info.shape) : "[?]", ShapeAtDims(v, dims),
                                    DataTypeName(v.info.dtype), BytesCell(r.bytes, dims), live,
                                    r.recompute ? "RECOMPUTE" : "SAVE",
                                    r.config + (r.ConfigVaries() ? " (first layer; others differ)" : "")};
    if (modules) row.insert(row.begin() + 3, graph.node(r.producer).module);
    t.AddRow(row);
  }
  return t;
}

std::string RenderActivationsText(const std::string& model_name, const Graph& graph, const ActivationTable& table,
                                  const ActivationOptions& options, OutputFormat format) {
  const TextTable t = ActivationTextTable(graph, table, options.dims);
  if (format == OutputFormat::kCsv) return t.ToCsv();
  std::string out;
  if (format == OutputFormat::kMarkdown) {
    out += fmt::format("**memopt scan --activations** `{}`: {} stashed activations, {}\n\n", model_name,
                       table.tensors, BytesSummary(table.total_bytes, options.dims));
    return out + t.ToMarkdown();
  }
  out += fmt::format("Model: {} ({} nodes)\n", model_name, graph.nodes.size());
  out += fmt::format("Stashed activations (forward outputs the backward pass reads): {}, {}\n", table.tensors,
                     BytesSummary(table.total_bytes, options.dims));
  out += fmt::format("Plan: {}: RECOMPUTE {} tensor{}, frees {}\n",
                     options.plan_label.empty() ? std::string("the selected plans") : options.plan_label,
                     table.recompute_tensors, table.recompute_tensors == 1 ? "" : "s",
                     BytesSummary(table.recompute_bytes, options.dims));
  if (table.layers > 0) {
    out += fmt::format("Layers: {} (identical layers folded into one row per tensor: \"layers a-b (xN)\"; "
                       "names are the first layer's)\n",
                       table.layers);
  }
  out += "\n" + t.ToText();
  return out;
}

nlohmann::json ActivationsToJson(const std::string& model_name, const Graph& graph, const ActivationTable& table,
                                 const ActivationOptions& options) {
  using json = nlohmann::json;
  json j;
  j["schema_version"] = 1;
  j["tool"] = "memopt";
  j["version"] = MEMOPT_VERSION;
  j["command"] = "scan --activations";
  j["model"] = {{"path", model_name}, {"nodes", graph.nodes.size()}};
  json dims = json::object();
  for (const auto& [k, v] : options.dims.values()) dims[k] = v;
  j["dims"] = dims;
  j["plan"] = options.plan_label;
  j["layers"] = table.layers;
  j["tensors"] = table.tensors;
  j["recompute_tensors"] = table.recompute_tensors;
  auto bytes_json = [&](const SymExpr& e) {
    Expected<int64_t> b = e.EvaluateInt(options.dims);
    return b.ok() ? json(*b) : json(nullptr);
  };
  j["total_bytes"] = bytes_json(table.total_bytes);
  j["total_symbolic"] = table.total_bytes.ToString();
  j["recompute_bytes"] = bytes_json(table.recompute_bytes);
  j["recompute_symbolic"] = table.recompute_bytes.ToString();
  json rows = json::array();
  for (const ActivationRow& r : table.rows) {
    const Value& v = graph.value(r.values[0]);
    json names = json::array();
    for (ValueId id : r.values) names.push_back(graph.value(id).name);
    rows.push_back({{"segment", r.segment},
                    {"layer_first", r.layer_first < 0 ? json(nullptr) : json(r.layer_first)},
                    {"layer_last", r.layer_last < 0 ? json(nullptr) : json(r.layer_last)},
                    {"count", r.values.size()},
                    {"tensor", v.name},
                    {"tensors", names},
                    {"producer", graph.node(r.producer).name},
                    {"op_type", graph.node(r.producer).op_type},
                    {"output_index", r.output_index},
                    {"dtype", DataTypeName(v.info.dtype)},
                    {"shape", v.info.shape ? json(ShapeToString(*v.info.shape)) : json(nullptr)},
                    {"shape_at_dims", v.info.shape ? json(ShapeAtDims(v, options.dims)) : json(nullptr)},
                    {"bytes", r.bytes ? bytes_json(*r.bytes) : json(nullptr)},
                    {"bytes_symbolic", r.bytes ? json(r.bytes->ToString()) : json(nullptr)},
                    {"forward_position", r.forward_position},
                    {"last_use_position", r.last_use_position},
                    {"decision", r.recompute ? "RECOMPUTE" : "SAVE"},
                    {"config", r.config.empty() ? json(nullptr) : json(r.config)},
                    {"configs", r.configs}});
    if (!graph.node(r.producer).module.empty()) rows.back()["module"] = graph.node(r.producer).module;
  }
  j["activations"] = rows;
  return j;
}

}  // namespace memopt

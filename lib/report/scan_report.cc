#include "report/scan_report.h"

#include <fmt/format.h>

#include "report/module_label.h"
#include "util/bytes.h"

namespace memopt {

namespace {

const char* BoundaryKindName(Boundary::Kind kind) {
  switch (kind) {
    case Boundary::Kind::kYieldOp: return "yieldop";
    case Boundary::Kind::kOverride: return "override";
    case Boundary::Kind::kLoss: return "loss";
    case Boundary::Kind::kNone: return "none";
  }
  return "none";
}

std::string NodeName(const Graph& g, NodeId id) { return id == kNone ? "" : g.node(id).name; }

std::string ValueType(const Value& v) {
  if (!v.info.is_tensor) return "non-tensor";
  std::string shape = v.info.shape ? ShapeToString(*v.info.shape) : "[?]";
  return DataTypeName(v.info.dtype) + shape;
}

/// "2,000" when bound, else the sympy expression (as ORT's table does).
std::string MaxSavingCell(const PlanGroup& g) {
  if (g.saving_bytes) return WithThousands(*g.saving_bytes);
  if (g.saving) return g.saving->ToSympyString();
  return "unknown";
}

std::string SymbolicCell(const std::optional<SymExpr>& e) { return e ? e->ToSympyString() : "unknown"; }

nlohmann::json UnsizedNames(const Graph& g, const PeakEstimate& p) {
  nlohmann::json names = nlohmann::json::array();
  for (ValueId v : p.unsized) names.push_back(g.value(v).name);
  return names;
}

int ShownLevel(const ScanReportInput& in) { return in.options ? in.options->level : 1; }

int CountForward(const ExecutionOrder& order) { return order.last_forward + 1; }

std::string PhaseAt(const ExecutionOrder& order, int32_t position) {
  if (position < 0) return "";
  return position <= order.last_forward ? "forward" : "backward";
}

std::string BytesLine(int64_t bytes) { return fmt::format("{} ({} bytes)", HumanBytes(bytes), WithThousands(bytes)); }

void AppendDetails(const ScanReportInput& in, std::string& out) {
  const Graph& g = *in.graph;
  const ScanResult& r = *in.result;
  out += "\nLayer boundaries";
  if (r.layer_boundaries.empty()) {
    out += ": none\n";
  } else {
    out += fmt::format(" ({}):", r.layer_boundaries.size());
    for (size_t i = 0; i < r.layer_boundaries.size(); ++i) {
      out += (i ? ", " : " ") + NodeName(g, r.layer_boundaries[i]);
    }
    out += "\n";
  }
  out += "\nPlans by node (each stashed output, its size and what is recomputed):\n";
  for (const PlanGroup& group : r.groups) {
    out += fmt::format("  {}  (freq {})\n", group.config, group.freq);
    for (size_t idx : group.plans) {
      const RecomputePlan& plan = r.plans[idx];
      const Node& entry = g.node(plan.entry);
      out += fmt::format("    {} ({}){}\n", entry.name, entry.op_type, InModule(entry));
      for (const StashedOutput& so : plan.outputs) {
        const Value& v = g.value(so.value);
        out += fmt::format("      output {} '{}' {}: {} bytes, {}% saved\n", so.output_index, v.name, ValueType(v),
                           SymbolicCell(so.bytes),
                           static_cast<int>(plan.save_ratio.ToDouble() * 100.0 + 0.5));
      }
      out += fmt::format("      recompute {} node{}:", plan.subgraph.size(), plan.subgraph.size() == 1 ? "" : "s");
      for (NodeId n : plan.subgraph) out += " " + g.node(n).name;
      out += "\n";
    }
  }
  if (!r.rejected.empty()) {
    out += fmt::format("\nStashed but not recomputable ({} nodes):\n", r.rejected.size());
    for (const RejectedCandidate& rc : r.rejected) {
      out += fmt::format("  {} ({}): {}\n", NodeName(g, rc.node), g.node(rc.node).op_type, rc.reason);
    }
  }
  if (!r.peak.unsized.empty()) {
    out += fmt::format("\nValues of unknown size, counted as 0 bytes in the peak ({}):\n", r.peak.unsized.size());
    for (ValueId v : r.peak.unsized) {
      const Value& value = g.value(v);
      const std::string from = value.producer == kNone ? std::string("graph input or initializer")
                                                       : "output of " + g.node(value.producer).Describe();
      out += fmt::format("  '{}' {}: {}\n", value.name, ValueType(value), from);
    }
  }
  if (in.shape_stats && !in.shape_stats->diagnostics.empty()) {
    out += fmt::format("\nShape inference notes ({}):\n", in.shape_stats->diagnostics.size());
    for (const ShapeDiagnostic& d : in.shape_stats->diagnostics) {
      std::string where = d.node == kNone ? std::string("graph") : g.node(d.node).Describe();
      out += fmt::format("  {}: {}\n", where, d.message);
    }
  }
}

void AppendPeak(const ScanReportInput& in, std::string& out) {
  const Graph& g = *in.graph;
  const ScanResult& r = *in.result;
  const PeakEstimate& p = r.peak;
  if (p.peak_position < 0) {
    out += "\nPeak memory estimate: graph has no nodes\n";
    return;
  }
  const Node& node = g.node(p.peak_node);
  std::string where = fmt::format("at step {} of {} ({}), node '{}' ({}){}", p.peak_position + 1,
                                  r.order.order.size(), PhaseAt(r.order, p.peak_position), node.name, node.op_type,
                                  InModule(node));
  if (p.sized) {
    out += fmt::format("\nPeak memory estimate: {}\n  {}\n", BytesLine(p.peak_bytes), where);
    out += fmt::format("  stashed activations live at peak: {}\n", BytesLine(p.stashed_bytes_at_peak));
    out += fmt::format("  weights and graph inputs: {}\n", BytesLine(p.weights_and_inputs_bytes));
    out += fmt::format("  footprint with a planned layout (one arena + weights and inputs): {}, {:.3f}x the peak\n",
                       BytesLine(p.footprint_bytes),
                       p.peak_bytes > 0 ? static_cast<double>(p.footprint_bytes) / static_cast<double>(p.peak_bytes) : 1.0);
  } else {
    out += fmt::format("\nPeak memory estimate (symbolic, bind dims for bytes): {} bytes\n  {}\n",
                       p.peak_expr.ToString(), where);
    out += fmt::format("  stashed activations live at peak: {} bytes\n", p.stashed_expr_at_peak.ToString());
  }
  if (p.unsized_values > 0) {
    out += fmt::format("  {} value{} of unknown size counted as 0 bytes (see --details)\n", p.unsized_values,
                       p.unsized_values == 1 ? "" : "s");
  }
}

}  // namespace

TextTable PlanTable(const ScanReportInput& in) {
  TextTable t({"Configs", "Freq", "Max Saving(Bytes)", "Saving Symbolic(Bytes)"});
  for (const PlanGroup& g : in.result->groups) {
    t.AddRow({g.config, std::to_string(g.freq), MaxSavingCell(g), SymbolicCell(g.saving)});
  }
  return t;
}

std::string RenderScanText(const ScanReportInput& in, OutputFormat format) {
  const Graph& g = *in.graph;
  const ScanResult& r = *in.result;
  if (format == OutputFormat::kCsv) return PlanTable(in).ToCsv();
  std::string out;
  if (format == OutputFormat::kMarkdown) {
    out += fmt::format("**memopt scan** `{}`: {} nodes, level {}\n\n", in.model_name, g.nodes.size(), ShownLevel(in));
    out += PlanTable(in).ToMarkdown();
    if (r.peak.sized) out += fmt::format("\nPeak memory estimate: **{}**\n", BytesLine(r.peak.peak_bytes));
    return out;
  }
  out += fmt::format("Model: {} ({} nodes)\n", in.model_name, g.nodes.size());
  if (r.boundary.kind == Boundary::Kind::kNone) {
    out += "Boundary: none: no YieldOp and no gradient ops, so this is a forward-only graph and there is nothing\n"
           "          to recompute (use `memopt grad` to build a training graph, or --boundary NODE)\n";
  } else {
    out += fmt::format("Boundary: {}\n  {} forward nodes, {} backward nodes\n", r.boundary.explanation,
                       CountForward(r.order), r.order.order.size() - CountForward(r.order));
  }
  int level = ShownLevel(in);
  out += fmt::format("Level {}: {}\n", level,
                     level == 0   ? "basic op table"
                     : level == 1 ? "advanced op table, transformer layer boundaries"
                                  : "advanced op table, transformer layer boundaries, compromised recompute");
  if (r.boundary.kind != Boundary::Kind::kNone) {
    out += "\n";
    if (r.groups.empty()) {
      out += "No recompute candidates found.\n";
    } else {
      out += PlanTable(in).ToText();
    }
  }
  AppendPeak(in, out);
  if (in.details) AppendDetails(in, out);
  return out;
}

nlohmann::json ScanToJson(const ScanReportInput& in) {
  using nlohmann::json;
  const Graph& g = *in.graph;
  const ScanResult& r = *in.result;
  json j;
  j["schema_version"] = 1;
  j["tool"] = "memopt";
  j["version"] = MEMOPT_VERSION;
  j["command"] = "scan";
  json opsets = json::object();
  for (const auto& [domain, version] : g.opsets) opsets[domain.empty() ? "ai.onnx" : domain] = version;
  j["model"] = {{"path", in.model_name}, {"nodes", g.nodes.size()}, {"opsets", opsets}};
  j["level"] = ShownLevel(in);
  json dims = json::object();
  if (in.options) {
    for (const auto& [k, v] : in.options->dims.values()) dims[k] = v;
  }
  j["dims"] = dims;
  j["unbound_dims"] = r.peak.unbound_dims;
  j["boundary"] = {{"kind", BoundaryKindName(r.boundary.kind)},
                   {"node", r.boundary.node == kNone ? json(nullptr) : json(NodeName(g, r.boundary.node))},
                   {"forward_nodes", CountForward(r.order)},
                   {"backward_nodes", static_cast<int64_t>(r.order.order.size()) - CountForward(r.order)}};
  json lbs = json::array();
  for (NodeId n : r.layer_boundaries) lbs.push_back(NodeName(g, n));
  j["layer_boundaries"] = lbs;
  json groups = json::array();
  json plans = json::array();
  for (const PlanGroup& pg : r.groups) {
    groups.push_back({{"config", pg.config},
                      {"cluster_id", pg.cluster_id},
                      {"type", pg.type},
                      {"freq", pg.freq},
                      {"saving_symbolic", pg.saving ? json(pg.saving->ToSympyString()) : json(nullptr)},
                      {"saving_bytes", pg.saving_bytes ? json(*pg.saving_bytes) : json(nullptr)}});
    for (size_t idx : pg.plans) {
      const RecomputePlan& plan = r.plans[idx];
      json outs = json::array();
      for (const StashedOutput& so : plan.outputs) {
        const Value& v = g.value(so.value);
        json bytes = nullptr;
        if (so.bytes && in.options) {
          auto e = so.bytes->EvaluateInt(in.options->dims);
          if (e.ok()) bytes = *e;
        }
        outs.push_back({{"index", so.output_index},
                        {"name", v.name},
                        {"dtype", DataTypeName(v.info.dtype)},
                        {"shape", v.info.shape ? json(ShapeToString(*v.info.shape)) : json(nullptr)},
                        {"bytes_symbolic", so.bytes ? json(so.bytes->ToString()) : json(nullptr)},
                        {"bytes", bytes}});
      }
      json sub = json::array();
      for (NodeId n : plan.subgraph) sub.push_back(NodeName(g, n));
      plans.push_back({{"config", pg.config},
                       {"entry", NodeName(g, plan.entry)},
                       {"op_type", g.node(plan.entry).op_type},
                       {"type", plan.type()},
                       {"save_ratio", plan.save_ratio.ToDouble()},
                       {"outputs", outs},
                       {"subgraph", sub}});
    }
  }
  j["groups"] = groups;
  j["plans"] = plans;
  json rejected = json::array();
  for (const RejectedCandidate& rc : r.rejected) {
    rejected.push_back({{"node", NodeName(g, rc.node)}, {"op_type", g.node(rc.node).op_type}, {"reason", rc.reason}});
  }
  j["rejected"] = rejected;
  const PeakEstimate& p = r.peak;
  j["peak"] = {{"sized", p.sized},
               {"bytes", p.sized ? json(p.peak_bytes) : json(nullptr)},
               {"symbolic", p.peak_expr.ToString()},
               {"position", p.peak_position},  // 0-based index in the execution order
               {"node", p.peak_node == kNone ? json(nullptr) : json(NodeName(g, p.peak_node))},
               {"op_type", p.peak_node == kNone ? json(nullptr) : json(g.node(p.peak_node).op_type)},
               {"phase", PhaseAt(r.order, p.peak_position)},
               {"stashed_bytes", p.sized ? json(p.stashed_bytes_at_peak) : json(nullptr)},
               {"stashed_symbolic", p.stashed_expr_at_peak.ToString()},
               {"weights_and_inputs_bytes", p.sized ? json(p.weights_and_inputs_bytes) : json(nullptr)},
               {"arena_bytes", p.sized ? json(p.arena_bytes) : json(nullptr)},
               {"footprint_bytes", p.sized ? json(p.footprint_bytes) : json(nullptr)},
               {"unsized_values", p.unsized_values},
               {"unsized_value_names", UnsizedNames(g, p)}};
  json diags = json::array();
  if (in.shape_stats) {
    for (const ShapeDiagnostic& d : in.shape_stats->diagnostics) {
      diags.push_back({{"node", d.node == kNone ? json(nullptr) : json(NodeName(g, d.node))},
                       {"tensor", d.tensor},
                       {"message", d.message}});
    }
  }
  j["shape_diagnostics"] = diags;
  return j;
}

}  // namespace memopt

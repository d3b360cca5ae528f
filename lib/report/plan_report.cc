#include "report/plan_report.h"

#include <cmath>

#include <fmt/format.h>

#include "util/bytes.h"

namespace memopt {
namespace {

using nlohmann::json;

std::string NodeLabel(const Graph& g, NodeId n) {
  if (n == kNone) return "";
  return fmt::format("'{}' ({})", g.node(n).name, g.node(n).op_type);
}

std::string PeakWhere(const Graph& g, const ExecutionOrder& order, const PeakEstimate& p) {
  if (p.peak_position < 0) return "-";
  return fmt::format("step {} of {} ({}), node {}", p.peak_position + 1, order.order.size(),
                     p.peak_position <= order.last_forward ? "forward" : "backward", NodeLabel(g, p.peak_node));
}

std::string BytesCell(bool sized, int64_t bytes, const SymExpr& expr) {
  if (!sized) return expr.ToString() + " bytes";
  return fmt::format("{} ({})", HumanBytes(bytes), WithThousands(bytes));
}

std::string Change(bool sized, int64_t before, int64_t after) {
  if (!sized || before == 0) return "-";
  const double pct = 100.0 * static_cast<double>(after - before) / static_cast<double>(before);
  if (std::fabs(pct) < 0.05) return after == before ? "0%" : fmt::format("{:+.2f}%", pct);
  return fmt::format("{:+.1f}%", pct);
}

double Percent(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

TextTable EntryTable(const PlanReportInput& in) {
  TextTable t({"Config", "Occurrences", "Applied"});
  for (const EntryMatch& m : in.matches) t.AddRow({m.text, std::to_string(m.occurrences), std::to_string(m.applied)});
  return t;
}

TextTable CompareTable(const PlanReportInput& in) {
  const Graph& g = *in.graph;
  const ScanResult& s = *in.scan;
  const PlanOutcome& o = *in.outcome;
  const bool sized = s.peak.sized && o.peak.sized;
  TextTable t({"", "Original", "Rewritten", "Change"});
  t.AddRow({"Peak memory", BytesCell(s.peak.sized, s.peak.peak_bytes, s.peak.peak_expr),
            BytesCell(o.peak.sized, o.peak.peak_bytes, o.peak.peak_expr),
            Change(sized, s.peak.peak_bytes, o.peak.peak_bytes)});
  // What a static allocator holds with a layout planned from the schedule (analysis/memory_layout.h).
  auto footprint = [](const PeakEstimate& p) { return p.sized ? BytesCell(true, p.footprint_bytes, SymExpr(0)) : std::string("-"); };
  t.AddRow({"Footprint (planned layout)", footprint(s.peak), footprint(o.peak),
            Change(sized, s.peak.footprint_bytes, o.peak.footprint_bytes)});
  t.AddRow({"Stashed activations", BytesCell(s.peak.sized, in.original_stashed.bytes, in.original_stashed.expr),
            BytesCell(o.peak.sized, o.stashed.bytes, o.stashed.expr),
            Change(sized, in.original_stashed.bytes, o.stashed.bytes)});
  t.AddRow({"Added compute", "0",
            fmt::format("{} ({:.2f}% of forward), {}", HumanFlops(o.added_flops),
                        Percent(o.added_flops, in.forward_flops), HumanSeconds(o.added_seconds)),
            ""});
  t.AddRow({"Nodes", std::to_string(g.nodes.size()), std::to_string(o.rewritten.graph.nodes.size()),
            fmt::format("+{}", o.nodes_added)});
  t.AddRow({"Peak at", PeakWhere(g, s.order, s.peak),
            PeakWhere(o.rewritten.graph, o.rewritten.order, o.peak), ""});
  return t;
}

json SideJson(bool sized, int64_t peak, const SymExpr& peak_expr, const std::string& peak_node,
              const StashedTotal& stashed, size_t nodes) {
  return json{{"peak_bytes", sized ? json(peak) : json(nullptr)},
              {"peak_symbolic", peak_expr.ToString()},
              {"peak_node", peak_node.empty() ? json(nullptr) : json(peak_node)},
              {"stashed_bytes", sized ? json(stashed.bytes) : json(nullptr)},
              {"stashed_symbolic", stashed.expr.ToString()},
              {"stashed_values", stashed.values},
              {"nodes", nodes}};
}

}  // namespace

std::string HumanSeconds(double seconds) {
  if (seconds <= 0) return "0 us";
  if (seconds < 1e-3) return fmt::format("{:.2f} us", seconds * 1e6);
  if (seconds < 1) return fmt::format("{:.2f} ms", seconds * 1e3);
  return fmt::format("{:.2f} s", seconds);
}

std::string HumanFlops(int64_t flops) {
  static const char* const kUnits[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP"};
  double v = static_cast<double>(flops);
  int u = 0;
  while (std::fabs(v) >= 1000.0 && u < 6) {
    v /= 1000.0;
    ++u;
  }
  if (u == 0) return fmt::format("{} FLOP", flops);
  return fmt::format("{:.{}f} {}", v, v >= 100 ? 1 : 2, kUnits[u]);
}

std::string RenderPlanText(const PlanReportInput& in, OutputFormat format) {
  const Graph& g = *in.graph;
  const ScanResult& s = *in.scan;
  if (format == OutputFormat::kCsv) return CompareTable(in).ToCsv();
  std::string out;
  if (format == OutputFormat::kMarkdown) {
    out += fmt::format("**memopt {}** `{}`: {}\n\n", in.command, in.model_name, in.mode);
    if (!in.matches.empty()) out += EntryTable(in).ToMarkdown() + "\n";
    out += CompareTable(in).ToMarkdown();
    return out;
  }
  out += fmt::format("Model: {} ({} nodes)\n", in.model_name, g.nodes.size());
  out += fmt::format("Boundary: {}\n", s.boundary.explanation);
  out += fmt::format("Plan: {}\n", in.mode);
  if (in.budget_bytes) {
    out += fmt::format("Budget: {} ({} bytes){}\n", in.budget_text, WithThousands(*in.budget_bytes),
                       in.budget_met ? ": met" : ": NOT met");
    if (!in.objective.empty()) out += fmt::format("Minimised: {}\n", in.objective);
    if (!in.planner_method.empty()) {
      out += fmt::format("Planner: {}, {}; {} simulations\n", in.planner_method, in.planner_quality,
                         in.planner_evaluations);
    }
    if (!in.target.empty()) out += fmt::format("Target: {}\n", in.target);
  }
  out += "\n";
  if (in.matches.empty()) {
    out += "No recompute plan selected.\n";
  } else {
    out += EntryTable(in).ToText();
  }
  out += "\n" + CompareTable(in).ToText();
  if (!in.output.empty()) {
    out += fmt::format("\nWrote {} ({} config string{})\n", in.output, in.config.size(),
                       in.config.size() == 1 ? "" : "s");
  }
  return out;
}

std::optional<bool> RaisesPeak(const PlanReportInput& in) {
  if (!in.scan->peak.sized || !in.outcome->peak.sized) return std::nullopt;
  return in.outcome->peak.peak_bytes > in.scan->peak.peak_bytes;
}

std::string PeakRaisedWarning(const PlanReportInput& in) {
  if (RaisesPeak(in) != true) return "";
  const int64_t before = in.scan->peak.peak_bytes, after = in.outcome->peak.peak_bytes;
  std::string raisers;
  for (size_t i = 0; i < in.peak_raisers.size() && i < 4; ++i) {
    raisers += fmt::format("{}{} alone reaches {}", i ? ", " : "; ", in.peak_raisers[i].config,
                           WithThousands(in.peak_raisers[i].peak_bytes));
  }
  if (in.peak_raisers.size() > 4) raisers += fmt::format(" and {} more", in.peak_raisers.size() - 4);
  const std::string head = fmt::format(
      "raises the peak from {} to {} bytes ({}, {} of added compute): its recomputes keep more memory live where the "
      "peak is than they free{}",
      WithThousands(before), WithThousands(after), Change(true, before, after), HumanFlops(in.outcome->added_flops),
      raisers);
  if (in.command == "apply") {
    return "the config " + head +
           ". Leave the entries that raise it out of the config, or plan one with `memopt plan --budget`";
  }
  if (in.budget_bytes) return "the budget plan " + head;
  return fmt::format(
      "the level-{} plan {}. ONNX Runtime's level {} applies the same plan; plan with --budget instead (it never "
      "picks a plan above the unoptimized peak), or leave the entries that raise it out of the config",
      in.level, head, in.level);
}

json PlanToJson(const PlanReportInput& in) {
  const Graph& g = *in.graph;
  const ScanResult& s = *in.scan;
  const PlanOutcome& o = *in.outcome;
  json j;
  j["schema_version"] = 1;
  j["tool"] = "memopt";
  j["version"] = MEMOPT_VERSION;
  j["command"] = in.command;
  j["model"] = {{"path", in.model_name}, {"nodes", g.nodes.size()}};
  j["level"] = in.level;
  j["mode"] = in.mode;
  json dims = json::object();
  for (const auto& [name, value] : in.dims.values()) dims[name] = value;
  j["dims"] = dims;
  j["unbound_dims"] = o.peak.unbound_dims;
  j["config"] = in.config;
  json entries = json::array();
  for (const EntryMatch& m : in.matches) {
    entries.push_back({{"config", m.text}, {"occurrences", m.occurrences}, {"applied", m.applied}});
  }
  j["entries"] = entries;
  if (in.budget_bytes) {
    j["budget"] = {{"spec", in.budget_text}, {"bytes", *in.budget_bytes}, {"met", in.budget_met},
                   {"evaluations", in.planner_evaluations}, {"candidates", in.planner_candidates},
                   {"objective", in.objective}, {"target", in.target}, {"planner", in.planner_method},
                   {"optimality", in.planner_quality},
                   {"gap", in.planner_gap ? json(*in.planner_gap) : json(nullptr)}};
  } else {
    j["budget"] = nullptr;
  }
  j["original"] = SideJson(s.peak.sized, s.peak.peak_bytes, s.peak.peak_expr,
                           s.peak.peak_node == kNone ? "" : g.node(s.peak.peak_node).name, in.original_stashed,
                           g.nodes.size());
  j["original"]["forward_flops"] = in.forward_flops;
  j["original"]["footprint_bytes"] = s.peak.sized ? json(s.peak.footprint_bytes) : json(nullptr);
  const Graph& rg = o.rewritten.graph;
  j["rewritten"] = SideJson(o.peak.sized, o.peak.peak_bytes, o.peak.peak_expr,
                            o.peak.peak_node == kNone ? "" : rg.node(o.peak.peak_node).name, o.stashed,
                            rg.nodes.size());
  j["rewritten"]["footprint_bytes"] = o.peak.sized ? json(o.peak.footprint_bytes) : json(nullptr);
  j["rewritten"]["added_flops"] = o.added_flops;
  j["rewritten"]["added_flops_percent_of_forward"] = Percent(o.added_flops, in.forward_flops);
  j["rewritten"]["added_bytes_moved"] = o.added_bytes_moved;
  j["rewritten"]["added_seconds_estimate"] = o.added_seconds;
  j["rewritten"]["nodes_added"] = o.nodes_added;
  j["rewritten"]["rewired_inputs"] = o.rewired_inputs;
  // The planned peak, in the place a scan report has it (for --baseline).
  // true when the plan makes the peak worse than the unoptimized graph's (null while unsized).
  const std::optional<bool> raises = RaisesPeak(in);
  j["raises_peak"] = raises ? json(*raises) : json(nullptr);
  if (raises == true) {
    json raisers = json::array();
    for (const PeakRaiser& r : in.peak_raisers) raisers.push_back({{"config", r.config}, {"peak_bytes", r.peak_bytes}});
    j["peak_raisers"] = raisers;
  }
  j["peak"] = {{"sized", o.peak.sized},
               {"bytes", o.peak.sized ? json(o.peak.peak_bytes) : json(nullptr)},
               {"symbolic", o.peak.peak_expr.ToString()}};
  if (!in.output.empty()) j["output"] = in.output;
  return j;
}

}  // namespace memopt

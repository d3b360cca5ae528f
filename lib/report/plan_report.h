// Renders the outcome of a plan (memopt plan / apply): the config entries and what they match,
// and a before/after table (peak, stashed activations, added compute, nodes), as text, Markdown
// or JSON (schema in docs/plan.md; `peak.bytes` is the planned peak, so a plan report works as a
// --baseline for the CI gates).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/scan.h"
#include "plan/plan_outcome.h"
#include "plan/selection.h"
#include "report/table.h"

namespace memopt {

struct PlanReportInput {
  std::string command = "plan";  ///< "plan" or "apply"
  std::string model_name;
  const Graph* graph = nullptr;        ///< the original graph
  const ScanResult* scan = nullptr;    ///< of the original graph
  int level = 1;
  DimBindings dims;
  std::string mode;                    ///< "level 1 (every type-1 plan)", "budget ...", "config mem_opt.json"
  std::vector<std::string> config;     ///< the config strings as written
  std::vector<EntryMatch> matches;
  const PlanOutcome* outcome = nullptr;
  StashedTotal original_stashed;
  int64_t forward_flops = 0;
  /// Budget mode: the budget and whether it was met.
  std::optional<int64_t> budget_bytes;
  std::string budget_text;
  bool budget_met = true;
  int planner_evaluations = 0;
  int planner_candidates = 0;
  std::string planner_method;          ///< budget mode: "integer program" or "greedy search"
  std::string planner_quality;         ///< "optimal for the step model ...", or the gap
  std::optional<double> planner_gap;   ///< relative gap to the lower bound (integer program)
  std::string objective;               ///< budget mode: what was minimised, in words
  std::string target;                  ///< "memopt" (per occurrence) or "ort" (whole clusters)
  std::string output;                  ///< the file written (-o), if any
  /// When the plan raises the peak: the config entries that raise it alone (FindPeakRaisers).
  std::vector<PeakRaiser> peak_raisers;
};

std::string RenderPlanText(const PlanReportInput& in, OutputFormat format);
/// Whether the rewritten peak is above the original one: true or false when both are sized,
/// nullopt while dims are unbound. A plan that raises the peak is still a valid plan (ORT's
/// levels take every plan of the level, whatever it does to the peak), but never a silent one.
std::optional<bool> RaisesPeak(const PlanReportInput& in);
/// The warning for such a plan (peaks, change, added compute, what to do); "" when it does not
/// raise the peak.
std::string PeakRaisedWarning(const PlanReportInput& in);
nlohmann::json PlanToJson(const PlanReportInput& in);

/// "1.23 GFLOP" style (SI, 3 significant digits).
std::string HumanFlops(int64_t flops);
/// "1.39 us", "25.97 ms", "1.20 s" (the cost model's estimated time).
std::string HumanSeconds(double seconds);

}  // namespace memopt

// memopt plan --sweep: the peak / added-compute frontier of budget plans, with ORT level 1,
// ORT level 2 and per-block checkpointing as reference points (docs/plan.md, "The trade-off").
#pragma once

#include <string>

#include "analysis/scan.h"
#include "io/model_loader.h"
#include "plan/budget_planner.h"
#include "report/table.h"

namespace memopt::cli {

struct SweepRequest {
  std::string model_name;
  const Graph* graph = nullptr;
  const ScanResult* scan = nullptr;  ///< at the user's --level, --ops and --op-table
  const PlanEvaluator* evaluator = nullptr;  ///< of `scan`
  ScanOptions scan_options;          ///< how `scan` was made (the references re-scan at levels 1 and 2)
  DimBindings dims;
  BudgetPlanOptions plan;            ///< candidates or groups, objective
  int points = 10;
  std::string plot;                  ///< FILE.html | FILE.svg, or empty
  bool plot_svg = false;             ///< `plot` names an SVG file (else HTML)
  OutputFormat format = OutputFormat::kTable;
  std::string output;                ///< -o, or empty for stdout
};

/// Runs the sweep and prints / writes the report; returns the exit code.
int RunPlanSweep(const SweepRequest& request, int verbosity);

}  // namespace memopt::cli

// memopt_remat_reference: the exact reference of the general rematerialization problem
// (plan/remat_reference.h) as files for an outside solver, for scripts/remat_reference.py. Not part
// of the product; built with the tests.
//
//   memopt_remat_reference write MODEL DIMS OPS BUDGET MPS START
//     BUDGET "lowest" (the program minimises the peak) or a fraction of the unoptimized peak (it
//     minimises the recompute cost under that many bytes). Plans the same with memopt (plan
//     --sweep's lowest peak, or plan --budget), writes the program to MPS and memopt's plan, as a
//     schedule of stages, to START as the solver's start. Prints JSON: the budget in bytes,
//     memopt's plan (peak, added seconds, stages) and the program's size and objective scale.
//   memopt_remat_reference check MODEL DIMS OPS SCHEDULE
//     SCHEDULE: JSON list of stages, each the earlier steps it recomputes. Prints JSON: the peak of
//     that schedule (the best residency for it) and its added seconds.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "pipeline/load_and_scan.h"
#include "pipeline/plan_pipeline.h"
#include "plan/budget_sweep.h"
#include "plan/remat_reference.h"
#include "analysis/peak_estimate.h"

namespace memopt {
namespace {

using Stages = std::vector<std::vector<int32_t>>;

int Fail(const Status& status) {
  std::cerr << "memopt_remat_reference: error: " << status.message() << "\n";
  return 1;
}

/// memopt's plan at `budget` ("lowest": the sweep's lowest peak) and its stages.
Expected<nlohmann::json> MemoptPlan(const ScannedModel& model, const std::string& budget, int64_t* budget_bytes,
                                    Stages* stages) {
  PlanRequest request;
  request.level = model.options.level;
  const int64_t unoptimized = model.scan.peak.peak_bytes;
  if (budget == "lowest") {
    MEMOPT_ASSIGN_OR_RETURN(BudgetSetup setup, PrepareBudgetPlanning(model, request));
    SweepOptions sweep;
    sweep.plan = setup.options;
    sweep.points = 2;
    MEMOPT_ASSIGN_OR_RETURN(SweepResult swept, SweepBudgets(setup.evaluator, sweep));
    *budget_bytes = swept.lowest_peak;
  } else {
    *budget_bytes = static_cast<int64_t>(std::stod(budget) * static_cast<double>(unoptimized));
  }
  request.budget = SizeSpec{false, *budget_bytes, 0.0};
  MEMOPT_ASSIGN_OR_RETURN(std::unique_ptr<PlannedConfig> planned, PlanConfig(model, request));
  const PlanOutcome& outcome = planned->outcome;
  std::vector<NodeId> originals;
  for (const auto& clone : outcome.spec.clones) originals.push_back(clone.original);
  MEMOPT_ASSIGN_OR_RETURN(*stages, RematStagesOfRewrite(model.graph(), model.scan, outcome.rewritten.order, outcome.rewritten.new_id,
                                                         outcome.rewritten.clone_id, originals));
  nlohmann::json j;
  j["met"] = planned->planned && planned->planned->met;
  j["peak"] = outcome.peak.peak_bytes;
  j["added_seconds"] = outcome.added_seconds;
  j["config"] = nlohmann::json::parse(planned->config_text);
  j["stages"] = *stages;
  return j;
}

int Run(int argc, char** argv) {
  if (argc < 5) {
    std::cerr << "usage: memopt_remat_reference write MODEL DIMS OPS BUDGET MPS START\n"
                 "       memopt_remat_reference check MODEL DIMS OPS SCHEDULE\n"
                 "       memopt_remat_reference order MODEL DIMS OPS\n";
    return 2;
  }
  const std::string command = argv[1];
  ScanRequest request;
  request.model = argv[2];
  request.dims = argv[3];
  request.ops = argv[4];
  request.checkpoint_plans = true;  // memopt's model, as plan --budget/--sweep use it by default
  auto model = LoadAndScan(request);
  if (!model.ok()) return Fail(model.status());
  const ScannedModel& m = **model;
  nlohmann::json out;
  out["unoptimized_peak"] = m.scan.peak.peak_bytes;
  out["steps"] = m.scan.order.order.size();
  if (command == "write" && argc == 8) {
    int64_t budget_bytes = 0;
    Stages stages;
    auto memopt = MemoptPlan(m, argv[5], &budget_bytes, &stages);
    if (!memopt.ok()) return Fail(memopt.status());
    RematReferenceOptions options;
    if (std::string(argv[5]) != "lowest") options.budget = budget_bytes;
    options.start = stages;
    auto info = WriteRematReferenceProgram(m.graph(), m.scan, m.dims, options, argv[6], argv[7]);
    if (!info.ok()) return Fail(info.status());
    // The start's own peak by the reference's accounting (memopt's prediction should be it).
    RematReferenceOptions fixed;
    fixed.fixed = stages;
    auto replay = SolveRematReference(m.graph(), m.scan, m.dims, fixed);
    if (!replay.ok()) return Fail(replay.status());
    out["budget"] = budget_bytes;
    out["memopt"] = *memopt;
    out["memopt"]["reference_peak"] = replay->peak_bytes;
    out["program"] = {{"stages", info->stages},
                      {"columns", info->columns},
                      {"rows", info->rows},
                      {"objective_scale", info->objective_scale},
                      {"start_written", info->start_written}};
  } else if (command == "check" && argc == 6) {
    std::ifstream in(argv[5]);
    std::stringstream text;
    text << in.rdbuf();
    Stages schedule;
    try {
      schedule = nlohmann::json::parse(text.str()).get<Stages>();
    } catch (const std::exception& e) {
      return Fail(InvalidInput(std::string(argv[5]) + ": " + e.what()));
    }
    RematReferenceOptions fixed;
    fixed.fixed = schedule;
    auto replay = SolveRematReference(m.graph(), m.scan, m.dims, fixed);
    if (!replay.ok()) return Fail(replay.status());
    out["feasible"] = replay->feasible;
    out["optimal"] = replay->optimal;
    out["peak"] = replay->peak_bytes;
    out["added_seconds"] = replay->added_seconds;
    out["recomputations"] = replay->recomputations;
    out["stage_peaks"] = replay->stage_peaks;
    nlohmann::json resident = nlohmann::json::array();  // per stage: the steps whose outputs it keeps
    for (const auto& values : replay->resident) {
      std::set<int32_t> steps;
      for (ValueId v : values) steps.insert(m.scan.order.position[m.graph().value(v).producer]);
      resident.push_back(steps);
    }
    out["resident"] = resident;
    nlohmann::json stages = nlohmann::json::object();  // readable: stage node <- recomputed nodes
    for (size_t t = 0; t < schedule.size(); ++t) {
      if (schedule[t].empty()) continue;
      std::vector<std::string> names;
      for (int32_t i : schedule[t]) names.push_back(m.graph().node(m.scan.order.order[static_cast<size_t>(i)]).name);
      stages[std::to_string(t) + " " + m.graph().node(m.scan.order.order[t]).name] = names;
    }
    out["stages"] = stages;
  } else if (command == "order" && argc == 5) {
    // The steps: name, op, the steps whose outputs each reads, and its output bytes.
    const ValueLiveRanges live = ComputeValueLiveRanges(m.graph(), m.scan.order, m.dims);
    nlohmann::json steps = nlohmann::json::array();
    for (size_t t = 0; t < m.scan.order.order.size(); ++t) {
      const Node& node = m.graph().node(m.scan.order.order[t]);
      nlohmann::json reads = nlohmann::json::array();
      for (ValueId v : node.inputs) {
        if (v == kNone || m.graph().value(v).producer == kNone) continue;
        reads.push_back(m.scan.order.position[m.graph().value(v).producer]);
      }
      int64_t bytes = 0;
      for (ValueId v : node.outputs)
        if (v != kNone && live.bytes[v].has_value() && live.alloc[v] >= 0) bytes += live.size[v];
      steps.push_back({{"step", t}, {"name", node.name}, {"op", node.op_type}, {"reads", reads}, {"bytes", bytes}});
    }
    out["order"] = steps;
  } else {
    std::cerr << "memopt_remat_reference: error: unknown command or wrong arguments\n";
    return 2;
  }
  std::cout << out.dump(1) << "\n";
  return 0;
}

}  // namespace
}  // namespace memopt

int main(int argc, char** argv) { return memopt::Run(argc, argv); }

// The subcommand table: the single source of truth for what memopt can do.
#include "cli.h"

namespace memopt::cli {

std::function<int()> SetupScan(CLI::App& app, const GlobalOptions& globals);
std::function<int()> SetupPlan(CLI::App& app, const GlobalOptions& globals);
std::function<int()> SetupApply(CLI::App& app, const GlobalOptions& globals);
std::function<int()> SetupGrad(CLI::App& app, const GlobalOptions& globals);
std::function<int()> SetupRun(CLI::App& app, const GlobalOptions& globals);
std::function<int()> SetupBench(CLI::App& app, const GlobalOptions& globals);

const std::vector<Subcommand>& Subcommands() {
  static const std::vector<Subcommand> kSubcommands = {
      {"scan", "find recompute candidates and estimate the peak memory of a training step", SetupScan},
      {"plan", "write a recompute config (ORT mem_opt.json) for a level or a peak-memory budget", SetupPlan},
      {"apply", "apply a recompute config to a training graph and write the rewritten model", SetupApply},
      {"grad", "build the backward pass of a forward model (ORTModule training-graph layout)", SetupGrad},
      {"run", "run a model once on the CPU reference executor and measure its peak memory", SetupRun},
      {"bench", "time one or two models and compare their measured peaks and outputs", SetupBench},
  };
  return kSubcommands;
}

}  // namespace memopt::cli

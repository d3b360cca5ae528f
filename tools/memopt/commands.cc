// The subcommand table: the single source of truth for what memopt can do.
#include "cli.h"

namespace memopt::cli {

std::function<int()> SetupScan(CLI::App& app, const GlobalOptions& globals);

const std::vector<Subcommand>& Subcommands() {
  static const std::vector<Subcommand> kSubcommands = {
      {"scan", "find recompute candidates and estimate the peak memory of a training step", SetupScan},
  };
  return kSubcommands;
}

}  // namespace memopt::cli

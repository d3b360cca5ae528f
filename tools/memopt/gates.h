// CI gates shared by `scan` and `plan` (README "CI gates", scripts/ci_memory_gate.sh):
//   --fail-above SIZE              exit 3 when the peak exceeds SIZE (bytes with a unit, or a
//                                  fraction of the unoptimized peak)
//   --baseline FILE.json           exit 3 when the peak grew by more than --tolerance percent
//   --tolerance PCT                over `peak.bytes` of an earlier `--format json` report
//                                  (default 0; "5" and "5%" both mean five percent)
// The peak checked is the estimated peak for `scan` and the planned (rewritten) peak for `plan`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "analysis/scan.h"
#include "cli.h"

namespace memopt::cli {

struct GateOptions {
  std::string fail_above;
  std::string baseline;
  std::string tolerance;

  bool any() const { return !fail_above.empty() || !baseline.empty(); }
};

void AddGateOptions(CLI::App& app, GateOptions& options);

/// Checks the option values before any work (usage errors: bad size, bad tolerance,
/// --tolerance without --baseline; errors: a --baseline report that cannot be read).
Status ValidateGateOptions(const GateOptions& options);

struct GateInput {
  std::string what = "estimated peak";  ///< "estimated peak" / "planned peak"
  bool sized = false;
  int64_t peak_bytes = 0;
  int64_t unoptimized_peak_bytes = 0;   ///< reference for fractional --fail-above
  std::vector<std::string> unbound_dims;
  /// Values of unknown size (counted as 0 bytes): a gate cannot pass while there are any.
  std::vector<std::string> unsized_values;
};

/// The names of a peak's values of unknown size, for GateInput::unsized_values.
std::vector<std::string> UnsizedValueNames(const Graph& graph, const PeakEstimate& peak);

/// Runs the gates: prints one stderr line per gate, returns kExitOk, kExitGate, or the exit code
/// of an error (unreadable baseline, unbound dims). Fails closed: values of unknown size give
/// kExitGate with the reason, never a pass.
int CheckGates(const GateOptions& options, const GateInput& input, const GlobalOptions& globals);

}  // namespace memopt::cli

// `apply --verify`: runs the original and the rewritten model on the CPU executor with the same
// seeded inputs and requires every graph output (loss and gradients) to be bit-identical.
//   * the original runs in the order `scan` uses; Dropout-family nodes that the rewrite seeded
//     get the same seed in the original, so both draw the same masks;
//   * the rewritten model (as loaded back from the written file) runs in the order it is
//     predicted to run in: MEMORY_EFFICIENT for YieldOp graphs, its node order otherwise;
//   * its measured peak is returned for comparison with the predicted one.
#pragma once

#include <cstdint>
#include <string>

#include "analysis/scan.h"
#include "io/model_loader.h"
#include "plan/plan_outcome.h"
#include "util/status.h"

namespace memopt {

struct VerifyOptions {
  uint64_t seed = 0;
  std::string boundary_node;  ///< --boundary, as given to the scan
};

struct VerifyResult {
  size_t outputs_compared = 0;
  int64_t measured_peak_bytes = 0;        ///< rewritten model, CPU executor
  int64_t original_measured_peak_bytes = 0;
};

/// `rewritten` is the written file loaded back. Errors: kVerifyFailed naming the first output
/// that differs (element count, max abs diff); executor errors (unsupported op, unbound input
/// dims) with their own codes.
Expected<VerifyResult> VerifyRewrite(const Model& original, const ScanResult& scan, const PlanOutcome& outcome,
                                     const Model& rewritten, const DimBindings& dims, const VerifyOptions& options);

/// The execution order of a model written by `apply` (see the file comment).
Expected<std::vector<NodeId>> RewrittenRunOrder(const Graph& rewritten, const std::string& boundary_node);

}  // namespace memopt

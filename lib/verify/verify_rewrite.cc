#include "verify/verify_rewrite.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "analysis/boundary.h"
#include "analysis/exec_order.h"
#include "exec/executor.h"
#include "exec/random_inputs.h"
#include "rewrite/recompute_rewrite.h"

namespace memopt {
namespace {

std::string OutputMismatch(const std::string& name, const Tensor& want, const Tensor& got) {
  if (want.dtype() != got.dtype() || want.shape() != got.shape()) {
    return fmt::format("output '{}' is {} in the original and {} in the rewritten graph", name, want.Describe(),
                       got.Describe());
  }
  if (want.dtype() == DataType::kString) {
    return want.strings() == got.strings() ? "" : fmt::format("output '{}' (strings) differs", name);
  }
  if (want.bytes() == 0 || std::memcmp(want.raw(), got.raw(), static_cast<size_t>(want.bytes())) == 0) return "";
  int64_t first = -1, count = 0;
  double max_diff = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double a = want.GetAsDouble(i), b = got.GetAsDouble(i);
    if (std::memcmp(&a, &b, sizeof a) == 0) continue;
    if (first < 0) first = i;
    ++count;
    if (std::isfinite(a) && std::isfinite(b)) max_diff = std::max(max_diff, std::fabs(a - b));
  }
  return fmt::format(
      "output '{}' {} is not bit-identical: {} of {} elements differ, max abs diff {:g}, first at "
      "element {}",
      name, want.Describe(), count, want.numel(), max_diff, first);
}

}  // namespace

Expected<std::vector<NodeId>> RewrittenRunOrder(const Graph& rewritten, const std::string& boundary_node) {
  ScanOptions options;
  options.boundary_node = boundary_node;
  MEMOPT_ASSIGN_OR_RETURN(Boundary boundary, FindBoundary(rewritten, options));
  if (IsYieldStyle(rewritten, boundary)) {
    MEMOPT_ASSIGN_OR_RETURN(ExecutionOrder order, MemoryEfficientOrder(rewritten, boundary));
    return order.order;
  }
  std::vector<NodeId> order(rewritten.nodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<NodeId>(i);
  return order;
}

Expected<VerifyResult> VerifyRewrite(const Model& original, const ScanResult& scan, const PlanOutcome& outcome,
                                     const Model& rewritten, const DimBindings& dims, const VerifyOptions& options) {
  Model reference = original;
  for (NodeId n : outcome.spec.seeded_dropouts) SetDropoutSeed(reference.graph, reference.graph.nodes[n]);

  RunOptions reference_run;
  reference_run.seed = options.seed;
  reference_run.order = scan.order.order;
  RunOptions rewritten_run;
  rewritten_run.seed = options.seed;
  MEMOPT_ASSIGN_OR_RETURN(rewritten_run.order, RewrittenRunOrder(rewritten.graph, options.boundary_node));

  MEMOPT_ASSIGN_OR_RETURN(auto feeds, CompleteFeeds(original.graph, {}, dims, options.seed));
  auto want = Execute(reference, feeds, reference_run);
  if (!want.ok()) return want.status().WithContext("verify: running the original model");
  auto got = Execute(rewritten, feeds, rewritten_run);
  if (!got.ok()) return got.status().WithContext("verify: running the rewritten model");

  VerifyResult result;
  result.measured_peak_bytes = got->memory.peak_bytes;
  result.original_measured_peak_bytes = want->memory.peak_bytes;
  for (const auto& [name, tensor] : want->outputs) {
    auto it = got->outputs.find(name);
    if (it == got->outputs.end()) {
      return Status(ErrorCode::kVerifyFailed, "verification failed: output '" + name + "' is missing");
    }
    std::string mismatch = OutputMismatch(name, tensor, it->second);
    if (!mismatch.empty()) return Status(ErrorCode::kVerifyFailed, "verification failed: " + mismatch);
    ++result.outputs_compared;
  }
  if (got->outputs.size() != want->outputs.size()) {
    return Status(ErrorCode::kVerifyFailed, "verification failed: the rewritten model has other graph outputs");
  }
  return result;
}

}  // namespace memopt

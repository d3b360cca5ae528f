// An exact reference for the general rematerialization problem (issue "Plans from the whole
// rematerialization space"), for tests and benchmarks on small graphs: the integer program of
// Checkmate (Jain et al., MLSys 2020) over memopt's own step order and byte accounting.
//
// Stage t runs step t of the scan's execution order and may first run again (recompute) any
// earlier step that is recomputable, in order: not random, and, with a YieldOp boundary, not
// downstream of it (there the backward order is ONNX Runtime's, and a clone reading a backward
// value runs as soon as it is ready, not where placed; clones of forward steps and of backward
// constants run in the batch of branch steps before the main-path step that needs them, so a
// recomputation before a step inside such a batch, or before the main step ending one, counts at
// the batch's first step). Per stage t:
//   R[t][i]    step i < t is recomputed in stage t (step t itself always runs);
//   S[t][v]    value v is resident when stage t starts (kept from an earlier stage);
//   F[t][v][k] value v is freed right after step k of stage t (k produces or reads v).
// A step runs only when each value it reads is resident or produced earlier in the same stage; a
// value stays resident only when it was resident or produced in the stage before; graph outputs are
// resident at the end. Memory is memopt's (analysis/peak_estimate.h): weights and graph inputs
// always, then at each step the resident values, the outputs produced so far in the stage
// (every output of a step, used or not) less the ones freed after earlier steps of the stage, is
// at most the peak. With recomputation switched off the program's optimum is memopt's
// unoptimised peak to the byte (tested), which is what makes the reference comparable.
//
// O(n^2) binaries for n steps, solved with GLPK from the original schedule (a feasible start):
// small graphs solve to optimality (the tests' hand-checked cases, ORT's 10- and 19-node graphs in
// well under a second), but GLPK's branch and bound leaves a 14% gap on a 28-node ConvNet after 20 s
// and does not solve the relaxation of a 107-node transformer. The result says whether optimality
// was proved and the gap (1: no bound). Memory rows count bytes exactly up to ~1e9 bytes in all.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/scan.h"
#include "ir/graph.h"
#include "sym/sym_expr.h"
#include "util/status.h"

namespace memopt {

struct RematReferenceOptions {
  /// Without a budget: the lowest peak (ties broken by the least recompute cost). With one: the
  /// least recompute cost (cost model seconds) with the peak at most `budget` bytes.
  std::optional<int64_t> budget;
  bool allow_recompute = true;  ///< false: the original schedule, no step run twice
  double time_limit_seconds = 60;
  /// Per stage, the earlier steps it recomputes (RematReferenceResult::recomputed): with it, the
  /// recomputations are fixed and only what stays resident is chosen; the result is the peak (or,
  /// with a budget, whether it is met) of that schedule. Not given: the solver chooses.
  std::optional<std::vector<std::vector<int32_t>>> fixed;
  /// A schedule the search starts from (same form as `fixed`); ignored when it is not feasible.
  std::optional<std::vector<std::vector<int32_t>>> start;
};

struct RematReferenceResult {
  bool feasible = false;  ///< a schedule was found (with a budget: one that meets it)
  bool optimal = false;   ///< the solver proved it optimal
  double gap = 0;         ///< relative MIP gap when not proved optimal
  int64_t peak_bytes = 0;
  double added_seconds = 0;  ///< cost model seconds of the recomputed steps
  int recomputations = 0;    ///< steps run again, over all stages
  std::vector<int64_t> stage_peaks;  ///< per stage, its largest memory check in bytes
  std::vector<std::vector<ValueId>> resident;  ///< per stage, the values kept into it (ascending ids)
  /// Per stage (step), the earlier steps it recomputes, in order.
  std::vector<std::vector<int32_t>> recomputed;
};

/// Solves the program for the training graph of `scan` at `dims` (unbound dims count 1024, as in
/// the peak estimate). Steps that never run twice: YieldOp, random ops, and steps with no outputs.
Expected<RematReferenceResult> SolveRematReference(const Graph& graph, const ScanResult& scan,
                                                   const DimBindings& dims, const RematReferenceOptions& options);

/// The program as a free MPS file for other solvers (scripts/remat_reference.py gives it to
/// HiGHS), columns named "peak", "R_<stage>_<step>", "S_<stage>_<value id>" and "F_<n>", and, when
/// options.start is given and feasible, that schedule's column values ("<name> <value>" lines) at
/// `start_path`. The objective is `objective_scale` times the peak in bytes (plus the tie-breaking
/// recompute cost below one byte) without a budget, times the recompute cost in seconds with one.
struct RematReferenceProgramInfo {
  double objective_scale = 1;  ///< objective units per peak byte (no budget) or per second (budget)
  int stages = 0;
  int columns = 0;
  int rows = 0;
  bool start_written = false;
};
Expected<RematReferenceProgramInfo> WriteRematReferenceProgram(const Graph& graph, const ScanResult& scan,
                                                               const DimBindings& dims,
                                                               const RematReferenceOptions& options,
                                                               const std::string& mps_path,
                                                               const std::string& start_path);

/// A rewritten graph's schedule in the reference's terms: per stage (step of `scan`'s order), the
/// original steps whose clones run before it (clones after the last step belong to no stage and
/// are an error, as are clones of steps that are not earlier). `clone_original[k]` is the original
/// node of the rewritten graph's k-th clone, `clone_id[k]` its node id there.
Expected<std::vector<std::vector<int32_t>>> RematStagesOfRewrite(const Graph& graph, const ScanResult& scan,
                                                                 const ExecutionOrder& rewritten_order,
                                                                 const std::vector<NodeId>& new_id,
                                                                 const std::vector<NodeId>& clone_id,
                                                                 const std::vector<NodeId>& clone_original);

}  // namespace memopt

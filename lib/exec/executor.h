// The CPU reference executor: runs a graph in a given execution order, with memory accounting that
// follows exactly the rules of the static peak estimate (analysis/peak_estimate.h, docs/scan.md),
// so measured and estimated peaks can be compared byte for byte.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "analysis/exec_order.h"
#include "exec/arena_allocator.h"
#include "exec/kernel.h"
#include "exec/op_profile.h"
#include "exec/output_gradients.h"
#include "exec/tensor.h"
#include "io/model_loader.h"
#include "sym/sym_expr.h"

namespace memopt {

struct RunOptions {
  /// Execution order (node ids). Empty: the order `scan` uses (boundary detection + MEMORY_EFFICIENT).
  std::vector<NodeId> order;
  uint64_t seed = 0;
  const KernelRegistry* registry = nullptr;  ///< nullptr = KernelRegistry::Cpu()
  /// What the YieldOp hands the backward as gradients of the module outputs.
  OutputGradients output_grads;
  /// When set, each node's kernel time (wall clock) is added to it, and the run counted.
  OpProfile* profile = nullptr;
  /// When set and planned for this run's order, the node outputs are allocated from one arena laid
  /// out ahead of time (PlanRunArena; exec/arena_allocator.h); a tensor it has no slot for, or the
  /// whole run when it is unset or planned for another order, from the buffer pool. Results and
  /// the measured peak are the same either way. Unset, a run plans its own (PlanRunArena) unless
  /// MEMOPT_ARENA=0 (ArenaEnabled); where it cannot be planned (a dim unbound, a size unknown),
  /// the pool serves the run.
  std::shared_ptr<const ArenaPlan> arena;
};

struct MemoryStats {
  int64_t peak_bytes = 0;              ///< high-water mark of live tensor bytes (incl. weights/inputs)
  int32_t peak_position = -1;          ///< index in the order
  NodeId peak_node = kNone;
  std::vector<std::string> live_at_peak;  ///< value names live at the peak, sorted
  int64_t weights_and_inputs_bytes = 0;
};

struct RunResult {
  std::map<std::string, Tensor> outputs;  ///< graph outputs by name
  MemoryStats memory;
  ArenaUse arena;  ///< what the arena held; arena_bytes 0 when the run used none
  double elapsed_ms = 0;
};

/// The execution order of a run: `order` checked (known node ids, none twice), or when empty the
/// order `scan` uses (boundary detection + MEMORY_EFFICIENT). Shared with the CUDA executor.
Expected<ExecutionOrder> ResolveRunOrder(const Graph& graph, const std::vector<NodeId>& order);

/// Reports every op without a kernel, by name and node, before anything runs.
Status CheckSupported(const Graph& graph, const KernelRegistry& registry);

/// Reads an initializer's data (inline raw/typed data or external data file) into a Tensor.
Expected<Tensor> ReadInitializer(const Model& model, ValueId value);

/// False when MEMOPT_ARENA=0 is in the environment (runs use the buffer pool alone, for
/// comparison); true otherwise: CPU runs allocate from a planned arena.
bool ArenaEnabled();

/// The arena of a run of `model` with `feeds` in `order` (empty: the default order, as for
/// RunOptions::order), at the dims the fed inputs bind (DimsFromFeeds); an error naming why there
/// is none (a dim the inputs do not bind, a value of unknown size).
Expected<std::shared_ptr<const ArenaPlan>> PlanRunArena(const Model& model, const std::map<std::string, Tensor>& feeds,
                                                        const std::vector<NodeId>& order = {});

/// Runs the model. `feeds` binds graph inputs by name; initializers come from the model file
/// unless fed. Errors name the node or input (wrong dtype, rank, shape contradicting a bound dim).
Expected<RunResult> Execute(const Model& model, const std::map<std::string, Tensor>& feeds,
                            const RunOptions& options = {});

}  // namespace memopt

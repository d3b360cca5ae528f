// The recompute rewrite as index data (../shared/reference/ort_memory_optimizer.md §6.1-§6.3):
// which nodes are cloned, what each clone reads, which backward inputs are rewired, and the node
// order of the rewritten graph. Both the written model (rewrite/recompute_rewrite.h) and the
// planner's fast peak simulation (plan/plan_evaluator.h) are built from the same RewriteSpec, so
// a planned peak is the peak of exactly the graph `apply` writes.
//
// Semantics (ORT's, with the differences noted in docs/plan.md):
//   * plans are applied in reverse execution order of their entry nodes (ScanResult::plans order);
//   * per plan, each subgraph node n (execution order) is cloned unless "<n.output0>_recompute"
//     exists already (a clone made by an earlier plan is reused);
//   * a clone reads X_recompute for input X when that exists (a clone of this plan or of an
//     earlier one), else X itself;
//   * every output O of n gets a clone output "O_recompute" (omitted optional outputs stay
//     omitted; ORT would create one arg literally named "_recompute");
//   * then every consumer of an entry output that is backward in the pre-rewrite order, or is a
//     clone, reads the entry clone's output instead (chaining onto earlier recomputes);
//   * Dropout-family nodes without a `seed` attribute get one, on the original and the clone.
//
// memopt's extension (docs/plan.md, "Split recompute"): a plan may be split into clone groups.
// The entry's backward readers r_0 .. r_{m-1} (distinct original nodes, execution order) are cut
// into consecutive groups; the first group is ORT's clone as above, every further group gets its
// own copy of the whole subgraph ("O_recompute_2", "O_recompute_3", ... for the further copies of
// a node), run before its group's first reader and freed after its last one. A copy reads the
// values its group's copies compute, else what ORT's clone would read. A clone of another plan
// that reads a split plan's entry output reads the group whose readers start at or before the
// place the reading clone runs (its own group's first reader).
//
// Two more variants of a plan (docs/plan.md, "Kept originals and private chains"):
//   * keep(p, j), 0 <= j < m: the original entry outputs stay live for the readers that run
//     before r_j: backward readers r_0 .. r_{j-1} read the original, as do clones of other plans
//     placed before r_j; the clone groups start at r_j (splits at readers <= j are void);
//   * private(p): every clone group of p computes the entries of the plans applied after it (the
//     ones whose entries run earlier) that its clones read with a copy of its own, recursively
//     down to values no applied plan recomputes, instead of sharing ORT's clone of them; those
//     copies run right before the group and are freed after it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/scan.h"
#include "ir/graph.h"
#include "util/status.h"

namespace memopt {

/// One clone. Value ids are "extended": [0, num_original_values) are the original graph's values,
/// num_original_values + k is clone value k (RewriteSpec::clone_values[k]).
struct CloneSpec {
  NodeId original = kNone;
  /// 0: ORT's clone of the node; k > 0: its k-th further copy (a later group of a split plan).
  int32_t copy = 0;
  std::vector<ValueId> inputs;   ///< kNone for omitted optional inputs
  std::vector<ValueId> outputs;  ///< kNone for omitted optional outputs
};

/// An input of an original node that now reads a clone output.
struct Rewire {
  NodeId node = kNone;
  int32_t slot = -1;
  ValueId value = kNone;  ///< extended id of the clone output
};

struct RewriteSpec {
  size_t num_original_values = 0;
  std::vector<CloneSpec> clones;        ///< creation order
  std::vector<ValueId> clone_values;    ///< per clone value: the original value it recomputes
  std::vector<Rewire> rewires;
  std::vector<NodeId> seeded_dropouts;  ///< original nodes that get a `seed` attribute
  std::vector<size_t> applied_plans;    ///< indices into ScanResult::plans, application order
  std::vector<size_t> kept_plans;       ///< those applied with a keep (their first readers read the original)

  size_t num_values() const { return num_original_values + clone_values.size(); }
  bool IsCloneValue(ValueId v) const { return v >= static_cast<ValueId>(num_original_values); }
};

/// The name of copy `copy` of a value or node named `name`: "<name>_recompute" for ORT's clone
/// (copy 0), "<name>_recompute_<copy + 1>" for the further copies of split plans.
std::string RecomputeName(const std::string& name, int32_t copy);

/// Precomputes what the rewrite needs of one graph + scan, so that many selections can be turned
/// into specs quickly (the budget planner evaluates thousands).
class RewriteSpecBuilder {
 public:
  RewriteSpecBuilder(const Graph& graph, const ScanResult& scan);

  /// The spec for `plans` (plan indices, below: any order; duplicates ignored; of two plans of one
  /// node, type 1 and type 2, only the first is applied; a split applies its plan too).
  /// Errors: a PythonOp in a subgraph (its RNG-state rewiring is not implemented), a clone name
  /// that already exists in the graph (a graph rewritten before).
  Expected<RewriteSpec> Build(const std::vector<size_t>& plans) const;

  /// True when Build() can handle the plan (no PythonOp, no name clash); a split: its plan.
  bool Supported(size_t plan) const { return plan_error_[BasePlan(plan)].empty(); }

  /// Plan indices: [0, ScanResult::plans.size()) are the scan's plans; after them, one index per
  /// split (p, j): plan p's clone groups start anew at its entry's backward reader j (1 <= j <
  /// Readers(p).size()), for every plan with two or more readers, by plan then j; then one per
  /// keep (p, j), 0 <= j < Readers(p).size(); then one private(p) per plan with a reader. Every
  /// variant implies its plan.
  size_t num_indices() const { return private_begin_ + private_plan_.size(); }
  bool IsSplit(size_t index) const { return index >= scan_.plans.size() && index < keep_begin_; }
  bool IsKeep(size_t index) const { return index >= keep_begin_ && index < private_begin_; }
  bool IsPrivate(size_t index) const { return index >= private_begin_; }
  /// A split, keep or private index: memopt's own variant of a scan plan.
  bool IsVariant(size_t index) const { return index >= scan_.plans.size(); }
  /// The scan plan of a plan index (itself for a scan plan).
  size_t BasePlan(size_t index) const {
    if (IsPrivate(index)) return private_plan_[index - private_begin_];
    if (IsKeep(index)) return keep_plan_[index - keep_begin_];
    return IsSplit(index) ? split_plan_[index - scan_.plans.size()] : index;
  }
  /// The reader a split starts its group at, or a keep its first group (0 for other indices).
  int32_t SplitReader(size_t index) const {
    if (IsKeep(index)) return static_cast<int32_t>(index - keep_begin_ - keep_first_[BasePlan(index)]);
    return IsSplit(index) ? static_cast<int32_t>(index - scan_.plans.size() - split_begin_[BasePlan(index)]) + 1 : 0;
  }
  /// The index of split (plan, reader), or -1 when reader is not in [1, Readers(plan).size()).
  int64_t SplitIndex(size_t plan, int32_t reader) const;
  /// The index of keep (plan, reader), or -1 when reader is not in [0, Readers(plan).size()).
  int64_t KeepIndex(size_t plan, int32_t reader) const;
  /// The index of private(plan), or -1 when the plan has no backward reader.
  int64_t PrivateIndex(size_t plan) const;
  /// `plans` as Build() applies them: ascending and unique, every variant's plan added, of a
  /// plan's keeps only the last reader's, splits at or before it dropped.
  std::vector<size_t> Canonical(const std::vector<size_t>& plans) const;
  /// Per scan plan with a keep among `plans`: the latest keep's reader (the one that counts).
  std::unordered_map<size_t, int32_t> KeepReaders(const std::vector<size_t>& plans) const;
  /// The entry's backward readers of a scan plan: distinct original nodes, execution order.
  const std::vector<NodeId>& Readers(size_t plan) const { return readers_[plan]; }

  const Graph& graph() const { return graph_; }
  const ScanResult& scan() const { return scan_; }

 private:
  const Graph& graph_;
  const ScanResult& scan_;
  std::vector<char> backward_;       ///< per node: after the boundary in the pre-rewrite order
  std::vector<char> needs_seed_;     ///< per node: Dropout family without a seed attribute
  std::vector<std::string> plan_error_;
  std::vector<std::vector<NodeId>> readers_;  ///< per scan plan
  std::vector<size_t> split_begin_;           ///< per scan plan: its first split's offset
  std::vector<size_t> split_plan_;            ///< per split: its scan plan
  size_t keep_begin_ = 0;                     ///< first keep index
  std::vector<size_t> keep_first_;            ///< per scan plan: its first keep's offset
  std::vector<size_t> keep_plan_;             ///< per keep: its scan plan
  size_t private_begin_ = 0;                  ///< first private index
  std::vector<int64_t> private_of_;           ///< per scan plan: its private index, or -1
  std::vector<size_t> private_plan_;          ///< per private index: its scan plan
};

/// True for ONNX Dropout (since-version 12 or 13) and com.microsoft BitmaskDropout, BiasDropout,
/// BitmaskBiasDropout, BiasSoftmaxDropout without a `seed` attribute.
bool NeedsDropoutSeed(const Node& node);

/// True when a clone of `node` computes what the node does: its CPU kernel draws no random numbers,
/// or the node has a `seed` attribute, or the rewrite gives it one (NeedsDropoutSeed). Unseeded
/// random ops (RandomNormalLike, Bernoulli, ...) would draw other numbers.
bool RecomputesIdentically(const Node& node);

/// The seed memopt gives such a node: the uint32 hash h = h * 101 + c over the characters of its
/// first output's name (ORT adds a process-wide random seed; memopt stays deterministic).
int64_t DropoutSeedFor(const std::string& output_name);

/// Where the clones of a spec run among the original nodes: each clone group right before the
/// first original node (in a base order) that reads one of its outputs through a rewire, a clone's
/// own clone inputs first (depth-first, in input order); clones nothing rewired reads go after the
/// last original node, in creation order.
struct ClonePlacement {
  std::vector<int32_t> before;    ///< per clone: the base position it runs before; num_positions = after all
  std::vector<int32_t> sequence;  ///< clone indices in the order they run (ascending `before`)
};

/// `base_position`: per original node id, its position in the base order (num_positions nodes), or
/// -1 for a node the base order leaves out (its rewires place nothing).
/// Costs O(clones + rewires log rewires).
ClonePlacement PlaceClones(const RewriteSpec& spec, const std::vector<int32_t>& base_position, int32_t num_positions);

/// Node order of the rewritten graph: the original nodes in `base` order, the clones placed among
/// them by PlaceClones. Entries are original node ids (>= 0) or clones encoded as -(k + 1).
std::vector<int32_t> RewrittenNodeOrder(const Graph& graph, const RewriteSpec& spec, const std::vector<NodeId>& base);

}  // namespace memopt

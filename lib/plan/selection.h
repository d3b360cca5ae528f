// Which recompute plans a config selects (../shared/reference/ort_memory_optimizer.md §5.3, §5.4),
// and the configs memopt writes: level plans (every type-1, or type-1 and type-2, plan, as
// ORTModule levels 1 and 2 do) and per-occurrence selections (budget plans).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "analysis/scan.h"
#include "plan/config.h"
#include "rewrite/rewrite_spec.h"
#include "util/status.h"

namespace memopt {

struct SelectionOptions {
  CountSemantics count_semantics = CountSemantics::kDocumented;
  /// Unknown cluster ids (and ids without plans of the requested type) become warnings instead
  /// of errors (ORT ignores them silently).
  bool lenient = false;
  /// Appended to the message of an unknown cluster id (e.g. which op table the caller used).
  std::string unknown_id_hint;
  /// The plan indices of splits (RewriteSpecBuilder::SplitIndex); a config with splits needs it.
  const RewriteSpecBuilder* builder = nullptr;
};

/// What one config entry matched.
struct EntryMatch {
  std::string text;      ///< the entry as written
  int occurrences = 0;   ///< plans of that cluster id and type in the graph
  int applied = 0;       ///< how many of them the count / selector selects
};

struct Selection {
  /// Selected plans: indices into ScanResult::plans, ascending (= reverse execution order of the
  /// entry nodes, the order the rewrite applies them in), then the splits' plan indices
  /// (RewriteSpecBuilder), ascending.
  std::vector<size_t> plans;
  std::vector<EntryMatch> matches;     ///< one per config entry of type 1 or 2
  std::vector<std::string> warnings;   ///< the config's warnings plus lenient-mode ones
};

/// Plans of `cluster_id` with `type`, in execution order of their entry nodes (the order the
/// count field and selectors refer to).
std::vector<size_t> Occurrences(const ScanResult& scan, const std::string& cluster_id, int type);

/// Matches the config against the plans of `scan` (all plans, both types, whatever level the
/// scan ran at). Errors (kInvalidInput) name the entry: an unknown cluster id (with a did-you-mean
/// and the ids the graph has), an id without plans of the requested type, a selector without an
/// entry or with an occurrence past the last one.
Expected<Selection> SelectPlans(const ScanResult& scan, const MemoryOptConfig& config,
                                const SelectionOptions& options = {});

/// ORTModule's level config: one "<cluster>:<type>:-1" entry per plan group of `scan` (the groups
/// shown at the scan's level: type 1 at levels 0 and 1, types 1 and 2 at level 2), in the group
/// order. A cluster id with both types keeps type 2, at its first group's place: ORTModule's
/// level-2 config lists the id with type 1 and then type 2, and ORT keeps an id's later entry; a
/// warning says so.
MemoryOptConfig LevelConfig(const ScanResult& scan, std::vector<std::string>* warnings = nullptr);

/// The config that selects exactly `plans` (plan indices of `builder`: scan plans and splits):
/// "<cluster>:<type>:-1" for every cluster with a selected plan, plus a selector when only some of
/// its occurrences are selected, plus a split per occurrence recomputed in several groups. Entries
/// follow the first selected occurrence in execution order. Two types of one cluster id cannot
/// both be selected (the caller avoids it); the second one is dropped.
MemoryOptConfig ConfigForPlans(const RewriteSpecBuilder& builder, const std::vector<size_t>& plans);

}  // namespace memopt

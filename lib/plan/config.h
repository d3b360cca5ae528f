// The memory-optimizer config: ONNX Runtime's format (a JSON array of "ClusterId:type:count"
// strings, ../shared/reference/ort_memory_optimizer.md §5.2) plus memopt's occurrence selectors.
// The grammar and its meaning are documented in docs/config_format.md.
//
//   ["Gelu+:1:-1", "LayerNormalization+:1:-1", "Add+:1:-1", "Add+@0.2-4:0:0"]
//
// * Each array element may hold several plans separated by ','; each plan is split on ':' with
//   empty segments dropped (ORT's rule, so "Gelu+::1:-1" is accepted) and must have exactly
//   three parts.
// * type: 0 none (matches nothing), 1 recompute, 2 compromised recompute.
// * count: -1 = every occurrence, N >= 0 = the first N occurrences in execution order (ORT's
//   documented meaning; ORT's actual behaviour is available as CountSemantics::kOrt).
// * A cluster id may appear once; a later entry for the same id replaces the earlier one (ORT's
//   rule) and memopt records a warning.
// * Selector "<ClusterId>@<occurrences>:0:0": memopt applies only the listed occurrences (0-based,
//   execution order of the entry nodes) of the cluster's regular entry, whatever its count.
//   <occurrences> is a '.'-separated list of indices and inclusive ranges ("0.2-4"). ORT reads a
//   selector as a type-0 plan of an unknown cluster id and ignores it, so it applies every
//   occurrence of that cluster (the regular entry is written with count -1).
// * Split "<ClusterId>@<occurrence>/<r1>.<r2>:0:0": memopt recomputes that (applied) occurrence in
//   several clone groups, a new one starting at each listed backward reader of its entry (numbered
//   from 0 in execution order). ORT ignores it as it ignores a selector.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace memopt {

/// How the count field of a config entry is read.
enum class CountSemantics {
  kDocumented,  ///< ORT's documented meaning: N = the first N occurrences, -1 = all
  kOrt,         ///< ORT HEAD's behaviour: -1 and N >= 1 = all, 0 = all but the last
};

/// "documented" | "ort"; false when unknown.
bool ParseCountSemantics(std::string_view text, CountSemantics* out);

/// One "ClusterId:type:count" plan.
struct ConfigEntry {
  std::string cluster_id;  ///< "Gelu+"
  int type = 1;            ///< 0 none, 1 recompute, 2 compromised recompute
  int64_t count = -1;      ///< -1 every occurrence, else >= 0
  std::string text;        ///< the plan as written (trimmed), for messages
  int element = 0;         ///< index of the array element it came from
};

/// A memopt selector "ClusterId@i.j-k:0:0".
struct ConfigSelector {
  std::string cluster_id;
  std::vector<int> occurrences;  ///< sorted, unique, 0-based
  std::string text;
  int element = 0;
};

/// A memopt split "ClusterId@occurrence/r1.r2:0:0": that occurrence is recomputed in several clone
/// groups, a new one starting at each listed backward reader; "k<r>" keeps the original for what
/// runs before reader r, "p" gives each group private copies of the clones it reads
/// (docs/config_format.md).
struct ConfigSplit {
  std::string cluster_id;
  int occurrence = 0;        ///< 0-based, execution order
  std::vector<int> readers;  ///< sorted, unique, >= 1: readers numbered from 0 in execution order
  std::string text;
  int element = 0;
  int keep = -1;             ///< "k<r>": the first clone group starts at reader r; -1: none
  bool private_chains = false;  ///< "p"
};

struct MemoryOptConfig {
  std::vector<ConfigEntry> entries;      ///< one per cluster id (last one wins), in first-seen order
  std::vector<ConfigSelector> selectors; ///< one per cluster id (last one wins)
  std::vector<ConfigSplit> splits;       ///< one per (cluster id, occurrence) (last one wins)
  std::vector<std::string> warnings;     ///< duplicates and other non-fatal remarks

  const ConfigEntry* FindEntry(std::string_view cluster_id) const;
  const ConfigSelector* FindSelector(std::string_view cluster_id) const;
};

/// Parses the JSON file format. `source` names the file in messages. Errors (kInvalidInput) name
/// the array element and the plan text, e.g.
///   mem_opt.json: element 1 "Gelu+:x:-1": optimization type 'x' is not an integer (use 0, 1 or 2)
Expected<MemoryOptConfig> ParseMemoryOptConfig(std::string_view json_text, std::string_view source);

/// Parses the legacy inline form "Gelu+:1:-1,Dropout+:1:-1" (ORT <= 1.18, the old
/// ORTMODULE_MEMORY_OPT_CONFIG value): the same rules as one array element.
Expected<MemoryOptConfig> ParseInlineConfig(std::string_view text, std::string_view source);

/// "Gelu+:1:-1"
std::string EntryString(const std::string& cluster_id, int type, int64_t count);
/// "Gelu+@0.2-4:0:0" for occurrences {0, 2, 3, 4}.
std::string SelectorString(const std::string& cluster_id, const std::vector<int>& occurrences);

/// "Conv+@0/2.5:0:0"; with keep >= 0 "Conv+@0/2.5.k1:0:0", with private chains "...p:0:0".
std::string SplitString(const std::string& cluster_id, int occurrence, const std::vector<int>& readers,
                        int keep = -1, bool private_chains = false);

/// The config's strings: entries in order, each followed by its selector and its splits (by
/// occurrence).
std::vector<std::string> ConfigLines(const MemoryOptConfig& config);

/// The JSON file: one string per line, ConfigLines.
std::string WriteMemoryOptConfig(const MemoryOptConfig& config);

}  // namespace memopt

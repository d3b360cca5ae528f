#include "plan/selection.h"
#include "util/closest_match.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

namespace memopt {
namespace {

std::string KnownClusters(const ScanResult& scan) {
  std::set<std::string> ids;
  for (const RecomputePlan& p : scan.plans) ids.insert(p.cluster_id + ":" + std::to_string(p.type()));
  if (ids.empty()) return "the graph has no recompute plans";
  std::string out = "plans in this graph:";
  size_t shown = 0;
  for (const std::string& id : ids) {
    if (shown == 8) {
      out += fmt::format(" ... ({} more)", ids.size() - shown);
      break;
    }
    out += (shown ? ", " : " ") + id;
    ++shown;
  }
  return out;
}

/// A selector or split naming an occurrence past the last one of its cluster.
Status NoSuchOccurrence(int element, const std::string& text, int occurrence, size_t count, const std::string& cluster_id,
                        int type) {
  return InvalidInput(fmt::format(
      "element {} \"{}\": occurrence {} does not exist: the graph has {} occurrence{} of \"{}:{}\" (0..{})", element,
      text, occurrence, count, count == 1 ? "" : "s", cluster_id, type, count - 1));
}

}  // namespace

std::vector<size_t> Occurrences(const ScanResult& scan, const std::string& cluster_id, int type) {
  std::vector<size_t> out;
  // ScanResult::plans is in reverse execution order of the entries.
  for (size_t i = scan.plans.size(); i-- > 0;) {
    const RecomputePlan& p = scan.plans[i];
    if (p.cluster_id == cluster_id && p.type() == type) out.push_back(i);
  }
  return out;
}

Expected<Selection> SelectPlans(const ScanResult& scan, const MemoryOptConfig& config,
                                const SelectionOptions& options) {
  Selection sel;
  sel.warnings = config.warnings;
  std::map<std::string, std::set<int>> types_of;
  for (const RecomputePlan& p : scan.plans) types_of[p.cluster_id].insert(p.type());
  std::vector<std::string> ids;
  for (const auto& [id, types] : types_of) ids.push_back(id);

  std::set<size_t> chosen;
  for (const ConfigEntry& entry : config.entries) {
    if (entry.type == 0) continue;  // type 0 matches nothing (ORT)
    std::vector<size_t> occ = Occurrences(scan, entry.cluster_id, entry.type);
    if (occ.empty()) {
      std::string message;
      auto it = types_of.find(entry.cluster_id);
      if (it != types_of.end()) {
        message = fmt::format("cluster '{}' has no type-{} plan in this graph (it has type {}: use \"{}:{}:-1\")",
                              entry.cluster_id, entry.type, *it->second.begin(), entry.cluster_id,
                              *it->second.begin());
      } else {
        message = fmt::format("unknown cluster id '{}'", entry.cluster_id);
        std::string guess = ClosestMatch(entry.cluster_id, ids);
        if (!guess.empty()) message += fmt::format("; did you mean '{}'?", guess);
        message += fmt::format(" ({})", KnownClusters(scan));
        if (!options.unknown_id_hint.empty()) message += "; " + options.unknown_id_hint;
      }
      message = fmt::format("element {} \"{}\": {}", entry.element, entry.text, message);
      if (!options.lenient) return InvalidInput(message + "; --lenient ignores such entries as ONNX Runtime does");
      sel.warnings.push_back(message + "; ignored (--lenient)");
      continue;
    }
    EntryMatch match{entry.text, static_cast<int>(occ.size()), 0};
    if (const ConfigSelector* selector = config.FindSelector(entry.cluster_id)) {
      for (int i : selector->occurrences) {
        if (i >= static_cast<int>(occ.size())) {
          return NoSuchOccurrence(selector->element, selector->text, i, occ.size(), entry.cluster_id, entry.type);
        }
        chosen.insert(occ[i]);
        ++match.applied;
      }
    } else {
      size_t n = occ.size();
      if (options.count_semantics == CountSemantics::kDocumented) {
        if (entry.count >= 0) n = std::min<size_t>(n, static_cast<size_t>(entry.count));
      } else if (entry.count == 0) {
        n = occ.size() - 1;  // ORT HEAD: skips the first one met in reverse order = the last one
      }
      for (size_t i = 0; i < n; ++i) chosen.insert(occ[i]);
      match.applied = static_cast<int>(n);
    }
    sel.matches.push_back(std::move(match));
  }
  for (const ConfigSplit& split : config.splits) {
    const ConfigEntry* entry = config.FindEntry(split.cluster_id);
    if (entry == nullptr || entry->type == 0) {
      return InvalidInput(fmt::format("element {} \"{}\": a split needs an entry \"{}:<type>:<count>\" (type 1 or 2) "
                                      "for the same cluster id",
                                      split.element, split.text, split.cluster_id));
    }
    std::vector<size_t> occ = Occurrences(scan, split.cluster_id, entry->type);
    if (occ.empty()) continue;  // an unknown id: reported (or ignored under --lenient) above
    if (split.occurrence >= static_cast<int>(occ.size())) {
      return NoSuchOccurrence(split.element, split.text, split.occurrence, occ.size(), split.cluster_id, entry->type);
    }
    const size_t plan = occ[static_cast<size_t>(split.occurrence)];
    if (!chosen.count(plan)) {
      return InvalidInput(fmt::format("element {} \"{}\": occurrence {} of \"{}:{}\" is not applied by the config; a "
                                      "split needs its occurrence selected",
                                      split.element, split.text, split.occurrence, split.cluster_id, entry->type));
    }
    if (options.builder == nullptr) {
      return InvalidInput(fmt::format("element {} \"{}\": splits are not supported here", split.element, split.text));
    }
    const size_t readers = options.builder->Readers(plan).size();
    for (int r : split.readers) {
      const int64_t index = options.builder->SplitIndex(plan, r);
      if (index < 0) {
        return InvalidInput(fmt::format("element {} \"{}\": reader {} does not exist: occurrence {} of \"{}\" has {} "
                                        "backward reader{} (0..{}), and a split starts a group at 1..{}",
                                        split.element, split.text, r, split.occurrence, split.cluster_id, readers,
                                        readers == 1 ? "" : "s", readers == 0 ? 0 : readers - 1,
                                        readers == 0 ? 0 : readers - 1));
      }
      chosen.insert(static_cast<size_t>(index));
    }
    if (split.keep >= 0) {
      const int64_t index = options.builder->KeepIndex(plan, split.keep);
      if (index < 0) {
        return InvalidInput(fmt::format("element {} \"{}\": keep reader {} does not exist: occurrence {} of \"{}\" has "
                                        "{} backward reader{} (0..{})",
                                        split.element, split.text, split.keep, split.occurrence, split.cluster_id,
                                        readers, readers == 1 ? "" : "s", readers == 0 ? 0 : readers - 1));
      }
      chosen.insert(static_cast<size_t>(index));
    }
    if (split.private_chains) {
      const int64_t index = options.builder->PrivateIndex(plan);
      if (index < 0) {
        return InvalidInput(fmt::format("element {} \"{}\": occurrence {} of \"{}\" has no backward reader, so it has "
                                        "no clone group to give private copies",
                                        split.element, split.text, split.occurrence, split.cluster_id));
      }
      chosen.insert(static_cast<size_t>(index));
    }
  }
  for (const ConfigSelector& selector : config.selectors) {
    const ConfigEntry* entry = config.FindEntry(selector.cluster_id);
    if (entry == nullptr) {
      return InvalidInput(fmt::format("element {} \"{}\": a selector needs an entry \"{}:<type>:<count>\" for the "
                                      "same cluster id",
                                      selector.element, selector.text, selector.cluster_id));
    }
  }
  sel.plans.assign(chosen.begin(), chosen.end());
  if (options.builder != nullptr) sel.plans = options.builder->Canonical(sel.plans);
  return sel;
}

MemoryOptConfig LevelConfig(const ScanResult& scan, std::vector<std::string>* warnings) {
  MemoryOptConfig config;
  for (const PlanGroup& g : scan.groups) {
    if (const ConfigEntry* seen = config.FindEntry(g.cluster_id)) {
      // ORTModule's level-2 config lists such an id with type 1, then type 2, and ORT keeps the
      // later entry of an id: type 2 is what ORT applies.
      const int kept = std::max(seen->type, g.type);
      if (warnings) {
        warnings->push_back(fmt::format("cluster '{}' has plans of types 1 and 2; a config holds one type per "
                                        "cluster id and ONNX Runtime applies the type-2 entry ORTModule lists "
                                        "last, so \"{}\" is left out",
                                        g.cluster_id, EntryString(g.cluster_id, 3 - kept, -1)));
      }
      ConfigEntry& entry = config.entries[static_cast<size_t>(seen - config.entries.data())];
      entry.type = kept;
      entry.text = EntryString(g.cluster_id, kept, -1);
      continue;
    }
    config.entries.push_back({g.cluster_id, g.type, -1, EntryString(g.cluster_id, g.type, -1), 0});
  }
  return config;
}

MemoryOptConfig ConfigForPlans(const RewriteSpecBuilder& builder, const std::vector<size_t>& plans) {
  const ScanResult& scan = builder.scan();
  // (cluster, type) of each selected plan, ordered by the first selected occurrence.
  std::set<size_t> selected;
  struct Variants {
    std::vector<int> readers;  // the readers its splits start at
    int keep = -1;
    bool private_chains = false;
  };
  std::map<size_t, Variants> variants_of;  // scan plan -> its variants
  for (size_t p : plans) {
    const size_t base = builder.BasePlan(p);
    selected.insert(base);
    if (builder.IsSplit(p)) variants_of[base].readers.push_back(builder.SplitReader(p));
    if (builder.IsKeep(p)) variants_of[base].keep = std::max(variants_of[base].keep, builder.SplitReader(p));
    if (builder.IsPrivate(p)) variants_of[base].private_chains = true;
  }
  MemoryOptConfig config;
  for (size_t i = scan.plans.size(); i-- > 0;) {  // execution order
    if (!selected.count(i)) continue;
    const RecomputePlan& p = scan.plans[i];
    if (config.FindEntry(p.cluster_id) != nullptr) continue;
    std::vector<size_t> occ = Occurrences(scan, p.cluster_id, p.type());
    std::vector<int> picked;
    for (size_t k = 0; k < occ.size(); ++k) {
      if (selected.count(occ[k])) picked.push_back(static_cast<int>(k));
    }
    config.entries.push_back({p.cluster_id, p.type(), -1, EntryString(p.cluster_id, p.type(), -1), 0});
    if (picked.size() < occ.size()) {
      config.selectors.push_back({p.cluster_id, picked, SelectorString(p.cluster_id, picked), 0});
    }
    for (size_t k = 0; k < occ.size(); ++k) {
      auto it = variants_of.find(occ[k]);
      if (it == variants_of.end()) continue;
      const Variants& v = it->second;
      std::vector<int> readers;  // splits at or before the keep's reader are void
      for (int r : v.readers) {
        if (r > v.keep) readers.push_back(r);
      }
      std::sort(readers.begin(), readers.end());
      readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
      const int occurrence = static_cast<int>(k);
      ConfigSplit split{p.cluster_id, occurrence, readers,
                        SplitString(p.cluster_id, occurrence, readers, v.keep, v.private_chains), 0};
      split.keep = v.keep;
      split.private_chains = v.private_chains;
      config.splits.push_back(std::move(split));
    }
  }
  return config;
}

}  // namespace memopt

#include "plan/config.h"

#include <algorithm>
#include <charconv>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace memopt {
namespace {

constexpr const char* kFormatHint =
    "expected ClusterId:OptimizationType:RequestApplyCount, e.g. \"Gelu+:1:-1\" (see docs/config_format.md)";

std::vector<std::string_view> Split(std::string_view text, char sep, bool drop_empty) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(sep, start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view part = text.substr(start, end - start);
    if (!part.empty() || !drop_empty) parts.push_back(part);
    start = end + 1;
  }
  return parts;
}

template <typename Int>
bool ParseWholeInt(std::string_view text, Int* out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

class Parser {
 public:
  explicit Parser(std::string_view source) : source_(source) {}

  Status ParseElement(std::string_view element, int index) {
    for (std::string_view plan : Split(element, ',', /*drop_empty=*/true)) {
      MEMOPT_RETURN_IF_ERROR(ParsePlan(plan, index));
    }
    return Status::Ok();
  }

  MemoryOptConfig Take() { return std::move(config_); }

 private:
  Status Error(int element, std::string_view plan, const std::string& what) const {
    return InvalidInput(fmt::format("{}: element {} \"{}\": {}", source_, element, plan, what));
  }

  Status ParsePlan(std::string_view plan, int element) {
    std::vector<std::string_view> parts = Split(plan, ':', /*drop_empty=*/true);
    if (parts.size() != 3) {
      return Error(element, plan, fmt::format("{} parts separated by ':', {}", parts.size(), kFormatHint));
    }
    int type = 0;
    if (!ParseWholeInt(parts[1], &type)) {
      return Error(element, plan,
                   fmt::format("optimization type '{}' is not an integer (use 0 none, 1 recompute, 2 compromised "
                               "recompute)",
                               parts[1]));
    }
    if (type < 0 || type > 2) {
      return Error(element, plan,
                   fmt::format("invalid optimization type {} (use 0 none, 1 recompute, 2 compromised recompute)", type));
    }
    int64_t count = 0;
    if (!ParseWholeInt(parts[2], &count)) {
      return Error(element, plan,
                   fmt::format("apply count '{}' is not an integer (use -1 for every occurrence or N >= 0)", parts[2]));
    }
    if (count < -1) {
      return Error(element, plan,
                   fmt::format("invalid apply count {} (use -1 for every occurrence or N >= 0)", count));
    }
    std::string_view id = parts[0];
    size_t at = id.find('@');
    if (at != std::string_view::npos) return ParseSelector(plan, element, id.substr(0, at), id.substr(at + 1), type, count);

    ConfigEntry entry{std::string(id), type, count, std::string(plan), element};
    for (ConfigEntry& old : config_.entries) {
      if (old.cluster_id != entry.cluster_id) continue;
      config_.warnings.push_back(fmt::format(
          "{}: element {} \"{}\" replaces element {} \"{}\" (the last entry for a cluster id wins, as in ONNX "
          "Runtime)",
          source_, element, plan, old.element, old.text));
      old = std::move(entry);
      return Status::Ok();
    }
    config_.entries.push_back(std::move(entry));
    return Status::Ok();
  }

  Status ParseSelector(std::string_view plan, int element, std::string_view id, std::string_view list, int type,
                       int64_t count) {
    if (id.empty()) return Error(element, plan, "selector without a cluster id before '@'");
    if (type != 0 || count != 0) {
      return Error(element, plan,
                   fmt::format("a selector must be written \"{}@...:0:0\" (type 0 and count 0, so that ONNX Runtime "
                               "ignores it)",
                               id));
    }
    if (list.find('/') != std::string_view::npos) return ParseSplit(plan, element, id, list);
    std::set<int> occurrences;
    for (std::string_view item : Split(list, '.', /*drop_empty=*/false)) {
      size_t dash = item.find('-');
      int first = 0, last = 0;
      bool ok = dash == std::string_view::npos
                    ? ParseWholeInt(item, &first) && (last = first, true)
                    : ParseWholeInt(item.substr(0, dash), &first) && ParseWholeInt(item.substr(dash + 1), &last);
      if (!ok || first < 0 || last < first) {
        return Error(element, plan,
                     fmt::format("bad occurrence '{}' in the selector: use 0-based indices and ranges separated by "
                                 "'.', e.g. \"{}@0.2-4:0:0\"",
                                 item, id));
      }
      if (last - first > 1000000) return Error(element, plan, fmt::format("occurrence range '{}' is too long", item));
      for (int i = first; i <= last; ++i) occurrences.insert(i);
    }
    ConfigSelector selector{std::string(id), {occurrences.begin(), occurrences.end()}, std::string(plan), element};
    for (ConfigSelector& old : config_.selectors) {
      if (old.cluster_id != selector.cluster_id) continue;
      config_.warnings.push_back(fmt::format("{}: element {} \"{}\" replaces the selector of element {} \"{}\"",
                                             source_, element, plan, old.element, old.text));
      old = std::move(selector);
      return Status::Ok();
    }
    config_.selectors.push_back(std::move(selector));
    return Status::Ok();
  }

  /// "<id>@<occurrence>/<reader>.<reader>...": type and count were checked by the caller.
  Status ParseSplit(std::string_view plan, int element, std::string_view id, std::string_view list) {
    const size_t slash = list.find('/');
    ConfigSplit split{std::string(id), 0, {}, std::string(plan), element};
    if (!ParseWholeInt(list.substr(0, slash), &split.occurrence) || split.occurrence < 0) {
      return Error(element, plan,
                   fmt::format("bad occurrence '{}' in the split: write one 0-based occurrence before '/', e.g. "
                               "\"{}@0/2:0:0\"",
                               list.substr(0, slash), id));
    }
    std::set<int> readers;
    for (std::string_view item : Split(list.substr(slash + 1), '.', /*drop_empty=*/false)) {
      if (item == "p") {
        split.private_chains = true;
        continue;
      }
      if (!item.empty() && item[0] == 'k') {
        if (!ParseWholeInt(item.substr(1), &split.keep) || split.keep < 0) {
          return Error(element, plan,
                       fmt::format("bad keep '{}' in the split: write k<reader>, the backward reader (from 0) the "
                                   "first clone group starts at, e.g. \"{}@{}/k1:0:0\"",
                                   item, id, split.occurrence));
        }
        continue;
      }
      int reader = 0;
      if (!ParseWholeInt(item, &reader) || reader < 1) {
        return Error(element, plan,
                     fmt::format("bad reader '{}' in the split: list the backward readers (numbered from 0 in "
                                 "execution order) that start a new clone group, each >= 1, separated by '.' (and "
                                 "optionally k<reader> and p), e.g. \"{}@{}/2.5:0:0\"",
                                 item, id, split.occurrence));
      }
      readers.insert(reader);
    }
    split.readers.assign(readers.begin(), readers.end());
    for (ConfigSplit& old : config_.splits) {
      if (old.cluster_id != split.cluster_id || old.occurrence != split.occurrence) continue;
      config_.warnings.push_back(fmt::format("{}: element {} \"{}\" replaces the split of element {} \"{}\"", source_,
                                             element, plan, old.element, old.text));
      old = std::move(split);
      return Status::Ok();
    }
    config_.splits.push_back(std::move(split));
    return Status::Ok();
  }

  std::string source_;
  MemoryOptConfig config_;
};

}  // namespace

bool ParseCountSemantics(std::string_view text, CountSemantics* out) {
  if (text == "documented") {
    *out = CountSemantics::kDocumented;
    return true;
  }
  if (text == "ort") {
    *out = CountSemantics::kOrt;
    return true;
  }
  return false;
}

const ConfigEntry* MemoryOptConfig::FindEntry(std::string_view cluster_id) const {
  for (const ConfigEntry& e : entries) {
    if (e.cluster_id == cluster_id) return &e;
  }
  return nullptr;
}

const ConfigSelector* MemoryOptConfig::FindSelector(std::string_view cluster_id) const {
  for (const ConfigSelector& s : selectors) {
    if (s.cluster_id == cluster_id) return &s;
  }
  return nullptr;
}

Expected<MemoryOptConfig> ParseMemoryOptConfig(std::string_view json_text, std::string_view source) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text.begin(), json_text.end());
  } catch (const nlohmann::json::exception& e) {
    return InvalidInput(fmt::format("{}: not valid JSON ({}); expected an array of strings such as [\"Gelu+:1:-1\"]",
                                    source, e.what()));
  }
  if (!doc.is_array()) {
    return InvalidInput(fmt::format("{}: the config must be a JSON array of strings such as [\"Gelu+:1:-1\"], got {}",
                                    source, doc.type_name()));
  }
  Parser parser(source);
  for (size_t i = 0; i < doc.size(); ++i) {
    const nlohmann::json& element = doc[i];
    if (!element.is_string()) {
      return InvalidInput(fmt::format("{}: element {} is {} {}, but every element must be a string such as "
                                      "\"Gelu+:1:-1\"",
                                      source, i, element.is_array() || element.is_object() ? "an" : "a",
                                      element.type_name()));
    }
    MEMOPT_RETURN_IF_ERROR(parser.ParseElement(element.get_ref<const std::string&>(), static_cast<int>(i)));
  }
  return parser.Take();
}

Expected<MemoryOptConfig> ParseInlineConfig(std::string_view text, std::string_view source) {
  Parser parser(source);
  MEMOPT_RETURN_IF_ERROR(parser.ParseElement(text, 0));
  return parser.Take();
}

std::string EntryString(const std::string& cluster_id, int type, int64_t count) {
  return fmt::format("{}:{}:{}", cluster_id, type, count);
}

std::string SelectorString(const std::string& cluster_id, const std::vector<int>& occurrences) {
  std::string list;
  for (size_t i = 0; i < occurrences.size();) {
    size_t j = i;
    while (j + 1 < occurrences.size() && occurrences[j + 1] == occurrences[j] + 1) ++j;
    if (!list.empty()) list += '.';
    list += std::to_string(occurrences[i]);
    if (j > i) list += "-" + std::to_string(occurrences[j]);
    i = j + 1;
  }
  return fmt::format("{}@{}:0:0", cluster_id, list);
}

std::string SplitString(const std::string& cluster_id, int occurrence, const std::vector<int>& readers, int keep,
                        bool private_chains) {
  std::string list;
  for (int r : readers) list += (list.empty() ? "" : ".") + std::to_string(r);
  if (keep >= 0) list += (list.empty() ? "k" : ".k") + std::to_string(keep);
  if (private_chains) list += list.empty() ? "p" : ".p";
  return fmt::format("{}@{}/{}:0:0", cluster_id, occurrence, list);
}

std::vector<std::string> ConfigLines(const MemoryOptConfig& config) {
  std::vector<std::string> lines;
  auto splits_of = [&](const std::string& id) {
    std::vector<const ConfigSplit*> out;
    for (const ConfigSplit& s : config.splits) {
      if (s.cluster_id == id) out.push_back(&s);
    }
    std::sort(out.begin(), out.end(), [](const ConfigSplit* a, const ConfigSplit* b) { return a->occurrence < b->occurrence; });
    for (const ConfigSplit* s : out) lines.push_back(SplitString(s->cluster_id, s->occurrence, s->readers, s->keep, s->private_chains));
  };
  for (const ConfigEntry& e : config.entries) {
    lines.push_back(EntryString(e.cluster_id, e.type, e.count));
    if (const ConfigSelector* s = config.FindSelector(e.cluster_id)) {
      lines.push_back(SelectorString(s->cluster_id, s->occurrences));
    }
    splits_of(e.cluster_id);
  }
  for (const ConfigSelector& s : config.selectors) {
    if (config.FindEntry(s.cluster_id) == nullptr) lines.push_back(SelectorString(s.cluster_id, s.occurrences));
  }
  for (const ConfigSplit& s : config.splits) {
    if (config.FindEntry(s.cluster_id) == nullptr) lines.push_back(SplitString(s.cluster_id, s.occurrence, s.readers, s.keep, s.private_chains));
  }
  return lines;
}

std::string WriteMemoryOptConfig(const MemoryOptConfig& config) {
  const std::vector<std::string> lines = ConfigLines(config);
  if (lines.empty()) return "[]\n";
  std::string out = "[\n";
  for (size_t i = 0; i < lines.size(); ++i) {
    out += "  " + nlohmann::json(lines[i]).dump() + (i + 1 < lines.size() ? ",\n" : "\n");
  }
  out += "]\n";
  return out;
}

}  // namespace memopt

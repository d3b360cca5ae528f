#include "analysis/op_table.h"

#include <algorithm>
#include <charconv>
#include <exception>
#include <optional>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sym/sym_expr.h"
#include "util/closest_match.h"

namespace memopt {
namespace {

using nlohmann::json;

const std::vector<std::string> kTopLevelKeys = {"schema_version", "description", "comment", "ops",
                                                "python_op_func_names", "small_static_elements"};
const std::vector<std::string> kEntryKeys = {"domain", "op", "level", "versions", "enabled", "comment"};

std::string UnknownKeyMessage(const std::string& key, const std::vector<std::string>& known) {
  std::string msg = fmt::format("unknown field '{}'", key);
  std::string hint = ClosestMatch(key, known);
  if (!hint.empty()) msg += fmt::format("; did you mean '{}'?", hint);
  return msg;
}

std::optional<int> ParseNonNegativeInt(const std::string& text) {
  int value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || value < 0) return std::nullopt;
  return value;
}

Expected<OpTable::OpEntry> ParseEntry(const json& item, size_t index, std::string_view source) {
  // Name the entry as precisely as what we have parsed allows.
  std::string where = fmt::format("{}: ops[{}]", source, index);
  if (!item.is_object()) return InvalidInput(where + ": expected an object like {\"domain\": \"\", \"op\": \"Add\", ...}");
  if (item.contains("op") && item["op"].is_string()) {
    where += fmt::format(" (op '{}'", item["op"].get<std::string>());
    if (item.contains("domain") && item["domain"].is_string()) {
      where += fmt::format(", domain '{}'", item["domain"].get<std::string>());
    }
    where += ")";
  }
  for (const auto& [key, unused] : item.items()) {
    if (std::find(kEntryKeys.begin(), kEntryKeys.end(), key) == kEntryKeys.end()) {
      return InvalidInput(where + ": " + UnknownKeyMessage(key, kEntryKeys));
    }
  }
  for (const char* required : {"domain", "op", "level", "versions"}) {
    if (!item.contains(required)) return InvalidInput(fmt::format("{}: missing field '{}'", where, required));
  }
  OpTable::OpEntry entry;
  if (!item["domain"].is_string()) return InvalidInput(where + ": 'domain' must be a string (\"\" for ai.onnx)");
  if (!item["op"].is_string() || item["op"].get<std::string>().empty()) {
    return InvalidInput(where + ": 'op' must be a non-empty string");
  }
  entry.domain = item["domain"].get<std::string>();
  if (entry.domain == "ai.onnx") entry.domain.clear();
  entry.op = item["op"].get<std::string>();
  if (!item["level"].is_number_integer() || item["level"].get<int64_t>() < 0 || item["level"].get<int64_t>() > 1) {
    return InvalidInput(where + ": 'level' must be 0 (basic) or 1 (advanced)");
  }
  entry.level = item["level"].get<int>();
  if (item.contains("enabled")) {
    if (!item["enabled"].is_boolean()) return InvalidInput(where + ": 'enabled' must be true or false");
    entry.enabled = item["enabled"].get<bool>();
  }
  const json& versions = item["versions"];
  if (!versions.is_object()) {
    return InvalidInput(where + ": 'versions' must be an object mapping since-versions to ignorable inputs, "
                                "e.g. {\"13\": [1]}");
  }
  for (const auto& [key, inputs] : versions.items()) {
    std::optional<int> version = ParseNonNegativeInt(key);
    if (!version || *version < 1) {
      return InvalidInput(fmt::format("{}: version key '{}' is not a positive integer", where, key));
    }
    if (!inputs.is_array()) {
      return InvalidInput(fmt::format("{}: versions[\"{}\"] must be an array of input indices", where, key));
    }
    std::vector<int> ignorable;
    for (const json& i : inputs) {
      if (!i.is_number_integer() || i.get<int64_t>() < 0 || i.get<int64_t>() > 1 << 20) {
        return InvalidInput(fmt::format("{}: versions[\"{}\"] must hold non-negative input indices, got {}", where,
                                        key, i.dump()));
      }
      ignorable.push_back(i.get<int>());
    }
    std::sort(ignorable.begin(), ignorable.end());
    ignorable.erase(std::unique(ignorable.begin(), ignorable.end()), ignorable.end());
    entry.versions[*version] = std::move(ignorable);
  }
  return entry;
}

}  // namespace

std::string OpTable::Key(std::string_view domain, std::string_view op) {
  std::string key;
  key.reserve(domain.size() + op.size() + 2);
  key.append(domain).append("::").append(op);
  return key;
}

Expected<OpTable> OpTable::Parse(std::string_view text, std::string_view source) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const std::exception& e) {
    return InvalidInput(fmt::format("{}: invalid JSON: {}", source, e.what()));
  }
  if (!doc.is_object()) {
    return InvalidInput(fmt::format("{}: expected a JSON object with \"schema_version\" and \"ops\"", source));
  }
  for (const auto& [key, unused] : doc.items()) {
    if (std::find(kTopLevelKeys.begin(), kTopLevelKeys.end(), key) == kTopLevelKeys.end()) {
      return InvalidInput(fmt::format("{}: {}", source, UnknownKeyMessage(key, kTopLevelKeys)));
    }
  }
  if (!doc.contains("schema_version")) {
    return InvalidInput(fmt::format("{}: missing field 'schema_version' (expected 1)", source));
  }
  if (!doc["schema_version"].is_number_integer() || doc["schema_version"].get<int64_t>() != 1) {
    return InvalidInput(fmt::format("{}: unsupported schema_version {} (this memopt reads 1)", source,
                                    doc["schema_version"].dump()));
  }
  if (!doc.contains("ops")) return InvalidInput(fmt::format("{}: missing field 'ops'", source));
  if (!doc["ops"].is_array()) return InvalidInput(fmt::format("{}: 'ops' must be an array", source));

  OpTable table;
  const json& ops = doc["ops"];
  for (size_t i = 0; i < ops.size(); ++i) {
    MEMOPT_ASSIGN_OR_RETURN(OpEntry entry, ParseEntry(ops[i], i, source));
    std::string key = Key(entry.domain, entry.op);
    if (table.ops_.count(key) != 0) {
      return InvalidInput(fmt::format("{}: ops[{}]: duplicate entry for op '{}' in domain '{}'; merge the versions "
                                      "into one entry",
                                      source, i, entry.op, entry.domain));
    }
    table.ops_.emplace(std::move(key), std::move(entry));
  }
  if (doc.contains("small_static_elements")) {
    const json& small = doc["small_static_elements"];
    if (!small.is_number_integer() || small.get<int64_t>() < 0) {
      return InvalidInput(fmt::format("{}: 'small_static_elements' must be a non-negative integer, got {}", source,
                                      small.dump()));
    }
    table.small_static_elements_ = small.get<int64_t>();
  }
  if (doc.contains("python_op_func_names")) {
    const json& names = doc["python_op_func_names"];
    if (!names.is_array()) return InvalidInput(fmt::format("{}: 'python_op_func_names' must be an array", source));
    for (size_t i = 0; i < names.size(); ++i) {
      if (!names[i].is_string()) {
        return InvalidInput(fmt::format("{}: python_op_func_names[{}] must be a string", source, i));
      }
      table.python_op_func_names_.insert(names[i].get<std::string>());
    }
  }
  return table;
}

const OpTable& OpTable::Builtin() {
  static const OpTable table = [] {
    Expected<OpTable> parsed = Parse(kBuiltinOpTableJson, "built-in op table (configs/recompute_ops.json)");
    // The built-in text is checked by op_table_test; a broken build-time file is a memopt bug.
    MEMOPT_CHECK(parsed.ok());
    return std::move(parsed).value();
  }();
  return table;
}

const OpTable& OpTable::Extended() {
  static const OpTable table = [] {
    Expected<OpTable> extra = Parse(kExtendedOpTableJson, "extended op table (configs/recompute_ops_extended.json)");
    MEMOPT_CHECK(extra.ok());  // checked by op_table_test, as the built-in text
    OpTable merged = Builtin();
    MEMOPT_CHECK(merged.Merge(*extra).ok());
    return merged;
  }();
  return table;
}

Status OpTable::Merge(const OpTable& extra) {
  for (const auto& [key, entry] : extra.ops_) {
    if (!entry.enabled) {
      ops_.erase(key);
      continue;
    }
    auto it = ops_.find(key);
    if (it == ops_.end() || !it->second.enabled) {
      ops_[key] = entry;
      continue;
    }
    it->second.level = entry.level;
    for (const auto& [version, inputs] : entry.versions) it->second.versions[version] = inputs;
  }
  python_op_func_names_.insert(extra.python_op_func_names_.begin(), extra.python_op_func_names_.end());
  if (extra.small_static_elements_.has_value()) small_static_elements_ = extra.small_static_elements_;
  return Status::Ok();
}

const OpTable::OpEntry* OpTable::Find(std::string_view domain, std::string_view op) const {
  auto it = ops_.find(Key(domain, op));
  if (it == ops_.end() || !it->second.enabled) return nullptr;
  return &it->second;
}

bool OpTable::IsRecomputable(const Node& node, int probe_level) const {
  const OpEntry* entry = Find(node.domain, node.op_type);
  if (entry == nullptr || entry->level > probe_level) return false;
  if (entry->versions.count(node.since_version) == 0) return false;
  if (node.op_type == "PythonOp" && node.domain == "com.microsoft") {
    return python_op_func_names_.count(node.GetString("func_name", "")) != 0;
  }
  return true;
}

const std::vector<int>& OpTable::IgnorableInputs(const Node& node) const {
  static const std::vector<int> kEmpty;
  const OpEntry* entry = Find(node.domain, node.op_type);
  if (entry == nullptr) return kEmpty;
  auto it = entry->versions.find(node.since_version);
  return it == entry->versions.end() ? kEmpty : it->second;
}

std::vector<const OpTable::OpEntry*> OpTable::Entries() const {
  std::vector<const OpEntry*> out;
  for (const auto& [key, entry] : ops_) {
    if (entry.enabled) out.push_back(&entry);
  }
  std::sort(out.begin(), out.end(), [](const OpEntry* a, const OpEntry* b) {
    return std::tie(a->domain, a->op) < std::tie(b->domain, b->op);
  });
  return out;
}

bool ClusterNeedsExtendedOps(std::string_view cluster_id) {
  for (size_t start = 0; start < cluster_id.size();) {
    const size_t plus = std::min(cluster_id.find('+', start), cluster_id.size());
    const std::string_view op = cluster_id.substr(start, plus - start);
    auto listed = [op](const OpTable& t) { return t.Find("", op) != nullptr || t.Find("com.microsoft", op) != nullptr; };
    if (!listed(OpTable::Builtin()) && listed(OpTable::Extended())) return true;
    start = plus + 1;
  }
  return false;
}

}  // namespace memopt

// Helpers shared by the lib/plan and lib/rewrite unit tests (header only; not part of memopt_lib).
#pragma once

#include <cctype>

#include <catch2/catch.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "helpers/analysis_test_util.h"
#include "analysis/exec_order.h"
#include "analysis/op_table.h"
#include "plan/config.h"
#include "plan/plan_outcome.h"
#include "plan/selection.h"
#include "test_data.h"

namespace memopt::testing {

/// TextModel that also names the node protos (what a written file would carry).
inline Model NamedTextModel(std::string_view text, const std::vector<std::string>& names) {
  Model m = TextModel(text, names);
  for (Node& n : m.graph.nodes) n.proto.set_name(n.name);
  return m;
}

/// A loaded, shape-inferred model and its scan. Keep it alive while outcomes refer to it.
struct Scanned {
  Model model;
  ScanResult scan;
  DimBindings dims;
};

/// `op_table`: nullptr = the built-in table (OpTable::Extended() for --ops extended).
inline Scanned ScanModel(Model model, int level, const std::string& dims = "", const OpTable* op_table = nullptr) {
  Scanned s{std::move(model), {}, {}};
  Expected<DimBindings> d = DimBindings::Parse(dims);
  REQUIRE(d.ok());
  s.dims = *d;
  ScanOptions options;
  options.level = level;
  options.dims = s.dims;
  options.op_table = op_table;
  Expected<ScanResult> r = Scan(s.model.graph, options);
  INFO(r.status().message());
  REQUIRE(r.ok());
  s.scan = std::move(r).value();
  return s;
}

inline Scanned ScanFile(const std::string& path, int level, const std::string& dims = "",
                        const OpTable* op_table = nullptr) {
  return ScanModel(LoadShaped(path), level, dims, op_table);
}

/// A test graph (testing::DataPath name: "src:<path>" or a shared-data path) and its --dims.
struct GraphCase {
  std::string file;
  std::string dims;
};

/// Scans every graph of `cases` at levels 0, 1 and 2 and calls check(scanned); graphs whose
/// shared data is absent are skipped (and the test case marked so).
template <typename Check>
void ForEachScanAtEveryLevel(const std::vector<GraphCase>& cases, Check check) {
  for (const GraphCase& c : cases) {
    std::optional<std::string> path = DataPath(c.file);
    if (!path) continue;  // marked skipped (test_data.h)
    for (int level : {0, 1, 2}) {
      INFO(c.file << " level " << level << " dims " << c.dims);
      check(ScanFile(*path, level, c.dims));
    }
  }
}

inline std::vector<size_t> Select(const Scanned& s, const std::string& config_json,
                                  CountSemantics semantics = CountSemantics::kDocumented) {
  Expected<MemoryOptConfig> c = ParseMemoryOptConfig(config_json, "test");
  INFO(c.status().message());
  REQUIRE(c.ok());
  SelectionOptions options;
  options.count_semantics = semantics;
  const RewriteSpecBuilder builder(s.model.graph, s.scan);
  options.builder = &builder;
  Expected<Selection> sel = SelectPlans(s.scan, *c, options);
  INFO(sel.status().message());
  REQUIRE(sel.ok());
  return sel->plans;
}

inline PlanOutcome Outcome(const Scanned& s, const std::vector<size_t>& plans) {
  Expected<PlanOutcome> o = EvaluatePlanExactly(s.model.graph, s.scan, plans, s.dims);
  INFO(o.status().message());
  REQUIRE(o.ok());
  return std::move(o).value();
}

inline std::vector<size_t> LevelPlans(const Scanned& s) {
  Expected<Selection> sel = SelectPlans(s.scan, LevelConfig(s.scan));
  REQUIRE(sel.ok());
  return sel->plans;
}

inline int CountOp(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op_type == op;
  return n;
}

inline const Node* FindNode(const Graph& g, const std::string& name) {
  for (const Node& node : g.nodes) {
    if (node.name == name) return &node;
  }
  return nullptr;
}

inline const Node* Producer(const Graph& g, ValueId v) {
  if (v == kNone || g.values[v].producer == kNone) return nullptr;
  return &g.nodes[g.values[v].producer];
}

inline bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Structural checks every rewritten graph must pass (reference §6.5 plus memopt's own).
/// "<name>_recompute" or "<name>_recompute_<n>" (rewrite/rewrite_spec.h, RecomputeName).
inline bool IsRecomputeName(const std::string& name) {
  size_t end = name.size();
  while (end > 0 && std::isdigit(static_cast<unsigned char>(name[end - 1]))) --end;
  if (end < name.size() && end > 0 && name[end - 1] == '_') return EndsWith(name.substr(0, end - 1), "_recompute");
  return EndsWith(name, "_recompute");
}

inline void CheckRewriteInvariants(const Graph& original, const ScanResult& scan, const PlanOutcome& outcome) {
  const Graph& g = outcome.rewritten.graph;
  // Topologically sorted; each edge held once (in the ids, not the proto).
  std::vector<char> available(g.values.size(), 0);
  for (const Value& v : g.values) {
    if (v.producer == kNone) available[&v - g.values.data()] = 1;
  }
  for (const Node& node : g.nodes) {
    REQUIRE(node.proto.name() == node.name);
    REQUIRE(node.proto.input_size() == 0);
    REQUIRE(node.proto.output_size() == 0);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId v = node.inputs[i];
      INFO("node " << node.name << " input " << i);
      if (v != kNone) CHECK(available[v]);
    }
    for (ValueId v : node.outputs) {
      if (v != kNone) available[v] = 1;
    }
  }
  // Graph inputs and outputs keep their names; the original nodes are all kept.
  REQUIRE(g.inputs.size() == original.inputs.size());
  for (size_t i = 0; i < g.inputs.size(); ++i)
    CHECK(g.values[g.inputs[i]].name == original.values[original.inputs[i]].name);
  REQUIRE(g.outputs.size() == original.outputs.size());
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    CHECK(g.values[g.outputs[i]].name == original.values[original.outputs[i]].name);
  }
  CHECK(g.nodes.size() == original.nodes.size() + outcome.spec.clones.size());
  CHECK(CountOp(g, "YieldOp") == CountOp(original, "YieldOp"));
  // Clones: names, doc strings, inputs.
  for (size_t k = 0; k < outcome.spec.clones.size(); ++k) {
    const Node& clone = g.nodes[outcome.rewritten.clone_id[k]];
    const Node& src = original.nodes[outcome.spec.clones[k].original];
    // ORT's "<node>_recompute" where that name is free; unnamed nodes and taken names are the
    // exceptions (recompute_rewrite.cc, CloneNodeNames), covered by their own test.
    const int32_t copy = outcome.spec.clones[k].copy;
    if (!src.name.empty() && FindNode(original, RecomputeName(src.name, copy)) == nullptr) {
      CHECK(clone.name == RecomputeName(src.name, copy));
      CHECK(clone.proto.doc_string() == "Recompute of " + src.name);
    } else {
      CHECK(clone.name.find("_recompute") != std::string::npos);
      CHECK(clone.proto.doc_string() ==
            "Recompute of " + (src.name.empty() ? "an unnamed " + src.op_type + " node" : src.name));
    }
    CHECK(clone.op_type == src.op_type);
    CHECK(clone.domain == src.domain);
    for (ValueId v : clone.inputs) {
      if (v == kNone) continue;
      const Value& value = g.values[v];
      const bool ok = value.producer == kNone || IsRecomputeName(value.name) ||
                      outcome.rewritten.order.IsForward(value.producer);
      INFO("clone " << clone.name << " reads " << value.name);
      CHECK(ok);
    }
    for (ValueId v : clone.outputs) {
      if (v != kNone) CHECK(g.values[v].name == RecomputeName(original.values[outcome.spec.clone_values[v - outcome.spec.num_original_values]].name, copy));
    }
  }
  // Applied entries: no backward node reads their outputs any more (plans with a keep are left
  // out: their first readers read the original).
  const std::vector<size_t>& kept = outcome.spec.kept_plans;
  for (size_t p : outcome.spec.applied_plans) {
    if (std::find(kept.begin(), kept.end(), p) != kept.end()) continue;
    const Node& entry = g.nodes[outcome.rewritten.new_id[scan.plans[p].entry]];
    for (ValueId v : entry.outputs) {
      if (v == kNone) continue;
      for (const auto& [consumer, slot] : g.values[v].consumers) {
        INFO("entry " << entry.name << " output " << g.values[v].name << " read by " << g.nodes[consumer].name);
        CHECK(outcome.rewritten.order.IsForward(consumer));
      }
    }
  }
}

}  // namespace memopt::testing

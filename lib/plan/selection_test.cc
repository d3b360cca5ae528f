#include "plan/selection.h"

#include <catch2/catch.hpp>

#include "helpers/plan_test_util.h"
#include "test_data.h"

namespace memopt {
namespace {

/// Five stashed Neg nodes in a chain (cluster "Neg+", five occurrences) and one Sin.
testing::Scanned Chain() {
  Model m = testing::NamedTextModel(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
    g (float[4] x) => (float[4] g5) {
      a1 = Neg(x)
      a2 = Neg(a1)
      a3 = Neg(a2)
      a4 = Neg(a3)
      a5 = Neg(a4)
      s = Sin(a5)
      y = com.microsoft.YieldOp <full_shape_outputs = [0]> (s)
      g0 = Mul(y, s)
      g1 = Mul(g0, a1)
      g2 = Mul(g1, a2)
      g3 = Mul(g2, a3)
      g4 = Mul(g3, a4)
      g5 = Mul(g4, a5)
    })",
                                    {"n1", "n2", "n3", "n4", "n5", "sin", "yield", "m0", "m1", "m2", "m3", "m4",
                                     "m5"});
  return testing::ScanModel(std::move(m), 0);
}

std::vector<std::string> Entries(const testing::Scanned& s, const std::vector<size_t>& plans) {
  std::vector<std::string> names;
  for (size_t p : plans) names.push_back(s.model.graph.nodes[s.scan.plans[p].entry].name);
  std::sort(names.begin(), names.end());
  return names;
}

TEST_CASE("selection: count semantics, documented and ORT's", "[plan][selection]") {
  testing::Scanned s = Chain();
  REQUIRE(Occurrences(s.scan, "Neg+", 1).size() == 5);
  using V = std::vector<std::string>;
  CHECK(Entries(s, testing::Select(s, R"(["Neg+:1:-1"])")) == V{"n1", "n2", "n3", "n4", "n5"});
  CHECK(Entries(s, testing::Select(s, R"(["Neg+:1:2"])")) == V{"n1", "n2"});
  CHECK(Entries(s, testing::Select(s, R"(["Neg+:1:0"])")).empty());
  CHECK(Entries(s, testing::Select(s, R"(["Neg+:1:9"])")) == V{"n1", "n2", "n3", "n4", "n5"});
  // ORT HEAD: N >= 1 applies every occurrence, 0 all but the last one in execution order.
  CHECK(Entries(s, testing::Select(s, R"(["Neg+:1:2"])", CountSemantics::kOrt)) == V{"n1", "n2", "n3", "n4", "n5"});
  CHECK(Entries(s, testing::Select(s, R"(["Neg+:1:0"])", CountSemantics::kOrt)) == V{"n1", "n2", "n3", "n4"});
  CHECK(Entries(s, testing::Select(s, R"(["Neg+:1:-1"])", CountSemantics::kOrt)).size() == 5);
  // Type 0 matches nothing.
  CHECK(testing::Select(s, R"(["Neg+:0:-1", "Sin+:1:-1"])") == testing::Select(s, R"(["Sin+:1:-1"])"));
}

TEST_CASE("selection: selectors pick occurrences whatever the count", "[plan][selection]") {
  testing::Scanned s = Chain();
  using V = std::vector<std::string>;
  CHECK(Entries(s, testing::Select(s, R"(["Neg+:1:-1", "Neg+@0.2-3:0:0"])")) == V{"n1", "n3", "n4"});
  CHECK(Entries(s, testing::Select(s, R"(["Neg+:1:1", "Neg+@4:0:0"])", CountSemantics::kOrt)) == V{"n5"});

  Expected<MemoryOptConfig> c = ParseMemoryOptConfig(R"(["Neg+:1:-1", "Neg+@5:0:0"])", "t.json");
  REQUIRE(c.ok());
  Expected<Selection> bad = SelectPlans(s.scan, *c);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() ==
        "element 1 \"Neg+@5:0:0\": occurrence 5 does not exist: the graph has 5 occurrences of \"Neg+:1\" (0..4)");
  c = ParseMemoryOptConfig(R"(["Neg+@1:0:0"])", "t.json");
  REQUIRE(c.ok());
  CHECK(SelectPlans(s.scan, *c).status().message().find("a selector needs an entry \"Neg+:<type>:<count>\"") !=
        std::string::npos);
}

TEST_CASE("selection: unknown cluster ids are errors, or warnings with --lenient", "[plan][selection]") {
  testing::Scanned s = Chain();
  Expected<MemoryOptConfig> c = ParseMemoryOptConfig(R"(["Neg+:1:-1", "Ne+:1:-1"])", "t.json");
  REQUIRE(c.ok());
  Expected<Selection> strict = SelectPlans(s.scan, *c);
  REQUIRE_FALSE(strict.ok());
  CHECK(strict.status().code() == ErrorCode::kInvalidInput);
  CHECK(strict.status().message() ==
        "element 1 \"Ne+:1:-1\": unknown cluster id 'Ne+'; did you mean 'Neg+'? (plans in this graph: Neg+:1, "
        "Sin+:1); --lenient ignores such entries as ONNX Runtime does");
  SelectionOptions lenient;
  lenient.lenient = true;
  Expected<Selection> loose = SelectPlans(s.scan, *c, lenient);
  REQUIRE(loose.ok());
  CHECK(loose->plans.size() == 5);
  REQUIRE(loose->warnings.size() == 1);
  CHECK(loose->warnings[0].find("ignored (--lenient)") != std::string::npos);

  c = ParseMemoryOptConfig(R"(["Neg+:2:-1"])", "t.json");
  REQUIRE(c.ok());
  CHECK(SelectPlans(s.scan, *c).status().message().find(
            "cluster 'Neg+' has no type-2 plan in this graph (it has type 1: use \"Neg+:1:-1\")") != std::string::npos);
}

TEST_CASE("selection: configs written for plans select exactly those plans", "[plan][selection]") {
  testing::Scanned s = Chain();
  std::vector<size_t> neg = Occurrences(s.scan, "Neg+", 1);
  std::vector<size_t> want = {neg[1], neg[3], neg[4], Occurrences(s.scan, "Sin+", 1)[0]};
  std::sort(want.begin(), want.end());
  MemoryOptConfig c = ConfigForPlans(RewriteSpecBuilder(s.model.graph, s.scan), want);
  CHECK(WriteMemoryOptConfig(c) == "[\n  \"Neg+:1:-1\",\n  \"Neg+@1.3-4:0:0\",\n  \"Sin+:1:-1\"\n]\n");
  Expected<Selection> back = SelectPlans(s.scan, c);
  REQUIRE(back.ok());
  CHECK(back->plans == want);
  // Without the selector (what ONNX Runtime sees) the entry applies every occurrence.
  CHECK(testing::Select(s, R"(["Neg+:1:-1", "Sin+:1:-1"])", CountSemantics::kOrt).size() == 6u);
}

TEST_CASE("selection: level configs list every group of the scan's level", "[plan][selection]") {
  auto path = testing::SharedData("ort_recompute/3layer_bloom_optimized_training.onnx");
  if (!path) return;
  for (int level : {1, 2}) {
    testing::Scanned s = testing::ScanFile(*path, level);
    std::vector<std::string> warnings;
    MemoryOptConfig c = LevelConfig(s.scan, &warnings);
    CHECK(c.entries.size() + warnings.size() == s.scan.groups.size());
    Expected<Selection> sel = SelectPlans(s.scan, c);
    REQUIRE(sel.ok());
    size_t expected = 0;
    for (const PlanGroup& g : s.scan.groups) {
      if (c.FindEntry(g.cluster_id)->type == g.type) expected += g.plans.size();
    }
    CHECK(sel->plans.size() == expected);
  }
}

// A node whose recompute passes a widening Cast has a type-1 and a type-2 plan of one cluster id
// (ORT 1.19.2). ORTModule's level-2 config lists the id with type 1 and then type 2, and ORT keeps
// an id's later entry: the level config applies type 2, and the rewrite one plan per node.
TEST_CASE("selection: a level-2 config keeps type 2 of an id with both types", "[plan][selection]") {
  Model m = testing::NamedTextModel(testing::kCastMulTrainingGraph, testing::kCastMulTrainingNames);
  testing::Scanned s = testing::ScanModel(std::move(m), 2);
  REQUIRE(s.scan.groups.size() == 2);
  std::vector<std::string> warnings;
  MemoryOptConfig c = LevelConfig(s.scan, &warnings);
  REQUIRE(c.entries.size() == 1);
  CHECK(c.entries[0].cluster_id == "Cast+Mul+");
  CHECK(c.entries[0].type == 2);
  CHECK(c.entries[0].text == "Cast+Mul+:2:-1");
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("\"Cast+Mul+:1:-1\" is left out") != std::string::npos);
  Expected<Selection> sel = SelectPlans(s.scan, c);
  REQUIRE(sel.ok());
  REQUIRE(sel->plans.size() == 1);
  CHECK(s.scan.plans[sel->plans[0]].type() == 2);
}

}  // namespace
}  // namespace memopt

namespace memopt {
namespace {

// `a` is read by two backward nodes with a 4 KiB Concat between them. ORT's clone of Neg runs
// before the first reader and lives until the second, through the Concat; split at reader 1, the
// first clone is freed after g0 and a second one runs right before r: 1 KiB less at the peak.
testing::Scanned TwoReaders() {
  Model m = testing::NamedTextModel(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
    g (float[256] x) => (float[256] r) {
      a = Neg(x)
      s = Sin(a)
      y = com.microsoft.YieldOp <full_shape_outputs = [0]> (s)
      g0 = Mul(y, a)
      c = Concat <axis = 0> (g0, g0, g0, g0)
      st = Constant <value = int64[1] {0}> ()
      en = Constant <value = int64[1] {256}> ()
      d = Slice(c, st, en)
      r = Mul(d, a)
    })",
                                    {"neg", "sin", "yield", "g0", "concat", "st", "en", "slice", "r"});
  return testing::ScanModel(std::move(m), 0);
}

}  // namespace

TEST_CASE("selection: a split entry recomputes one occurrence in groups, 1 KiB lower by hand", "[plan][selection][split]") {
  testing::Scanned s = TwoReaders();
  const RewriteSpecBuilder builder(s.model.graph, s.scan);
  const std::vector<size_t> neg = Occurrences(s.scan, "Neg+", 1);
  REQUIRE(neg.size() == 1);
  REQUIRE(builder.Readers(neg[0]).size() == 2);
  const std::vector<size_t> ort = testing::Select(s, R"(["Neg+:1:-1"])");
  const std::vector<size_t> split = testing::Select(s, R"(["Neg+:1:-1", "Neg+@0/1:0:0"])");
  CHECK(ort == neg);
  CHECK(split == std::vector<size_t>{neg[0], static_cast<size_t>(builder.SplitIndex(neg[0], 1))});
  const PlanOutcome none = testing::Outcome(s, {});
  const PlanOutcome one = testing::Outcome(s, ort);
  const PlanOutcome two = testing::Outcome(s, split);
  INFO("peaks: none " << none.peak.peak_bytes << ", ORT's clone " << one.peak.peak_bytes << ", split " << two.peak.peak_bytes);
  // At the Concat: x, g0, c (1 + 1 + 4 KiB) and `a` (kept, or ORT's clone); the split has no copy
  // of `a` live there. Nothing else lives (y and the constants are gone or too small to matter:
  // 16 bytes of Slice bounds).
  CHECK(one.peak.peak_bytes == none.peak.peak_bytes);
  CHECK(two.peak.peak_bytes == one.peak.peak_bytes - 1024);
  CHECK(two.nodes_added == 2);
  testing::CheckRewriteInvariants(s.model.graph, s.scan, two);
  // The config written for the split selects it back.
  const MemoryOptConfig written = ConfigForPlans(builder, split);
  CHECK(WriteMemoryOptConfig(written) == "[\n  \"Neg+:1:-1\",\n  \"Neg+@0/1:0:0\"\n]\n");
  // Errors name the element: a reader past the last one, an occurrence not applied, no entry.
  auto error = [&](const std::string& json) {
    Expected<MemoryOptConfig> c = ParseMemoryOptConfig(json, "t.json");
    REQUIRE(c.ok());
    SelectionOptions options;
    options.builder = &builder;
    Expected<Selection> sel = SelectPlans(s.scan, *c, options);
    REQUIRE_FALSE(sel.ok());
    return sel.status().message();
  };
  CHECK(error(R"(["Neg+:1:-1", "Neg+@0/2:0:0"])") ==
        "element 1 \"Neg+@0/2:0:0\": reader 2 does not exist: occurrence 0 of \"Neg+\" has 2 backward readers (0..1), "
        "and a split starts a group at 1..1");
  CHECK(error(R"(["Neg+:1:0", "Neg+@0/1:0:0"])") ==
        "element 1 \"Neg+@0/1:0:0\": occurrence 0 of \"Neg+:1\" is not applied by the config; a split needs its "
        "occurrence selected");
  CHECK(error(R"(["Neg+@0/1:0:0"])").find("a split needs an entry \"Neg+:<type>:<count>\"") != std::string::npos);
  CHECK(error(R"(["Neg+:1:-1", "Neg+@1/1:0:0"])").find("occurrence 1 does not exist") != std::string::npos);
}

TEST_CASE("selection: a keep serves the first reader with the original, 1 KiB lower with one clone", "[plan][selection][split]") {
  testing::Scanned s = TwoReaders();
  const RewriteSpecBuilder builder(s.model.graph, s.scan);
  const std::vector<size_t> neg = Occurrences(s.scan, "Neg+", 1);
  REQUIRE(neg.size() == 1);
  const std::vector<size_t> keep = testing::Select(s, R"(["Neg+:1:-1", "Neg+@0/k1:0:0"])");
  CHECK(keep == std::vector<size_t>{neg[0], static_cast<size_t>(builder.KeepIndex(neg[0], 1))});
  const PlanOutcome none = testing::Outcome(s, {});
  const PlanOutcome kept = testing::Outcome(s, keep);
  // g0 reads the original `a`, freed after it; one clone runs right before r: at the Concat only
  // x, g0 and c (1 + 1 + 4 KiB), as with the split, for one clone instead of two.
  CHECK(kept.peak.peak_bytes == none.peak.peak_bytes - 1024);
  CHECK(kept.nodes_added == 1);
  CHECK(kept.rewired_inputs == 1);
  testing::CheckRewriteInvariants(s.model.graph, s.scan, kept);
  CHECK(WriteMemoryOptConfig(ConfigForPlans(builder, keep)) == "[\n  \"Neg+:1:-1\",\n  \"Neg+@0/k1:0:0\"\n]\n");
  // A split at or before the keep is void; of two keeps the later one counts.
  CHECK(testing::Select(s, R"(["Neg+:1:-1", "Neg+@0/1.k1:0:0"])") == keep);
  CHECK(builder.Canonical({static_cast<size_t>(builder.KeepIndex(neg[0], 0)),
                           static_cast<size_t>(builder.KeepIndex(neg[0], 1))}) == keep);
  Expected<MemoryOptConfig> past = ParseMemoryOptConfig(R"(["Neg+:1:-1", "Neg+@0/k2:0:0"])", "t.json");
  REQUIRE(past.ok());
  SelectionOptions options;
  options.builder = &builder;
  Expected<Selection> sel = SelectPlans(s.scan, *past, options);
  REQUIRE_FALSE(sel.ok());
  CHECK(sel.status().message() ==
        "element 1 \"Neg+@0/k2:0:0\": keep reader 2 does not exist: occurrence 0 of \"Neg+\" has 2 backward readers (0..1)");
}

}  // namespace memopt

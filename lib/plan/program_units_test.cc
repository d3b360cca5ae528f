#include "plan/program_units.h"

#include <catch2/catch.hpp>

#include "helpers/plan_test_util.h"
#include "rewrite/rewrite_spec.h"

namespace memopt {
namespace {

TEST_CASE("program units: SubtractRuns is the pointwise difference, as runs", "[plan][program_units]") {
  // a: -10 on [2, 6); b: -4 on [4, 8). a - b: -10 on [2, 4), -6 on [4, 6), +4 on [6, 8).
  const std::vector<StepRun> a{{2, 6, -10}};
  const std::vector<StepRun> b{{4, 8, -4}};
  CHECK(SubtractRuns(a, b) == std::vector<StepRun>{{2, 4, -10}, {4, 6, -6}, {6, 8, 4}});
  CHECK(SubtractRuns(a, a).empty());
  CHECK(SubtractRuns(a, {}) == a);
  // Equal neighbours merge: -3 on [0, 2) and [2, 5) from a split run minus nothing there.
  CHECK(SubtractRuns({{0, 2, -3}, {2, 5, -3}}, {}) == std::vector<StepRun>{{0, 5, -3}});
  CHECK(SubtractRuns({}, {{1, 3, 7}}) == std::vector<StepRun>{{1, 3, -7}});
}

// `a` has three backward readers, so its plan has splits at readers 1 and 2 and keeps at 0-2.
testing::Scanned ThreeReaders() {
  Model m = testing::NamedTextModel(R"(
    <ir_version: 8, opset_import: ["" : 15, "com.microsoft" : 1]>
    g (float[256] x) => (float[256] r) {
      a = Neg(x)
      s = Sin(a)
      y = com.microsoft.YieldOp <full_shape_outputs = [0]> (s)
      g0 = Mul(y, a)
      g1 = Mul(g0, a)
      r = Mul(g1, a)
    })",
                                    {"neg", "sin", "yield", "g0", "g1", "r"});
  return testing::ScanModel(std::move(m), 0);
}

TEST_CASE("program units: LinkUnits makes variants increments of their plan, keeps exclusive", "[plan][program_units]") {
  testing::Scanned s = ThreeReaders();
  const RewriteSpecBuilder builder(s.model.graph, s.scan);
  size_t neg = s.scan.plans.size();
  for (size_t p = 0; p < s.scan.plans.size(); ++p) {
    if (s.scan.plans[p].cluster_id == "Neg+") neg = p;
  }
  REQUIRE(neg < s.scan.plans.size());
  REQUIRE(builder.Readers(neg).size() == 3);
  const size_t split1 = static_cast<size_t>(builder.SplitIndex(neg, 1));
  const size_t split2 = static_cast<size_t>(builder.SplitIndex(neg, 2));
  const size_t keep0 = static_cast<size_t>(builder.KeepIndex(neg, 0));
  const size_t keep1 = static_cast<size_t>(builder.KeepIndex(neg, 1));
  // Single units outside any small group (as in a deep graph), with made-up effects.
  ProgramUnits program;
  program.plans = {{neg}, {split1}, {split2}, {keep0}, {keep1}};
  for (size_t u = 0; u < program.plans.size(); ++u) program.members.push_back({u});
  program.runs = {{{0, 4, -100}}, {{0, 4, -100}, {4, 5, -20}}, {{0, 6, -100}}, {{0, 4, -100}}, {{1, 4, -100}}};
  program.group.assign(5, -1);
  program.mask.assign(5, 0);
  program.every.assign(5, 1);
  LinkUnits(builder, program);
  // Every variant requires the plan, and counts only its increment over it.
  CHECK(program.implied == std::vector<std::pair<int32_t, int32_t>>{{1, 0}, {2, 0}, {3, 0}, {4, 0}});
  CHECK(program.runs[0] == std::vector<StepRun>{{0, 4, -100}});
  CHECK(program.runs[1] == std::vector<StepRun>{{4, 5, -20}});
  CHECK(program.runs[2] == std::vector<StepRun>{{4, 6, -100}});
  CHECK(program.runs[3].empty());
  CHECK(program.runs[4] == std::vector<StepRun>{{0, 1, 100}});
  // One keep per plan; keep 1 voids split 1 (at or before its reader), not split 2.
  CHECK(program.at_most_one == std::vector<std::vector<int32_t>>{{3, 4}, {4, 1}});

  // Units inside a small group are left alone (their unions are exact).
  ProgramUnits grouped = program;
  grouped.implied.clear();
  grouped.at_most_one.clear();
  grouped.group.assign(5, 0);
  const auto runs = grouped.runs;
  LinkUnits(builder, grouped);
  CHECK(grouped.implied.empty());
  CHECK(grouped.at_most_one.empty());
  CHECK(grouped.runs == runs);
}

}  // namespace
}  // namespace memopt

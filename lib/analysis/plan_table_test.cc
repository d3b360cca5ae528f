#include "analysis/plan_table.h"

#include <catch2/catch.hpp>

#include "analysis/exec_order.h"

namespace memopt {
namespace {

const SymExpr kN = SymExpr::Symbol("N");
const SymExpr kS = SymExpr::Symbol("S");

RecomputePlan Plan(NodeId entry, const std::string& cluster, std::vector<std::optional<SymExpr>> bytes,
                   bool compromise = false, Rational ratio = 1) {
  RecomputePlan p;
  p.entry = entry;
  p.cluster_id = cluster;
  p.compromise = compromise;
  p.save_ratio = ratio;
  for (size_t k = 0; k < bytes.size(); ++k) {
    StashedOutput out;
    out.output_index = static_cast<int32_t>(k);
    out.bytes = bytes[k];
    p.outputs.push_back(out);
  }
  return p;
}

TEST_CASE("plan table: savings count every stashed output", "[analysis][plan_table]") {
  std::vector<RecomputePlan> plans = {
      Plan(0, "LayerNormalization+", {SymExpr(16) * kN, SymExpr(4) * kN, SymExpr(4) * kN}),
      Plan(1, "Cast+", {SymExpr(8) * kN}, /*compromise=*/true, Rational::Make(1, 2)),
      Plan(2, "Gelu+", {std::nullopt}),
  };
  ComputePlanSavings(plans);
  REQUIRE(plans[0].saving.has_value());
  CHECK(*plans[0].saving == SymExpr(24) * kN);  // ORT would count one output only
  REQUIRE(plans[1].saving.has_value());
  CHECK(*plans[1].saving == SymExpr(4) * kN);
  CHECK_FALSE(plans[2].saving.has_value());
  CHECK(PlanConfig(plans[1]) == "Cast+:2:-1");
}

TEST_CASE("plan table: grouping, level filter and order", "[analysis][plan_table]") {
  // Plans come in reverse execution order, as the search walks them.
  std::vector<RecomputePlan> plans = {
      Plan(4, "Gelu+", {SymExpr(2) * kN * kS}),
      Plan(3, "Mul+", {SymExpr(1000) * kN}),
      Plan(2, "Gelu+", {SymExpr(2) * kN * kS}),
      Plan(1, "Cast+", {SymExpr(8) * kN * kS}, /*compromise=*/true, Rational::Make(1, 2)),
      Plan(0, "Add+", {SymExpr(1000) * kN}),
  };
  ComputePlanSavings(plans);
  ExecutionOrder order = MakeExecutionOrder(5, {0, 1, 2, 3, 4}, 4);

  // Unbound dims order by N = S = 1024: Gelu 4*N*S > Add = Mul = 1000*N (tie: config order).
  std::vector<PlanGroup> level1 = BuildPlanGroups(plans, order, 1, DimBindings{});
  REQUIRE(level1.size() == 3);
  CHECK(level1[0].config == "Gelu+:1:-1");
  CHECK(level1[0].freq == 2);
  CHECK(level1[0].plans == std::vector<size_t>{2, 0});  // execution order of the entries
  CHECK(*level1[0].saving == SymExpr(4) * kN * kS);
  CHECK_FALSE(level1[0].saving_bytes.has_value());
  CHECK(level1[1].config == "Add+:1:-1");
  CHECK(level1[2].config == "Mul+:1:-1");

  // Level 2 adds the type-2 group; bound dims give bytes and decide the order.
  DimBindings dims;
  dims.Set("N", 2);
  dims.Set("S", 100);
  std::vector<PlanGroup> level2 = BuildPlanGroups(plans, order, 2, dims);
  REQUIRE(level2.size() == 4);
  CHECK(level2[0].config == "Add+:1:-1");  // 2000 bytes
  CHECK(level2[0].saving_bytes == 2000);
  CHECK(level2[1].config == "Mul+:1:-1");  // 2000 bytes, after Add by config
  CHECK(level2[2].config == "Cast+:2:-1");  // 8*2*100/2 = 800 bytes
  CHECK(level2[2].saving_bytes == 800);
  CHECK(level2[2].type == 2);
  CHECK(level2[3].config == "Gelu+:1:-1");  // 4*2*100 = 800 bytes, after Cast by config
  CHECK(level2[3].saving_bytes == 800);
}

TEST_CASE("plan table: unknown sizes make the group saving unknown", "[analysis][plan_table]") {
  std::vector<RecomputePlan> plans = {Plan(0, "Gelu+", {SymExpr(4) * kN}), Plan(1, "Gelu+", {std::nullopt})};
  ComputePlanSavings(plans);
  std::vector<PlanGroup> groups = BuildPlanGroups(plans, MakeExecutionOrder(2, {0, 1}, 1), 1, DimBindings{});
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].freq == 2);
  CHECK_FALSE(groups[0].saving.has_value());
  CHECK_FALSE(groups[0].saving_bytes.has_value());
}

}  // namespace
}  // namespace memopt

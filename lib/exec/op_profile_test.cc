// OpProfile: per-step averages over the runs, longest first; the CPU executor adds every node it
// runs, once per run.
#include "exec/op_profile.h"

#include <catch2/catch.hpp>

#include "helpers/analysis_test_util.h"
#include "exec/executor.h"

namespace memopt {
namespace {

Node MakeNode(const std::string& domain, const std::string& op) {
  Node n;
  n.domain = domain;
  n.op_type = op;
  return n;
}

TEST_CASE("op profile: per-step times average the runs, longest first, ties by name", "[exec][profile]") {
  OpProfile p;
  const Node add = MakeNode("", "Add"), mul = MakeNode("", "Mul"), fused = MakeNode("com.microsoft", "FusedMatMul");
  for (int run = 0; run < 2; ++run) {
    p.Add(add, 1.0);
    p.Add(add, 2.0);
    p.Add(mul, 3.0);
    p.Add(fused, 6.0 + run);  // 6 then 7: 6.5 per step
    p.EndRun();
  }
  CHECK(p.runs() == 2);
  const auto rows = p.PerStep();
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].op == "com.microsoft::FusedMatMul");
  CHECK(rows[0].ms == Approx(6.5));
  CHECK(rows[0].nodes == 1);
  // Add (3 ms in 2 nodes) and Mul (3 ms in 1 node) tie: by name.
  CHECK(rows[1].op == "Add");
  CHECK(rows[1].ms == Approx(3.0));
  CHECK(rows[1].nodes == 2);
  CHECK(rows[2].op == "Mul");
  CHECK(rows[2].nodes == 1);
}

TEST_CASE("op profile: the CPU executor times every node of each profiled run", "[exec][profile]") {
  Model m = testing::TextModel(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[N, 4] x, float[N, 4] y) => (float[N, 4] out) {
      a = Add(x, y)
      b = Mul(a, a)
      out = Add(a, b)
    })",
                               {"a", "b", "out"});
  Tensor x(DataType::kFloat, {3, 4}), y(DataType::kFloat, {3, 4});
  for (int64_t i = 0; i < 12; ++i) {
    x.data<float>()[i] = static_cast<float>(i);
    y.data<float>()[i] = 1.0f;
  }
  OpProfile profile;
  RunOptions options;
  options.profile = &profile;
  for (int run = 0; run < 3; ++run) REQUIRE(Execute(m, {{"x", x}, {"y", y}}, options).ok());
  options.profile = nullptr;  // not profiled: not counted
  REQUIRE(Execute(m, {{"x", x}, {"y", y}}, options).ok());
  CHECK(profile.runs() == 3);
  const auto rows = profile.PerStep();
  REQUIRE(rows.size() == 2);
  int64_t add_nodes = 0, mul_nodes = 0;
  for (const OpTime& r : rows) {
    CHECK(r.ms >= 0.0);
    if (r.op == "Add") add_nodes = r.nodes;
    if (r.op == "Mul") mul_nodes = r.nodes;
  }
  CHECK(add_nodes == 2);
  CHECK(mul_nodes == 1);
}

}  // namespace
}  // namespace memopt

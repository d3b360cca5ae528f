#include "shape/fold_known_ifs.h"

#include <catch2/catch.hpp>

#include "exec/executor.h"
#include "io/model_loader.h"

namespace memopt {
namespace {

// The guard onnxscript's torch_lib puts around repeat/expand: If(Size(r) == 0).
constexpr const char* kGuarded = R"(
<ir_version: 8, opset_import: ["" : 17]>
main (float[2, 3] x) => (float[2, 3] y) {
  r = Constant <value = int64[2] {1, 1}> ()
  n = Size(r)
  zero = Constant <value = int64 {0}> ()
  empty = Equal(n, zero)
  y = If (empty) <
    then_branch = g1 () => (float[2, 3] out) { out = Identity(x) },
    else_branch = g2 () => (float[2, 3] out) { t = Tile(x, r) out = Relu(t) }
  >
}
)";

TEST_CASE("FoldKnownIfs: a shape-known condition takes its branch", "[shape][if]") {
  auto model = LoadModelFromText(kGuarded);
  INFO(model.status().message());
  REQUIRE(model.ok());
  CHECK(model->folded_ifs == 1);
  std::vector<std::string> ops;
  for (const Node& n : model->graph.nodes) ops.push_back(n.op_type);
  CHECK(ops == std::vector<std::string>{"Constant", "Size", "Constant", "Equal", "Tile", "Relu", "Identity"});
  Tensor x(DataType::kFloat, {2, 3});
  for (int64_t i = 0; i < 6; ++i) x.SetFromDouble(i, static_cast<double>(i) - 2.5);
  auto run = Execute(*model, {{"x", x}});
  INFO(run.status().message());
  REQUIRE(run.ok());
  CHECK(run->outputs.at("y").GetAsDouble(0) == 0.0);
  CHECK(run->outputs.at("y").GetAsDouble(5) == 2.5);
}

TEST_CASE("FoldKnownIfs: an unknown condition stays", "[shape][if]") {
  auto model = LoadModelFromText(R"(
<ir_version: 8, opset_import: ["" : 17]>
main (bool c, float[2] x) => (float[2] y) {
  y = If (c) <
    then_branch = g1 () => (float[2] out) { out = Identity(x) },
    else_branch = g2 () => (float[2] out) { out = Relu(x) }
  >
}
)");
  REQUIRE(model.ok());
  CHECK(model->folded_ifs == 0);
  REQUIRE(model->graph.nodes.size() == 1);
  CHECK(model->graph.nodes[0].op_type == "If");
}

}  // namespace
}  // namespace memopt

#include "plan/cost_model.h"

#include <catch2/catch.hpp>

#include "helpers/analysis_test_util.h"
#include "analysis/op_table.h"
#include "exec/kernel.h"

namespace memopt {
namespace {

TEST_CASE("cost model: every op of the extended table is costed and run by the CPU executor", "[plan][cost]") {
  // --ops extended promises deterministic ops the executor runs and the cost model knows
  // (configs/recompute_ops_extended.json); adding one without either fails here.
  Expected<OpTable> extra = OpTable::Parse(kExtendedOpTableJson, "extended");
  REQUIRE(extra.ok());
  REQUIRE(extra->size() > 0);
  for (const OpTable::OpEntry* e : extra->Entries()) {
    INFO(e->domain << "::" << e->op);
    CHECK(OpTable::Extended().Find(e->domain, e->op) != nullptr);
    CHECK(OpTable::Builtin().Find(e->domain, e->op) == nullptr);  // additions only: ORT's entries stay ORT's
    CHECK(CostModelKnows(e->op));
    const KernelInfo* kernel = KernelRegistry::Cpu().Find(e->domain, e->op);
    REQUIRE(kernel != nullptr);
    CHECK(kernel->is_random == nullptr);
  }
}

TEST_CASE("cost model: pooling and Relu by hand", "[plan][cost]") {
  Model m = testing::TextModel(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2, 3, 8, 8] x) => (float[2, 3, 4, 4] p, float[2, 3, 1, 1] q, float[2, 3, 8, 8] r) {
      p = MaxPool <kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]> (x)
      q = GlobalAveragePool (x)
      r = Relu (x)
    }
  )",
                               {"pool", "gap", "relu"});
  const DimBindings dims;
  // MaxPool: 2*3*4*4 = 96 outputs x 9 window elements; bytes: 384 floats in, 96 out.
  NodeCost pool = EstimateNodeCost(m.graph, m.graph.nodes[0], dims);
  CHECK(pool.flops == 96 * 9);
  CHECK(pool.bytes == (384 + 96) * 4);
  // GlobalAveragePool: every input element once.
  CHECK(EstimateNodeCost(m.graph, m.graph.nodes[1], dims).flops == 384);
  // Relu: one per output element.
  CHECK(EstimateNodeCost(m.graph, m.graph.nodes[2], dims).flops == 384);
}

}  // namespace
}  // namespace memopt

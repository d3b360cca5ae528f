// The split extension of the recompute rewrite (rewrite/rewrite_spec.h): a plan's backward readers
// in groups, each group with its own copy of the subgraph, named after ORT's clone.
#include "rewrite/rewrite_spec.h"

#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "analysis/op_table.h"
#include "helpers/plan_test_util.h"
#include "plan/plan_evaluator.h"
#include "test_data.h"

namespace memopt {
namespace {

TEST_CASE("rewrite spec: copies are named after ORT's clone", "[rewrite][split]") {
  CHECK(RecomputeName("a", 0) == "a_recompute");
  CHECK(RecomputeName("a", 1) == "a_recompute_2");
  CHECK(RecomputeName("x_1", 2) == "x_1_recompute_3");
}

TEST_CASE("rewrite spec: split plans give each group of readers its own clone", "[rewrite][split]") {
  testing::Scanned s = testing::ScanFile(testing::SourcePath("tests/data/plan/gpt2_tiny_2layer.onnx"), 1, "batch=2,seq_len=8");
  const RewriteSpecBuilder builder(s.model.graph, s.scan);
  Expected<PlanEvaluator> ev = PlanEvaluator::Create(s.model.graph, s.scan, s.dims);
  REQUIRE(ev.ok());
  const std::vector<int32_t>& position = s.scan.order.position;
  int split_plans = 0;
  for (size_t p = 0; p < s.scan.plans.size(); ++p) {
    const std::vector<NodeId>& readers = builder.Readers(p);
    if (readers.size() < 2 || !builder.Supported(p)) continue;
    ++split_plans;
    INFO("plan " << p << " " << s.scan.plans[p].cluster_id << ", " << readers.size() << " readers");
    // Readers are distinct backward nodes in execution order; splits index them from 1.
    for (size_t j = 1; j < readers.size(); ++j) CHECK(position[readers[j - 1]] < position[readers[j]]);
    CHECK(builder.SplitIndex(p, 0) == -1);
    CHECK(builder.SplitIndex(p, static_cast<int32_t>(readers.size())) == -1);
    std::vector<size_t> plans = {p};
    for (size_t j = 1; j < readers.size(); ++j) {
      const int64_t index = builder.SplitIndex(p, static_cast<int32_t>(j));
      REQUIRE(index >= 0);
      CHECK(builder.IsSplit(static_cast<size_t>(index)));
      CHECK(builder.BasePlan(static_cast<size_t>(index)) == p);
      CHECK(builder.SplitReader(static_cast<size_t>(index)) == static_cast<int32_t>(j));
      plans.push_back(static_cast<size_t>(index));
    }
    // Every reader its own group: the subgraph once per reader.
    Expected<RewriteSpec> spec = builder.Build(plans);
    REQUIRE(spec.ok());
    const std::vector<NodeId>& subgraph = s.scan.plans[p].subgraph;
    CHECK(spec->clones.size() == subgraph.size() * readers.size());
    std::map<NodeId, std::vector<int32_t>> copies;
    for (const CloneSpec& c : spec->clones) copies[c.original].push_back(c.copy);
    for (NodeId n : subgraph) {
      std::vector<int32_t> want(readers.size());
      for (size_t k = 0; k < want.size(); ++k) want[k] = static_cast<int32_t>(k);
      CHECK(copies[n] == want);
    }
    // Each reader reads a different clone of the entry's outputs.
    std::map<NodeId, std::set<ValueId>> read;
    for (const Rewire& r : spec->rewires) read[r.node].insert(r.value);
    std::set<ValueId> distinct;
    for (NodeId reader : readers) {
      REQUIRE(read.count(reader) == 1);
      for (ValueId v : read[reader]) CHECK(distinct.insert(v).second);
    }
    // The split alone implies its plan; the written graph is valid and its peak is the evaluator's.
    Expected<RewriteSpec> alone = builder.Build({plans.back()});
    REQUIRE(alone.ok());
    CHECK(alone->applied_plans == std::vector<size_t>{p});
    CHECK(alone->clones.size() == 2 * subgraph.size());
    PlanOutcome outcome = testing::Outcome(s, plans);
    testing::CheckRewriteInvariants(s.model.graph, s.scan, outcome);
    Expected<PlanEvaluation> e = ev->Evaluate(plans);
    REQUIRE(e.ok());
    CHECK(e->peak_bytes == outcome.peak.peak_bytes);
    CHECK(e->nodes_added == static_cast<int>(spec->clones.size()));
    CHECK(ev->CostOf(plans) == Approx(e->added_seconds));
    for (const CloneSpec& c : spec->clones) {
      const Graph& g = outcome.rewritten.graph;
      const ValueId out = c.outputs.front();
      if (out == kNone) continue;
      CHECK(g.value(out).name == RecomputeName(s.model.graph.value(s.model.graph.node(c.original).outputs.front()).name, c.copy));
    }
  }
  CHECK(split_plans > 0);
}

TEST_CASE("rewrite spec: a plan's splits share the first group with ORT's model", "[rewrite][split]") {
  // Without splits the spec is ORT's; a split adds copies and moves the later readers only.
  testing::Scanned s = testing::ScanFile(testing::SourcePath("tests/data/plan/gpt2_tiny_2layer.onnx"), 1, "batch=2,seq_len=8");
  const RewriteSpecBuilder builder(s.model.graph, s.scan);
  for (size_t p = 0; p < s.scan.plans.size(); ++p) {
    if (builder.Readers(p).size() < 2 || !builder.Supported(p)) continue;
    Expected<RewriteSpec> ort = builder.Build({p});
    Expected<RewriteSpec> split = builder.Build({static_cast<size_t>(builder.SplitIndex(p, 1))});
    REQUIRE(ort.ok());
    REQUIRE(split.ok());
    REQUIRE(split->clones.size() > ort->clones.size());
    for (size_t k = 0; k < ort->clones.size(); ++k) {
      CHECK(split->clones[k].original == ort->clones[k].original);
      CHECK(split->clones[k].copy == 0);
      CHECK(split->clones[k].inputs == ort->clones[k].inputs);
    }
    const NodeId first_reader = builder.Readers(p).front();
    for (const Rewire& r : split->rewires) {
      if (r.node == first_reader) CHECK(split->IsCloneValue(r.value));
    }
  }
}

TEST_CASE("rewrite spec: a keep leaves the first readers on the original; private chains copy what they read",
          "[rewrite][split]") {
  // tests/data/plan/convnet_residual_train.onnx: the stem conv2d -> BN -> relu, then the block
  // conv2d_1 -> BN_1 -> relu_1 -> conv2d_2 -> BN_2, added to relu. conv2d_2's backward readers
  // are its BatchNorm gradient's ReduceMean_3, Sub_4 and BatchNormalizationGrad_13; conv2d_1's
  // are BN_1's (the same three).
  testing::Scanned s = testing::ScanFile(testing::SourcePath("tests/data/plan/convnet_residual_train.onnx"), 1, "",
                                         &OpTable::Extended());
  const std::vector<size_t> plans = testing::Select(s, R"([
    "Conv+:1:-1", "Conv+@1/2.k0.p:0:0", "Conv+@2/k2:0:0",
    "BatchNormalization+Relu+:1:-1", "BatchNormalization+Relu+@0/p:0:0"])");
  const RewriteSpecBuilder builder(s.model.graph, s.scan);
  Expected<RewriteSpec> spec = builder.Build(plans);
  REQUIRE(spec.ok());
  const Graph& g = s.model.graph;
  const std::string bn = "node__native_batch_norm_legit_functional";
  std::map<std::string, int> copies;
  std::map<std::string, std::vector<std::string>> reads;  // clone name -> what its first input is
  for (const CloneSpec& c : spec->clones) {
    const std::string name = g.node(c.original).name;
    ++copies[name];
    const ValueId in = c.inputs.front();
    reads[RecomputeName(name, c.copy)].push_back(
        spec->IsCloneValue(in) ? RecomputeName(g.value(spec->clone_values[in - spec->num_original_values]).name, 0) + "*"
                               : g.value(in).name);
  }
  // conv2d_1 in two groups, each computing relu (and so conv2d) privately; relu's own group also
  // computes conv2d privately; conv2d's own clone serves its BatchNorm gradient.
  CHECK(copies == std::map<std::string, int>{{"node_conv2d", 4}, {bn + "__0", 3}, {"node_relu", 3},
                                             {"node_conv2d_1", 2}, {bn + "_1__0", 1}, {"node_relu_1", 1},
                                             {"node_conv2d_2", 1}});
  // keep(conv2d_1, 0): the clone of BN_1 (relu_1's plan) runs before conv2d_1's first backward
  // reader and reads the original.
  CHECK(reads[RecomputeName(bn + "_1__0", 0)] == std::vector<std::string>{"conv2d_1"});
  // Each copy of conv2d_1 and relu reads a copy of its own chain: no two clones read one clone.
  std::map<ValueId, int> readers_of_clone;
  for (const CloneSpec& c : spec->clones) {
    for (ValueId v : c.inputs) {
      if (v != kNone && spec->IsCloneValue(v)) ++readers_of_clone[v];
    }
  }
  for (const auto& [v, n] : readers_of_clone) CHECK(n == 1);
  // keep(conv2d_2, 2): ReduceMean_3 and Sub_4 read the original conv2d_2, BatchNormalizationGrad_13 its clone.
  std::set<std::string> rewired;
  for (const Rewire& r : spec->rewires) rewired.insert(g.node(r.node).name);
  CHECK_FALSE(rewired.count(bn + "_2__0_Grad/ReduceMean_3"));
  CHECK_FALSE(rewired.count(bn + "_2__0_Grad/Sub_4"));
  CHECK(rewired.count(bn + "_2__0_Grad/BatchNormalizationGrad_13"));
  CHECK(rewired.count(bn + "_1__0_Grad/ReduceMean_3"));  // conv2d_1: its first group
  // The written graph, its predicted peak and cost are the evaluator's.
  Expected<PlanEvaluator> ev = PlanEvaluator::Create(g, s.scan, s.dims);
  REQUIRE(ev.ok());
  PlanOutcome outcome = testing::Outcome(s, plans);
  testing::CheckRewriteInvariants(g, s.scan, outcome);
  Expected<PlanEvaluation> e = ev->Evaluate(plans);
  REQUIRE(e.ok());
  CHECK(e->peak_bytes == outcome.peak.peak_bytes);
  CHECK(e->nodes_added == 15);
  CHECK(ev->CostOf(plans) == Approx(e->added_seconds));
}

}  // namespace
}  // namespace memopt

namespace memopt {
namespace {

TEST_CASE("rewrite spec: which nodes a clone recomputes identically", "[rewrite][spec]") {
  Model m = testing::TextModel(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[4] x) => (float[4] y) {
  a = Relu(x)
  b = RandomNormalLike(a)
  c = RandomNormalLike <seed = 1.0> (a)
  d, mask = Dropout(x)
  e = Bernoulli(a)
  y = Add(a, b)
})", {"a", "b", "c", "d", "e", "y"});
  const auto node = [&](const std::string& name) { return *testing::FindNode(m.graph, name); };
  CHECK(RecomputesIdentically(node("a")));
  CHECK_FALSE(RecomputesIdentically(node("b")));  // unseeded: other numbers
  CHECK(RecomputesIdentically(node("c")));        // its own seed
  CHECK(RecomputesIdentically(node("d")));        // the rewrite seeds Dropout
  CHECK_FALSE(RecomputesIdentically(node("e")));
}

}  // namespace
}  // namespace memopt

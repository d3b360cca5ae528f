#include "shape/lower_sequences.h"

#include <catch2/catch.hpp>

#include "exec/executor.h"
#include "grad/grad_check_util.h"
#include "io/model_loader.h"

namespace memopt {
namespace {

std::vector<std::string> Ops(const Model& m) {
  std::vector<std::string> ops;
  for (const Node& n : m.graph.nodes) ops.push_back(n.op_type);
  return ops;
}

/// x = [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
Tensor Iota25() {
  Tensor x(DataType::kFloat, {2, 5});
  for (int64_t i = 0; i < 10; ++i) x.SetFromDouble(i, static_cast<double>(i));
  return x;
}

std::vector<double> Values(const Tensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.GetAsDouble(i));
  return out;
}

// torch.split(x, 2, dim=1) as the dynamo exporter writes it: pieces of 2, 2 and 1 columns.
TEST_CASE("LowerSequences: SplitToSequence + SequenceAt + SequenceLength + ConcatFromSequence", "[shape][sequence]") {
  auto model = LoadModelFromText(R"(
<ir_version: 8, opset_import: ["" : 17]>
main (float[2, 5] x) => (float[2, 1] last, float[2, 2] first, int64 n, float[2, 5] again, float[2, 2] twice) {
  two = Constant <value = int64 {2}> ()
  s = SplitToSequence <axis = 1> (x, two)
  minus_one = Constant <value = int64 {-1}> ()
  zero = Constant <value = int64 {0}> ()
  last = SequenceAt(s, minus_one)
  first = SequenceAt(s, zero)
  n = SequenceLength(s)
  again = ConcatFromSequence <axis = 1> (s)
  f2 = Add(first, first)
  twice = Identity(f2)
}
)");
  INFO(model.status().message());
  REQUIRE(model.ok());
  CHECK(model->lowered_sequence_ops == 5);
  CHECK(model->warnings.empty());
  for (const std::string& op : Ops(*model)) CHECK(op.find("Sequence") == std::string::npos);
  auto run = Execute(*model, {{"x", Iota25()}});
  INFO(run.status().message());
  REQUIRE(run.ok());
  CHECK(Values(run->outputs.at("last")) == std::vector<double>{4, 9});
  CHECK(Values(run->outputs.at("first")) == std::vector<double>{0, 1, 5, 6});
  CHECK(run->outputs.at("n").GetAsDouble(0) == 3);
  CHECK(run->outputs.at("n").shape().empty());
  CHECK(Values(run->outputs.at("again")) == Values(Iota25()));
  CHECK(Values(run->outputs.at("twice")) == std::vector<double>{0, 2, 10, 12});
  // SequenceAt's result is the piece itself: consumers read the Split's output, no copy.
  int identities = 0;
  for (const Node& n : model->graph.nodes) identities += n.op_type == "Identity";
  CHECK(identities == 3);  // last, first (graph outputs) and the graph's own
}

// Opset 12 takes Split's sizes and Unsqueeze's axes as attributes; unbind (no split, keepdims=0)
// squeezes each piece; stack (new_axis=1) unsqueezes each.
TEST_CASE("LowerSequences: unbind and stack at opset 12", "[shape][sequence]") {
  auto model = LoadModelFromText(R"(
<ir_version: 7, opset_import: ["" : 12]>
main (float[2, 5] x) => (float[2] col3, float[5, 2] stacked) {
  s = SplitToSequence <axis = -1, keepdims = 0> (x)
  three = Constant <value = int64 {3}> ()
  col3 = SequenceAt(s, three)
  stacked = ConcatFromSequence <axis = 0, new_axis = 1> (s)
}
)");
  INFO(model.status().message());
  REQUIRE(model.ok());
  CHECK(model->lowered_sequence_ops == 3);
  for (const Node& n : model->graph.nodes) {
    CHECK(n.op_type.find("Sequence") == std::string::npos);
    if (n.op_type == "Split") CHECK(n.GetInts("split") == std::vector<int64_t>{1, 1, 1, 1, 1});
    if (n.op_type == "Squeeze" || n.op_type == "Unsqueeze") CHECK(n.inputs.size() == 1);
  }
  auto run = Execute(*model, {{"x", Iota25()}});
  INFO(run.status().message());
  REQUIRE(run.ok());
  CHECK(Values(run->outputs.at("col3")) == std::vector<double>{3, 8});
  CHECK(run->outputs.at("stacked").shape() == std::vector<int64_t>{5, 2});
  CHECK(Values(run->outputs.at("stacked")) == std::vector<double>{0, 5, 1, 6, 2, 7, 3, 8, 4, 9});
}

TEST_CASE("LowerSequences: lists built by SequenceEmpty, Construct, Insert and Erase", "[shape][sequence]") {
  auto model = LoadModelFromText(R"(
<ir_version: 8, opset_import: ["" : 17]>
main (float[2] a, float[2] b, float[2] c) => (float[3, 2] out, int64 n) {
  e = SequenceEmpty <dtype = 1> ()
  s1 = SequenceInsert(e, a)
  s2 = SequenceInsert(s1, b)
  zero = Constant <value = int64 {0}> ()
  s3 = SequenceInsert(s2, c, zero)
  s4 = SequenceConstruct(a, b, c)
  one = Constant <value = int64 {1}> ()
  s5 = SequenceErase(s4, one)
  n = SequenceLength(s5)
  out = ConcatFromSequence <axis = 0, new_axis = 1> (s3)
}
)");
  INFO(model.status().message());
  REQUIRE(model.ok());
  CHECK(model->lowered_sequence_ops == 8);
  Tensor a(DataType::kFloat, {2}), b(DataType::kFloat, {2}), c(DataType::kFloat, {2});
  for (int64_t i = 0; i < 2; ++i) {
    a.SetFromDouble(i, 1 + i);
    b.SetFromDouble(i, 3 + i);
    c.SetFromDouble(i, 5 + i);
  }
  auto run = Execute(*model, {{"a", a}, {"b", b}, {"c", c}});
  INFO(run.status().message());
  REQUIRE(run.ok());
  CHECK(Values(run->outputs.at("out")) == std::vector<double>{5, 6, 1, 2, 3, 4});  // [c, a, b]
  CHECK(run->outputs.at("n").GetAsDouble(0) == 2);
}

TEST_CASE("LowerSequences: sequences of unknown length stay, with a warning naming the node", "[shape][sequence]") {
  auto model = LoadModelFromText(R"(
<ir_version: 8, opset_import: ["" : 17]>
main (float[batch, 4] x, int64 i) => (float[1, 4] y, float[2, 2] z) {
  s = SplitToSequence <axis = 0, keepdims = 1> (x)
  y = SequenceAt(s, i)
  w = Constant <value = float[2, 4] {0, 1, 2, 3, 4, 5, 6, 7}> ()
  two = Constant <value = int64 {2}> ()
  t = SplitToSequence <axis = 1> (w, two)
  z = SequenceAt(t, i)
}
)");
  INFO(model.status().message());
  REQUIRE(model.ok());
  CHECK(model->lowered_sequence_ops == 0);
  REQUIRE(model->warnings.size() == 1);  // one warning for all, the first three with their reasons
  const std::string& w = model->warnings[0];
  INFO(w);
  CHECK(w.rfind("4 sequence op(s) left as they are: 'SplitToSequence#0' (SplitToSequence) (the length of axis 0 "
                "is the symbolic dim batch)", 0) == 0);
  CHECK(w.find("(SequenceAt) (the position is not known on load)") != std::string::npos);
  // The second split alone could be lowered, but its SequenceAt's position is an input.
  CHECK(w.find("(SequenceAt) cannot be lowered)") != std::string::npos);
  CHECK(w.find("... (1 more)") != std::string::npos);
  CHECK(w.find("the executors and grad cannot run the rest") != std::string::npos);
}

// Gradients flow through the lowered ops (Split, Concat, Squeeze, Unsqueeze), by finite differences.
TEST_CASE("LowerSequences: gradients through split and stack", "[shape][sequence][grad]") {
  testing::GradCheck c;
  c.text = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (double[2, 6] x) => (double[3, 2, 2] y) {
  two = Constant <value = int64 {2}> ()
  s = SplitToSequence <axis = 1> (x, two)
  one = Constant <value = int64 {1}> ()
  mid = SequenceAt(s, one)
  m = Tanh(mid)
  t = SequenceInsert(s, m, one)
  r = SequenceErase(t)
  y = ConcatFromSequence <axis = 0, new_axis = 1> (r)
}
)";
  c.options.trainable = "^x$";
  testing::RunGradCheck(c);
}

TEST_CASE("LowerSequences: erasing from an empty sequence is left, not lowered", "[shape][sequence]") {
  auto model = LoadModelFromText(R"(
<ir_version: 8, opset_import: ["" : 17]>
main (float[2] a) => (int64 n) {
  e = SequenceEmpty <dtype = 1> ()
  f = SequenceErase(e)
  n = SequenceLength(f)
}
)");
  INFO(model.status().message());
  REQUIRE(model.ok());
  CHECK(model->lowered_sequence_ops == 0);
  REQUIRE(model->warnings.size() == 1);
  CHECK(model->warnings[0].find("it erases from an empty sequence") != std::string::npos);
}

}  // namespace
}  // namespace memopt

// The training-graph layout, naming and selection rules of BuildGradientGraph, its errors, and
// the real forward models of the shared data folder.
#include "grad/grad_builder.h"

#include <algorithm>

#include "analysis/scan.h"
#include "grad/grad_check_util.h"
#include "grad/grad_selection.h"
#include "ir/topo_order.h"
#include "test_data.h"

namespace memopt {
namespace {

using testing::CountOps;

Model Text(const std::string& text) {
  auto m = LoadModelFromText(text);
  INFO(m.status().message());
  REQUIRE(m.ok());
  return std::move(m).value();
}

GradResult Build(const std::string& text, const GradOptions& options = {}) {
  auto r = BuildGradientGraph(Text(text), options);
  INFO(r.status().message());
  REQUIRE(r.ok());
  return std::move(r).value();
}

const Node* FindNode(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

std::vector<std::string> OutputNames(const Graph& g) {
  std::vector<std::string> out;
  for (ValueId v : g.outputs) out.push_back(g.value(v).name);
  return out;
}

constexpr const char* kMlp = R"(<ir_version: 8, opset_import: ["" : 17]>
  mlp (float[4, 3] x, int64[4] label) => (float loss, float[4, 2] logits)
  <float[3, 5] w1 = {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15}, float[5] b1 = {1,2,3,4,5},
   float[5, 2] w2 = {1,2,3,4,5,6,7,8,9,10}, float[2] b2 = {1, 2}> {
    h = MatMul(x, w1)
    hb = Add(h, b1)
    r = Relu(hb)
    o = MatMul(r, w2)
    logits = Add(o, b2)
    loss = SoftmaxCrossEntropyLoss(logits, label)
  })";

TEST_CASE("grad: ORTModule layout, names and outputs", "[grad]") {
  GradResult r = Build(kMlp);
  const Graph& g = r.model.graph;
  CHECK(r.loss == "loss");
  CHECK(r.gradients == std::vector<std::string>{"w1", "b1", "w2", "b2"});
  CHECK(OutputNames(g) == std::vector<std::string>{"loss", "w1_grad", "b1_grad", "w2_grad", "b2_grad"});
  // One YieldOp between forward and backward, with ORT's attributes.
  REQUIRE(CountOps(r, "YieldOp") == 1);
  const Node& yield = g.node(r.yield_node);
  CHECK(yield.domain == "com.microsoft");
  CHECK(yield.name == "YieldOp");
  CHECK(g.value(yield.inputs[0]).name == "loss");
  CHECK(g.value(yield.inputs[1]).name == "logits");
  REQUIRE(yield.outputs.size() == 1);
  CHECK(g.value(yield.outputs[0]).name == "loss_grad");
  CHECK(yield.GetInts("full_shape_outputs") == std::vector<int64_t>{0});
  CHECK(yield.GetInts("non_differentiable_outputs") == std::vector<int64_t>{1});
  // Forward nodes keep their order, the backward nodes follow.
  CHECK(r.forward_nodes == 6);
  CHECK(r.yield_node == 6);
  for (int i = 0; i < r.yield_node; ++i) CHECK(g.node(i).name.find("_Grad/") == std::string::npos);
  for (int i = r.yield_node + 1; i < static_cast<int>(g.nodes.size()); ++i) {
    const Node& n = g.node(i);
    const bool named = n.name.find("_Grad/") != std::string::npos || n.name.rfind("AccumulateGrad_", 0) == 0 ||
                       n.name.find("Constant_Type") != std::string::npos;
    CHECK(named);
  }
  // Gradient ops ORT uses; SoftmaxCrossEntropyLoss got its log_prob output.
  CHECK(CountOps(r, "SoftmaxCrossEntropyLossGrad") == 1);
  CHECK(CountOps(r, "ReluGrad") == 1);
  CHECK(g.FindValue("logits_log_prob") != kNone);
  // The relu output gradient is named after its tensor; the node after the forward node.
  CHECK(g.value(g.FindValue("r_grad")).producer != kNone);
  CHECK(std::any_of(g.nodes.begin(), g.nodes.end(),
                    [](const Node& n) { return n.name.rfind("Relu_2_Grad/", 0) == 0; }));
  // No gradient flows to the integer label or the graph input x.
  CHECK(g.FindValue("label_grad") == kNone);
  CHECK(g.FindValue("x_grad") == kNone);
}

TEST_CASE("grad: outputs without a scalar loss get incoming gradients", "[grad]") {
  GradResult r = Build(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[4, 3] x) => (float[4, 5] y, float[4, 5] z, int64[2] s) <float[3, 5] w = {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15}> {
      y = MatMul(x, w)
      z = Tanh(y)
      s = Shape(z)
    })");
  const Graph& g = r.model.graph;
  CHECK(r.loss.empty());
  CHECK(r.seeded_outputs == std::vector<std::string>{"y", "z"});
  CHECK(OutputNames(g) == std::vector<std::string>{"w_grad"});
  const Node& yield = g.node(r.yield_node);
  REQUIRE(yield.outputs.size() == 2);
  // y is also consumed inside the graph: its incoming gradient is y_grad_external, added to the
  // internal one (ORTModule's naming), and it is not a full-shape output.
  CHECK(g.value(yield.outputs[0]).name == "y_grad_external");
  CHECK(g.value(yield.outputs[1]).name == "z_grad");
  CHECK(yield.GetInts("full_shape_outputs") == std::vector<int64_t>{1});
  CHECK(yield.GetInts("non_differentiable_outputs") == std::vector<int64_t>{2});
  REQUIRE(FindNode(g, "y_grad_add") != nullptr);
  CHECK(g.value(FindNode(g, "y_grad_add")->outputs[0]).name == "y_grad_add_output");
}

TEST_CASE("grad: --loss, --trainable, --frozen", "[grad]") {
  GradOptions o;
  o.frozen = "^w";
  GradResult r = Build(kMlp, o);
  CHECK(r.gradients == std::vector<std::string>{"b1", "b2"});
  o = {};
  o.trainable = "b";
  o.frozen = "2";
  r = Build(kMlp, o);
  CHECK(r.gradients == std::vector<std::string>{"b1"});
  o = {};
  o.trainable = "^(x|w2)$";
  r = Build(kMlp, o);
  CHECK(r.gradients == std::vector<std::string>{"x", "w2"});
  o = {};
  o.loss = "logits";
  r = Build(kMlp, o);
  CHECK(r.loss == "logits");
  CHECK(OutputNames(r.model.graph).front() == "logits");
  CHECK(CountOps(r, "SoftmaxCrossEntropyLossGrad") == 0);
}

TEST_CASE("grad: errors name the problem", "[grad]") {
  GradOptions o;
  o.loss = "los";
  auto r = BuildGradientGraph(Text(kMlp), o);
  CHECK(r.status().code() == ErrorCode::kUsage);
  CHECK(r.status().message() == "--loss 'los' is not a graph output (outputs: loss, logits); did you mean 'loss'?");
  o = {};
  o.trainable = "(";
  CHECK(BuildGradientGraph(Text(kMlp), o).status().code() == ErrorCode::kUsage);
  o = {};
  o.frozen = ".";
  CHECK(BuildGradientGraph(Text(kMlp), o).status().message() == "--trainable/--frozen leave no trainable tensor");

  auto unsupported = BuildGradientGraph(Text(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[4, 3] x) => (float y) <float[3] w = {1, 2, 3}> {
      a = Mul(x, w)
      b = Atan(a)
      c = HardSwish(b)
      y = ReduceSum(c)
    })"));
  CHECK(unsupported.status().code() == ErrorCode::kUnsupported);
  CHECK(unsupported.status().message().rfind("no gradient rule for Atan (node 'Atan#1'), HardSwish (node 'HardSwish#2');",
                                             0) == 0);

  auto two_losses = BuildGradientGraph(Text(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[3] x) => (float a, float b) <float[3] w = {1, 2, 3}> {
      m = Mul(x, w)
      a = ReduceSum(m)
      b = ReduceMax(m)
    })"));
  CHECK(two_losses.status().message() ==
        "the model has several scalar float outputs ('a', 'b'); choose the loss with --loss");

  GradResult once = Build(kMlp);
  auto twice = BuildGradientGraph(once.model);
  CHECK(twice.status().message().find("already has a backward pass") != std::string::npos);
}

TEST_CASE("grad: a trainable tensor read inside an If or Loop puts that op on the gradient path", "[grad]") {
  // w is read only inside the subgraphs: the error names the op without a gradient rule (it used
  // to say that the loss depends on no trainable tensor).
  auto with_if = BuildGradientGraph(Text(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[2, 3] x, bool c) => (float loss) <float[3] w = {1, 2, 3}> {
      y = If(c) <then_branch = then_g () => (float[2, 3] t) { t = Mul(x, w) },
                 else_branch = else_g () => (float[2, 3] e) { e = Identity(x) }>
      loss = ReduceSum<keepdims = 0>(y)
    })"));
  INFO(with_if.status().message());
  CHECK(with_if.status().code() == ErrorCode::kUnsupported);
  CHECK(with_if.status().message().rfind("no gradient rule for If (node 'If#0');", 0) == 0);

  // A Loop whose body reads w through a nested If.
  auto with_loop = BuildGradientGraph(Text(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[3] x, int64 n, bool c) => (float loss) <float[3] w = {1, 2, 3}> {
      v = Loop(n, c, x) <body = body_g (int64 i, bool ci, float[3] vi) => (bool co, float[3] vo) {
        co = Identity(ci)
        vo = If(ci) <then_branch = t_g () => (float[3] t) { t = Mul(vi, w) },
                     else_branch = e_g () => (float[3] e) { e = Identity(vi) }>
      }>
      loss = ReduceSum<keepdims = 0>(v)
    })"));
  INFO(with_loop.status().message());
  CHECK(with_loop.status().code() == ErrorCode::kUnsupported);
  CHECK(with_loop.status().message().rfind("no gradient rule for Loop (node 'Loop#0');", 0) == 0);

  // Freezing w takes the If off the path: then nothing is trainable.
  GradOptions frozen;
  frozen.frozen = "^w$";
  auto none = BuildGradientGraph(Text(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[2, 3] x, bool c) => (float loss) <float[3] w = {1, 2, 3}, float[3] u = {1, 1, 1}> {
      y = If(c) <then_branch = then_g () => (float[2, 3] t) { t = Mul(x, w) },
                 else_branch = else_g () => (float[2, 3] e) { e = Identity(x) }>
      z = Mul(y, u)
      loss = ReduceSum<keepdims = 0>(z)
    })"),
                                   frozen);
  INFO(none.status().message());
  REQUIRE(none.ok());
  CHECK(none->gradients == std::vector<std::string>{"u"});
}

TEST_CASE("grad: sequence values on the path put their ops on it (no silent missing gradient)", "[grad]") {
  // torch.onnx's dynamo export of nn.GRU / unbind: a tensor split into a sequence, items read back
  // with SequenceAt. Sequence values have no tensor type; the path through them used to end
  // there, and grad exited 0 saying w and v "do not affect the differentiated outputs".
  // Sequences of known length are lowered to tensor ops on load (shape/lower_sequences.h); this
  // one splits along a symbolic dim, so it stays.
  const std::string text = R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[N, 3] x) => (float loss) <float[3] w = {1, 2, 3}, float[3] v = {1, 1, 1}, int64 zero = {0}> {
      a = Mul(x, w)
      s = SplitToSequence <axis = 0, keepdims = 0> (a)
      h = SequenceAt(s, zero)
      b = Mul(h, v)
      loss = ReduceSum <keepdims = 0> (b)
    })";
  auto split = BuildGradientGraph(Text(text));
  INFO(split.status().message());
  CHECK(split.status().code() == ErrorCode::kUnsupported);
  CHECK(split.status().message().rfind(
            "no gradient rule for SequenceAt (node 'SequenceAt#2'), SplitToSequence (node 'SplitToSequence#1');", 0) == 0);
  std::string known = text;
  known.replace(known.find("float[N, 3]"), 11, "float[2, 3]");
  auto lowered = BuildGradientGraph(Text(known));
  INFO(lowered.status().message());
  REQUIRE(lowered.ok());
  CHECK(lowered->gradients == std::vector<std::string>{"w", "v"});

  // An optional and an op with neither a shape rule nor a declared type: the same.
  auto optional = BuildGradientGraph(Text(R"(<ir_version: 8, opset_import: ["" : 18]>
    g (float[3] x) => (float loss) <float[3] w = {1, 2, 3}> {
      a = Mul(x, w)
      o = Optional(a)
      h = OptionalGetElement(o)
      loss = ReduceSum <keepdims = 0> (h)
    })"));
  INFO(optional.status().message());
  CHECK(optional.status().code() == ErrorCode::kUnsupported);
  CHECK(optional.status().message().find("Optional (node 'Optional#1')") != std::string::npos);
}

TEST_CASE("grad: tensors that reach the loss only through integer values are reported as such", "[grad]") {
  GradResult r = Build(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[3] x) => (float y) <float[3] w = {1, 2, 3}, float[3] q = {1, 2, 3}, float[3] unused = {1, 2, 3}> {
      n = Cast <to = 7> (q)
      f = Cast <to = 1> (n)
      m = Mul(x, w)
      p = Mul(m, f)
      y = ReduceSum <keepdims = 0> (p)
    })");
  CHECK(r.gradients == std::vector<std::string>{"w"});
  CHECK(r.unused_trainable == std::vector<std::string>{"unused"});
  CHECK(r.nondifferentiable_trainable == std::vector<std::string>{"q"});
}

TEST_CASE("grad: SubgraphOuterInputs lists what subgraphs read from outside, at any depth", "[grad]") {
  Model m = Text(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[3] x, int64 n, bool c) => (float[3] v) <float[3] w = {1, 2, 3}, float[3] u = {1, 1, 1}> {
      k = Identity(u)
      v = Loop(n, c, x) <body = body_g (int64 i, bool ci, float[3] vi) => (bool co, float[3] vo) {
        co = Identity(ci)
        inner = Add(vi, k)
        vo = If(ci) <then_branch = t_g () => (float[3] t) { t = Mul(inner, w) },
                     else_branch = e_g () => (float[3] e) { e = Identity(vi) }>
      }>
    })");
  const Graph& g = m.graph;
  std::vector<std::string> names;
  for (ValueId v : grad::SubgraphOuterInputs(g, g.nodes[1])) names.push_back(g.value(v).name);
  CHECK(names == std::vector<std::string>{"k", "w"});  // not the body's own i, ci, vi, inner
  CHECK(grad::SubgraphOuterInputs(g, g.nodes[0]).empty());
  // The Loop is ordered after the producer of k although k is no explicit input.
  auto order = TopologicalOrder(g);
  REQUIRE(order.ok());
  CHECK(*order == std::vector<NodeId>{0, 1});
}

TEST_CASE("grad: shape subgraphs and integer paths get no gradient nodes", "[grad]") {
  GradResult r = Build(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[2, 3, 4] x) => (float y) <float[4] w = {1, 2, 3, 4}> {
      a = Mul(x, w)
      s = Shape(a)
      i = Constant <value = int64[1] {0}> ()
      d = Gather(s, i)
      f = Cast <to = 1> (d)
      n = Cast <to = 6> (a)
      m = Cast <to = 1> (n)
      q = Mul(a, m)
      k = Div(q, f)
      y = ReduceSum <keepdims = 0> (k)
    })");
  const Graph& g = r.model.graph;
  for (const char* forward : {"Shape_1", "Gather_3", "Cast_4", "Cast_5", "Cast_6"}) {
    INFO(forward);
    for (const Node& n : g.nodes) CHECK(n.name.rfind(std::string(forward) + "_Grad/", 0) != 0);
  }
  CHECK(g.FindValue("f_grad") == kNone);
  CHECK(g.FindValue("m_grad") == kNone);
  CHECK(g.FindValue("a_grad") != kNone);
}

TEST_CASE("grad: unused trainable tensors are reported, not differentiated", "[grad]") {
  GradResult r = Build(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[3] x) => (float y) <float[3] w = {1, 2, 3}, float[3] unused = {1, 2, 3}> {
      m = Mul(x, w)
      y = ReduceSum <keepdims = 0> (m)
    })");
  CHECK(r.gradients == std::vector<std::string>{"w"});
  CHECK(r.unused_trainable == std::vector<std::string>{"unused"});
}

TEST_CASE("grad: shapes of symbolic forward tensors are taken in the forward section", "[grad]") {
  GradResult r = Build(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[batch, 3] x) => (float[batch, 6] y) <float[3] w = {1, 2, 3}> {
      a = Mul(x, w)
      two = Constant <value = int64[2] {-1, 6}> ()
      s = Shape(x)
      y = Reshape(a, two)
    })");
  const Graph& g = r.model.graph;
  int shape_nodes_in_forward = 0;
  for (int i = 0; i < r.yield_node; ++i) {
    const Node& n = g.node(i);
    if (n.op_type == "Shape" && n.name.find("_Grad/") != std::string::npos) {
      ++shape_nodes_in_forward;
      CHECK(g.value(n.inputs[0]).name == "a");
    }
  }
  CHECK(shape_nodes_in_forward == 1);
  // The stashed activations are what the gradients need: `a` only through its shape.
  auto scan = Scan(g, ScanOptions{});
  INFO(scan.status().message());
  REQUIRE(scan.ok());
}

TEST_CASE("grad: real forward models", "[grad][data]") {
  for (const char* file : {"forward/bert_toy_optimized.onnx", "forward/gpt2_megatron.onnx"}) {
    auto path = testing::SharedData(file);
    if (!path) return;
    INFO(file);
    auto model = LoadModel(*path);
    REQUIRE(model.ok());
    auto r = BuildGradientGraph(*model);
    INFO(r.status().message());
    REQUIRE(r.ok());
    CHECK(r->loss.empty());
    CHECK(r->backward_nodes > 100);
    CHECK(r->unused_trainable.empty());
    auto scan = Scan(r->model.graph, ScanOptions{});
    INFO(scan.status().message());
    CHECK(scan.ok());
  }
}

}  // namespace
}  // namespace memopt

// PyTorch's parameters come back from what the exporter's optimizer did to them: a Linear weight
// folded into its transpose, parameters merged by value, a training-mode BatchNorm written in
// inference mode; a batch norm folded into its Conv is an error. Values checked by hand.
#include "grad/torch_parameters.h"

#include <catch2/catch.hpp>
#include <onnx/defs/parser.h>

#include "exec/executor.h"
#include "exec/initializer_reader.h"
#include "grad/grad_builder.h"

namespace memopt {
namespace {

using grad::ParseFxNode;
using grad::ParseGraphSignature;
using grad::RestoreTorchParameters;

void AddMetadata(google::protobuf::Message* message, int field, const std::string& key, const std::string& value) {
  onnx::StringStringEntryProto entry;
  entry.set_key(key);
  entry.set_value(value);
  message->GetReflection()->MutableUnknownFields(message)->AddLengthDelimited(field, entry.SerializeAsString());
}

/// "a__b" -> "a.b": the text syntax has no dots in names, PyTorch's names do.
std::string Dotted(std::string name) {
  for (size_t at = name.find("__"); at != std::string::npos; at = name.find("__", at)) name.replace(at, 2, ".");
  return name;
}

void DotNames(onnx::GraphProto& g) {
  for (auto& t : *g.mutable_initializer()) t.set_name(Dotted(t.name()));
  for (auto& n : *g.mutable_node()) {
    for (auto& i : *n.mutable_input()) i = Dotted(i);
    for (auto& o : *n.mutable_output()) o = Dotted(o);
  }
}

/// The model of `text` (names with "__" for "."), with the graph signature `signature` and node i's fx_node `fx[i]`.
Model Exported(const std::string& text, const std::string& signature, const std::vector<std::string>& fx) {
  onnx::ModelProto proto;
  onnx::OnnxParser parser(text.c_str());
  const auto status = parser.Parse(proto);
  INFO(status.ErrorMessage());
  REQUIRE(status.IsOK());
  REQUIRE(proto.graph().node_size() == static_cast<int>(fx.size()));
  DotNames(*proto.mutable_graph());
  AddMetadata(proto.mutable_graph(), 16, "pkg.torch.export.ExportedProgram.graph_signature", signature);
  for (size_t i = 0; i < fx.size(); ++i) {
    if (!fx[i].empty()) AddMetadata(proto.mutable_graph()->mutable_node(static_cast<int>(i)), 9, "pkg.torch.onnx.fx_node", fx[i]);
  }
  auto m = ModelFromProto(proto);
  INFO(m.status().message());
  REQUIRE(m.ok());
  return std::move(m).value();
}

std::vector<float> Values(const Model& m, const std::string& name) {
  const ValueId v = m.graph.FindValue(name);
  REQUIRE(v != kNone);
  InitializerReader reader(m);
  auto t = reader.Read(v);
  INFO(t.status().message());
  REQUIRE(t.ok());
  return std::vector<float>(t->data<float>(), t->data<float>() + t->numel());
}

constexpr const char* kSignature = R"(
# inputs
p_fc_weight: PARAMETER target='fc.weight'
p_ln0_weight: PARAMETER target='ln0.weight'
p_ln1_weight: PARAMETER target='ln1.weight'
b_ln0_stat: BUFFER target='ln0.stat' persistent=True
x: USER_INPUT

# outputs
sum_1: USER_OUTPUT
)";

TEST_CASE("torch parameters: the graph signature and fx calls parse", "[grad][torch_parameters]") {
  const auto sig = ParseGraphSignature(kSignature);
  REQUIRE(sig.size() == 5);
  CHECK(sig[0].first == "p_fc_weight");
  CHECK(sig[0].second == std::make_pair(std::string("PARAMETER"), std::string("fc.weight")));
  CHECK(sig[3].second.first == "BUFFER");
  CHECK(sig[4].second == std::make_pair(std::string("USER_INPUT"), std::string()));
  CHECK(ParseGraphSignature("").empty());

  const auto call = ParseFxNode(
      "%linear : [num_users=1] = call_function[target=torch.ops.aten.linear.default](args = (%x, "
      "%p_fc_weight), kwargs = {})");
  CHECK(call.target == "aten.linear.default");
  CHECK(call.args == std::vector<std::string>{"%x", "%p_fc_weight"});
  const auto nested = ParseFxNode(
      "%ln : [num_users=1] = call_function[target=torch.ops.aten.layer_norm.default](args = (%x, [4, 2], "
      "%p_w, (1, 2)), kwargs = {})");
  CHECK(nested.args == std::vector<std::string>{"%x", "[4, 2]", "%p_w", "(1, 2)"});
  CHECK(ParseFxNode("no call here").target.empty());
}

// y = x @ fc.weight^T (folded into val_3), LayerNorms ln0 and ln1 reading one merged scale.
constexpr const char* kFolded = R"(<ir_version: 10, opset_import: ["" : 18]>
  g (float[1, 3] x) => (float s)
  <float[3, 2] val_3 = {1, 2, 3, 4, 5, 6}, float[2] ln0__weight = {1, 1}> {
    y = MatMul(x, val_3)
    a = LayerNormalization<axis = -1>(y, ln0__weight)
    b = LayerNormalization<axis = -1>(a, ln0__weight)
    s = ReduceSum<keepdims = 0>(b)
  })";

const std::vector<std::string> kFoldedFx = {
    "%linear : [num_users=1] = call_function[target=torch.ops.aten.linear.default](args = (%x, %p_fc_weight), kwargs = {})",
    "%ln0 : [num_users=1] = call_function[target=torch.ops.aten.layer_norm.default](args = (%linear, [2], %p_ln0_weight), kwargs = {})",
    "%ln1 : [num_users=1] = call_function[target=torch.ops.aten.layer_norm.default](args = (%ln0, [2], %p_ln1_weight), kwargs = {})",
    "",
};

TEST_CASE("torch parameters: a folded Linear transpose and merged scales come back by name",
          "[grad][torch_parameters]") {
  Model m = Exported(kFolded, kSignature, kFoldedFx);
  auto stats = RestoreTorchParameters(m);
  INFO(stats.status().message());
  REQUIRE(stats.ok());
  CHECK(stats->has_signature);
  CHECK(stats->restored_transposes == 1);
  CHECK(stats->split_merged == 1);
  CHECK(stats->parameters == std::vector<std::string>{"fc.weight", "ln0.weight", "ln1.weight"});
  CHECK(stats->buffers == std::vector<std::string>{"ln0.stat"});
  CHECK(stats->unrecoverable.empty());
  // fc.weight is val_3 transposed: [[1, 3, 5], [2, 4, 6]]; val_3 is now Transpose(fc.weight).
  CHECK(Values(m, "fc.weight") == std::vector<float>{1, 3, 5, 2, 4, 6});
  const Value& folded = m.graph.value(m.graph.FindValue("val_3"));
  CHECK_FALSE(folded.initializer.has_value());
  REQUIRE(folded.producer != kNone);
  CHECK(m.graph.node(folded.producer).op_type == "Transpose");
  CHECK(Values(m, "ln1.weight") == std::vector<float>{1, 1});
  // The second LayerNorm reads ln1.weight now.
  const Node& second = m.graph.node(m.graph.value(m.graph.FindValue("b")).producer);
  CHECK(m.graph.value(second.inputs[1]).name == "ln1.weight");

  // grad trains the three parameters under their PyTorch names, nothing generated.
  Model fresh = Exported(kFolded, kSignature, kFoldedFx);
  auto result = BuildGradientGraph(fresh);
  INFO(result.status().message());
  REQUIRE(result.ok());
  CHECK(result->gradients == std::vector<std::string>{"fc.weight", "ln0.weight", "ln1.weight"});
}

TEST_CASE("torch parameters: a parameter folded beyond repair is listed", "[grad][torch_parameters]") {
  // ln1's scale became a constant of another name that its call does not name.
  Model m = Exported(R"(<ir_version: 10, opset_import: ["" : 18]>
    g (float[1, 2] x) => (float s)
    <float[2] ln0__weight = {1, 2}, float[2] add_3 = {2, 2}> {
      a = LayerNormalization<axis = -1>(x, ln0__weight)
      b = Mul(a, add_3)
      s = ReduceSum<keepdims = 0>(b)
    })",
                     kSignature,
                     {"%ln0 : [num_users=1] = call_function[target=torch.ops.aten.layer_norm.default](args = (%x, [2], "
                      "%p_ln0_weight), kwargs = {})",
                      "%mul : [num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%ln0, %add_3), "
                      "kwargs = {})",
                      ""});
  auto stats = RestoreTorchParameters(m);
  REQUIRE(stats.ok());
  CHECK(stats->unrecoverable == std::vector<std::string>{"fc.weight", "ln1.weight"});
  CHECK(stats->parameters == std::vector<std::string>{"ln0.weight"});
}

// Mixtral's experts (transformers' batched_mm): experts.w[ids] is aten.index on dim 0, which the
// optimizer writes as GatherND from a renamed copy of the parameter (val_7); experts.v[:, ids]
// indexes dim 1 (a transposed layout), which is not restored.
TEST_CASE("torch parameters: a parameter renamed for aten.index on leading dims comes back", "[grad][torch_parameters]") {
  const std::string signature = R"(
# inputs
p_experts_w: PARAMETER target='experts.w'
p_experts_v: PARAMETER target='experts.v'
ids: USER_INPUT
)";
  Model m = Exported(R"(<ir_version: 10, opset_import: ["" : 18]>
    g (int64[3, 1] ids) => (float s, float t)
    <float[2, 2] val_7 = {1, 2, 3, 4}, float[2, 2] val_9 = {5, 6, 7, 8}> {
      picked = GatherND(val_7, ids)
      s = ReduceSum<keepdims = 0>(picked)
      other = GatherND(val_9, ids)
      t = ReduceSum<keepdims = 0>(other)
    })",
                     signature,
                     {"%index : [num_users=1] = call_function[target=torch.ops.aten.index.Tensor](args = "
                      "(%p_experts_w, [%ids]), kwargs = {})",
                      "",
                      "%index_1 : [num_users=1] = call_function[target=torch.ops.aten.index.Tensor](args = "
                      "(%p_experts_v, [None, %ids]), kwargs = {})",
                      ""});
  auto stats = RestoreTorchParameters(m);
  INFO(stats.status().message());
  REQUIRE(stats.ok());
  CHECK(stats->parameters == std::vector<std::string>{"experts.w"});
  CHECK(stats->unrecoverable == std::vector<std::string>{"experts.v"});
  CHECK(Values(m, "experts.w") == std::vector<float>{1, 2, 3, 4});
  const Node& gather = m.graph.node(m.graph.value(m.graph.FindValue("picked")).producer);
  CHECK(m.graph.value(gather.inputs[0]).name == "experts.w");
}

// nn.LSTM(1, 1) in a default export: the optimizer folded W, R, B (ONNX's gate order i, o, f, c)
// into constants. PyTorch's order is i, f, g, o, so W = {1, 2, 3, 4} is weight_ih = {1, 3, 4, 2};
// B = [b_ih | b_hh] in ONNX's order.
TEST_CASE("torch parameters: nn.LSTM weights come back from the folded W R B", "[grad][torch_parameters]") {
  const std::string signature = R"(
# inputs
p_rnn_weight_ih_l0: PARAMETER target='rnn.weight_ih_l0'
p_rnn_weight_hh_l0: PARAMETER target='rnn.weight_hh_l0'
p_rnn_bias_ih_l0: PARAMETER target='rnn.bias_ih_l0'
p_rnn_bias_hh_l0: PARAMETER target='rnn.bias_hh_l0'
x: USER_INPUT
)";
  const std::string text = R"(<ir_version: 10, opset_import: ["" : 18]>
    g (float[2, 1, 1] x) => (float[2, 1, 1, 1] y)
    <float[1, 4, 1] val_w = {0.1, 0.2, 0.3, 0.4}, float[1, 4, 1] val_r = {0.5, 0.6, 0.7, 0.8},
     float[1, 8] val_b = {1, 2, 3, 4, 5, 6, 7, 8}> {
      y = LSTM<hidden_size = 1>(x, val_w, val_r, val_b)
    })";
  const std::vector<std::string> fx = {
      "%lstm : [num_users=1] = call_function[target=torch.ops.aten.lstm.input](args = (%x, [%zeros, %zeros_1], "
      "[%p_rnn_weight_ih_l0, %p_rnn_weight_hh_l0, %p_rnn_bias_ih_l0, %p_rnn_bias_hh_l0], True, 1, 0.0, True, False, "
      "False), kwargs = {})"};
  Model m = Exported(text, signature, fx);
  Tensor x(DataType::kFloat, {2, 1, 1});
  x.SetFromDouble(0, 0.5), x.SetFromDouble(1, -1.5);
  auto before = Execute(m, {{"x", x}});
  REQUIRE(before.ok());
  auto stats = RestoreTorchParameters(m);
  INFO(stats.status().message());
  REQUIRE(stats.ok());
  CHECK(stats->recurrent_parameters == 4);
  CHECK(stats->unrecoverable.empty());
  CHECK(Values(m, "rnn.weight_ih_l0") == std::vector<float>{0.1f, 0.3f, 0.4f, 0.2f});
  CHECK(Values(m, "rnn.weight_hh_l0") == std::vector<float>{0.5f, 0.7f, 0.8f, 0.6f});
  CHECK(Values(m, "rnn.bias_ih_l0") == std::vector<float>{1, 3, 4, 2});
  CHECK(Values(m, "rnn.bias_hh_l0") == std::vector<float>{5, 7, 8, 6});
  CHECK_FALSE(m.graph.value(m.graph.FindValue("val_w")).initializer.has_value());
  // W, R, B are now computed from the parameters, and the LSTM's output is the same.
  auto after = Execute(m, {{"x", x}});
  INFO(after.status().message());
  REQUIRE(after.ok());
  const Tensor& y0 = before->outputs.at("y");
  const Tensor& y1 = after->outputs.at("y");
  for (int64_t i = 0; i < y0.numel(); ++i) CHECK(y0.GetAsDouble(i) == y1.GetAsDouble(i));
}

constexpr const char* kBatchNormSignature = R"(
# inputs
p_bn_weight: PARAMETER target='bn.weight'
p_bn_bias: PARAMETER target='bn.bias'
b_bn_running_mean: BUFFER target='bn.running_mean' persistent=True
b_bn_running_var: BUFFER target='bn.running_var' persistent=True
x: USER_INPUT
)";

constexpr const char* kBatchNormFx =
    "%bn : [num_users=3] = call_function[target=torch.ops.aten._native_batch_norm_legit_functional.default](args = "
    "(%x, %p_bn_weight, %p_bn_bias, %b_bn_running_mean, %b_bn_running_var, True, 0.1, 1e-05), kwargs = {})";

TEST_CASE("torch parameters: a training-mode BatchNorm written in inference mode trains as PyTorch ran it",
          "[grad][torch_parameters]") {
  Model m = Exported(R"(<ir_version: 10, opset_import: ["" : 18]>
    g (float[2, 1, 1, 1] x) => (float s)
    <float[1] bn__weight = {2}, float[1] bn__bias = {1}, float[1] bn__running_mean = {5}, float[1] bn__running_var = {4}> {
      y = BatchNormalization<epsilon = 0.0, momentum = 0.9>(x, bn__weight, bn__bias, bn__running_mean, bn__running_var)
      s = ReduceSum<keepdims = 0>(y)
    })",
                     kBatchNormSignature, {kBatchNormFx, ""});
  auto stats = RestoreTorchParameters(m);
  REQUIRE(stats.ok());
  CHECK(stats->training_batch_norms == 1);
  const Node& bn = m.graph.node(0);
  CHECK(bn.GetInt("training_mode", 0) == 1);
  REQUIRE(bn.outputs.size() == 3);
  CHECK(m.graph.value(bn.outputs[1]).name == "bn.running_mean_updated");
  // Buffers are not trained by default; the parameters are.
  Model fresh = Exported(R"(<ir_version: 10, opset_import: ["" : 18]>
    g (float[2, 1, 1, 1] x) => (float s)
    <float[1] bn__weight = {2}, float[1] bn__bias = {1}, float[1] bn__running_mean = {5}, float[1] bn__running_var = {4}> {
      y = BatchNormalization<epsilon = 0.0, momentum = 0.9>(x, bn__weight, bn__bias, bn__running_mean, bn__running_var)
      s = ReduceSum<keepdims = 0>(y)
    })",
                         kBatchNormSignature, {kBatchNormFx, ""});
  auto result = BuildGradientGraph(fresh);
  INFO(result.status().message());
  REQUIRE(result.ok());
  CHECK(result->gradients == std::vector<std::string>{"bn.weight", "bn.bias"});
}

TEST_CASE("torch parameters: a training-mode BatchNorm folded into its Conv is an error naming the node",
          "[grad][torch_parameters]") {
  Model m = Exported(R"(<ir_version: 10, opset_import: ["" : 18]>
    g (float[1, 1, 2, 2] x) => (float s)
    <float[1, 1, 1, 1] w = {2}, float[1] b = {1}> {
      y = Conv(x, w, b)
      s = ReduceSum<keepdims = 0>(y)
    })",
                     kBatchNormSignature, {kBatchNormFx, ""});
  m.graph.nodes[0].name = "node_Conv_94";
  auto stats = RestoreTorchParameters(m);
  REQUIRE_FALSE(stats.ok());
  CHECK(stats.status().message().find("node_Conv_94") != std::string::npos);
  CHECK(stats.status().message().find("'bn'") != std::string::npos);
  CHECK(stats.status().message().find("optimize=False") != std::string::npos);
}

TEST_CASE("torch parameters: a model without a signature is left alone", "[grad][torch_parameters]") {
  auto m = LoadModelFromText(kFolded);
  INFO(m.status().message());
  REQUIRE(m.ok());
  auto stats = RestoreTorchParameters(*m);
  REQUIRE(stats.ok());
  CHECK_FALSE(stats->has_signature);
  CHECK(m->graph.FindValue("fc.weight") == kNone);
}

}  // namespace
}  // namespace memopt

#include "io/function_inliner.h"

#include <catch2/catch.hpp>

#include "exec/executor.h"
#include "io/model_loader.h"
#include "io/newer_proto_fields.h"
#include "io/torch_module_names.h"

namespace memopt {
namespace {

std::vector<std::string> Ops(const Graph& g) {
  std::vector<std::string> ops;
  for (const Node& n : g.nodes) ops.push_back(n.op_type);
  return ops;
}

const Node& ProducerOf(const Graph& g, const std::string& value) {
  const ValueId v = g.FindValue(value);
  REQUIRE(v != kNone);
  REQUIRE(g.value(v).producer != kNone);
  return g.node(g.value(v).producer);
}

Tensor Floats(std::vector<int64_t> shape, std::vector<float> data) {
  Tensor t(DataType::kFloat, shape);
  for (size_t i = 0; i < data.size(); ++i) t.SetFromDouble(static_cast<int64_t>(i), data[i]);
  return t;
}

// Two calls of one function (names inside collide with each other and with the main graph),
// a nested call, an attribute reference with a default, and an output that is an input.
constexpr const char* kModel = R"(
<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
main (float[2] x) => (float[2] y, float[2] same) {
  t = Relu(x)
  a = local.Block <alpha: float = 0.5> (t)
  b = local.Block (a)
  y = Add(a, b)
  same = local.Pass(x)
}

<domain: "local", opset_import: ["" : 17, "local" : 1]>
Block <alpha> (x) => (y) {
  t = LeakyRelu <alpha: float = @alpha> (x)
  y = local.Scale(t)
}

<domain: "local", opset_import: ["" : 17]>
Scale (x) => (y) {
  two = Constant <value = float[1] {2.0}> ()
  y = Mul(x, two)
}

<domain: "local", opset_import: ["" : 17]>
Pass (x) => (x) {
}
)";

TEST_CASE("Inliner: nested calls, unique names, attribute references", "[loader][inline]") {
  auto model = LoadModelFromText(kModel);
  INFO(model.status().message());
  REQUIRE(model.ok());
  const Graph& g = model->graph;
  CHECK(model->inlined_calls == 5);  // 2 Block + 2 Scale + 1 Pass
  CHECK(model->inlined_functions == std::vector<std::string>{"local:Block", "local:Pass", "local:Scale"});
  CHECK(Ops(g) == std::vector<std::string>{"Relu", "LeakyRelu", "Constant", "Mul", "LeakyRelu", "Constant", "Mul",
                                           "Add", "Identity"});
  // The first Block's `t` collides with the main graph's `t`, the second with the first's.
  const Node& leaky1 = g.node(1);
  const Node& leaky2 = g.node(4);
  CHECK(g.value(leaky1.inputs[0]).name == "t");
  CHECK(g.value(leaky1.outputs[0]).name == "t__1");
  CHECK(g.value(leaky2.outputs[0]).name == "t__2");
  CHECK(leaky1.GetFloat("alpha", 0) == 0.5f);
  // The second call gives no alpha and Block declares no default: the attribute is absent.
  CHECK(!leaky2.HasAttr("alpha"));
  // Formal outputs take the caller's names.
  CHECK(ProducerOf(g, "a").op_type == "Mul");
  CHECK(ProducerOf(g, "b").op_type == "Mul");
  CHECK(ProducerOf(g, "same").op_type == "Identity");
  CHECK(g.value(g.node(3).inputs[1]).name == "two");
  CHECK(g.value(g.node(6).inputs[1]).name == "two__1");
  // Module names: the innermost function a node comes from.
  CHECK(g.node(0).module.empty());
  CHECK(leaky1.module == "Block");
  CHECK(g.node(3).module == "Scale");

  // It runs: a = 2 * leaky(relu(x), 0.5), b = 2 * leaky(a, 0.01).
  auto run = Execute(*model, {{"x", Floats({2}, {-1.0f, 3.0f})}});
  INFO(run.status().message());
  REQUIRE(run.ok());
  CHECK(run->outputs.at("y").GetAsDouble(0) == Approx(0.0));
  CHECK(run->outputs.at("y").GetAsDouble(1) == Approx(6.0 + 12.0));
  CHECK(run->outputs.at("same").GetAsDouble(0) == Approx(-1.0));
}

TEST_CASE("Inliner: attribute defaults, opset imports, omitted outputs", "[loader][inline]") {
  auto model = LoadModelFromText(R"(
<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
main (float[3] x) => (float[3] y) {
  y, = local.Two(x)
}

<domain: "local", opset_import: ["" : 17, "com.microsoft" : 1]>
Two (x) => (y, z) {
  y = Relu(x)
  z = com.microsoft.Gelu(x)
}
)");
  INFO(model.status().message());
  REQUIRE(model.ok());
  const Graph& g = model->graph;
  CHECK(g.opsets.at("com.microsoft") == 1);
  REQUIRE(g.nodes.size() == 2);
  // The omitted output `z` got a name of its own.
  CHECK(g.value(g.nodes[1].outputs[0]).name == "z");
}

TEST_CASE("Inliner: recursion and undefined names are errors", "[loader][inline]") {
  auto recursive = LoadModelFromText(R"(
<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
main (float[3] x) => (float[3] y) {
  y = local.F(x)
}

<domain: "local", opset_import: ["local" : 1]>
F (x) => (y) {
  y = local.G(x)
}

<domain: "local", opset_import: ["local" : 1]>
G (x) => (y) {
  y = local.F(x)
}
)");
  REQUIRE(!recursive.ok());
  CHECK(recursive.status().message().find("calls itself ('F' -> 'G' -> 'F')") != std::string::npos);

  auto undefined = LoadModelFromText(R"(
<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
main (float[3] x) => (float[3] y) {
  y = local.F(x)
}

<domain: "local", opset_import: ["" : 17]>
F (a) => (b) {
  b = Add(a, x)
}
)");
  REQUIRE(!undefined.ok());
  CHECK(undefined.status().message().find("'F' reads 'x'") != std::string::npos);
}

TEST_CASE("Inliner: without functions the graph is untouched", "[loader][inline]") {
  auto model = LoadModelFromText(R"(
<ir_version: 8, opset_import: ["" : 17]>
main (float[3] x) => (float[3] y) {
  y = Relu(x)
}
)");
  REQUIRE(model.ok());
  CHECK(model->inlined_calls == 0);
  CHECK(Ops(model->graph) == std::vector<std::string>{"Relu"});
}

TEST_CASE("PyTorch module names from metadata and dynamo function names", "[loader][inline]") {
  CHECK(io::ModuleFromFunctionName(
            "transformers_models_llama_modeling_llama_LlamaSdpaAttention_L__self___model_layers_0_self_attn_1") ==
        "model_layers_0_self_attn (LlamaSdpaAttention)");
  CHECK(io::ModuleFromFunctionName("torch_nn_modules_linear_Linear_L__s___m_lm_head_1") == "m_lm_head (Linear)");
  CHECK(io::ModuleFromFunctionName("transformers_models_llama_modeling_llama_LlamaMLP_model_model_layers_1_mlp_1") ==
        "model_model_layers_1_mlp (LlamaMLP)");
  CHECK(io::ModuleFromFunctionName("Block") == "Block");
  CHECK(io::ModuleFromFunctionName("_aten_gelu_approximate_none").empty());
  CHECK(io::ModuleFromFunctionName("torch_nn_modules_linear_Linear_model_decoder_block_0_layer_1_EncDecAttention_v_1") ==
        "model_decoder_block_0_layer_1_EncDecAttention_v (Linear)");
  CHECK(io::ModuleFromMetadata({{"pkg.torch.onnx.name_scopes", "['', 'model', 'model.layers.0']"}}) ==
        "model.layers.0");
  CHECK(io::ModuleFromMetadata({{"namespace", ": GPT2/transformer: GPT2Model/transformer.h.0: GPT2Block"}}) ==
        "transformer.h.0");
  CHECK(io::ModuleFromMetadata({}).empty());
}

}  // namespace
}  // namespace memopt

namespace memopt {
namespace {

// PyTorch 2.5+ writes the module into node metadata (NodeProto field 9, which the linked ONNX
// release does not declare): the loader reads it from the unknown fields.
TEST_CASE("Loader: node metadata names the PyTorch module", "[loader][inline]") {
  onnx::ModelProto proto;
  proto.set_ir_version(10);
  auto* opset = proto.add_opset_import();
  opset->set_version(18);
  auto* graph = proto.mutable_graph();
  graph->set_name("g");
  auto* x = graph->add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  auto* y = graph->add_output();
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  auto* node = graph->add_node();
  node->set_op_type("Relu");
  node->add_input("x");
  node->add_output("y");
  onnx::StringStringEntryProto entry;
  entry.set_key("pkg.torch.onnx.name_scopes");
  entry.set_value("['', 'encoder', 'encoder.layer.0', 'encoder.layer.0.act']");
  node->GetReflection()->MutableUnknownFields(node)->AddLengthDelimited(9, entry.SerializeAsString());
  auto model = ModelFromProto(proto);
  INFO(model.status().message());
  REQUIRE(model.ok());
  REQUIRE(model->graph.nodes.size() == 1);
  CHECK(model->graph.nodes[0].module == "encoder.layer.0.act");
  CHECK(io::NodeMetadata(model->graph.nodes[0].proto).size() == 1);
}

TEST_CASE("Inliner: call chains past the depth limit are an error", "[loader][inline]") {
  std::string text = "<ir_version: 8, opset_import: [\"\" : 17, \"local\" : 1]>\nmain (float[2] x) => (float[2] y) {\n"
                     "  y = local.F0(x)\n}\n";
  for (int i = 0; i < 300; ++i) {
    text += "<domain: \"local\", opset_import: [\"\" : 17, \"local\" : 1]>\nF" + std::to_string(i) +
            " (x) => (y) {\n  y = " + (i + 1 < 300 ? "local.F" + std::to_string(i + 1) : std::string("Relu")) +
            "(x)\n}\n";
  }
  auto model = LoadModelFromText(text);
  REQUIRE(!model.ok());
  CHECK(model.status().message().find("nest deeper than 200 calls") != std::string::npos);
}

}  // namespace
}  // namespace memopt

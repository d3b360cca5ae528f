#include "io/model_loader.h"

#include <fstream>
#include <map>
#include <set>

#include <catch2/catch.hpp>

#include "test_data.h"

namespace memopt {

namespace {

using testing::SharedData;
using testing::SourcePath;

std::map<std::string, int> OpCounts(const Graph& g) {
  std::map<std::string, int> counts;
  for (const auto& n : g.nodes) counts[(n.domain.empty() ? "" : n.domain + "::") + n.op_type]++;
  return counts;
}

const Node* FindNode(const Graph& g, const std::string& name) {
  for (const auto& n : g.nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

std::string ShapeOf(const Graph& g, const std::string& value) {
  const ValueId v = g.FindValue(value);
  if (v == kNone || !g.value(v).info.shape) return "?";
  return ShapeToString(*g.value(v).info.shape);
}

}  // namespace

TEST_CASE("Loader: node counts of the shared graphs", "[loader]") {
  const std::pair<const char*, size_t> cases[] = {
      {"ort_recompute/recompute_gelu.onnx", 10},
      {"ort_recompute/recompute_tile.onnx", 19},
      {"ort_recompute/3layer_bloom_optimized_training.onnx", 500},
      {"forward/bert_toy_optimized.onnx", 384},
      {"forward/gpt2_megatron.onnx", 161},
      {"forward/TFBertForQuestionAnswering.onnx", 3836},
      {"ort_training_api/training_model.onnx", 17},
      {"ort_training_api/eval_model.onnx", 4},
  };
  for (const auto& [rel, count] : cases) {
    auto path = SharedData(rel);
    if (!path) return;
    INFO(rel);
    auto model = LoadModel(*path);
    REQUIRE(model.ok());
    CHECK(model->graph.nodes.size() == count);
    CHECK(model->path == *path);
    CHECK(model->file_size > 0);
    for (size_t i = 0; i < model->graph.nodes.size(); ++i) {
      const Node& n = model->graph.nodes[i];
      CHECK(n.id == static_cast<NodeId>(i));
      CHECK(n.since_version > 0);
      for (size_t o = 0; o < n.outputs.size(); ++o) {
        if (n.outputs[o] == kNone) continue;
        CHECK(model->graph.value(n.outputs[o]).producer == n.id);
        CHECK(model->graph.value(n.outputs[o]).producer_output == static_cast<int32_t>(o));
      }
    }
  }
}

TEST_CASE("Loader: recompute_gelu values, shapes and links", "[loader]") {
  auto path = SharedData("ort_recompute/recompute_gelu.onnx");
  if (!path) return;
  auto model = LoadModel(*path);
  REQUIRE(model.ok());
  const Graph& g = model->graph;
  CHECK(model->ir_version == 8);
  CHECK(g.OpsetVersion("") == 15);
  CHECK(g.OpsetVersion("com.microsoft") == 1);
  REQUIRE(g.inputs.size() == 5);
  CHECK(g.value(g.inputs[0]).name == "input1");
  CHECK(ShapeOf(g, "input1") == "[input1_dim0, input1_dim1]");
  CHECK(g.value(g.inputs[0]).info.dtype == DataType::kFloat);
  CHECK(ShapeOf(g, "_original_module.fc1.weight") == "[500, 784]");
  CHECK(g.outputs.size() == 4);
  CHECK(g.value(g.outputs[0]).is_graph_output);
  CHECK(model->value_info.size() == 7);

  // Producer / consumers of the Gelu input.
  const ValueId gelu_in = g.FindValue("com.microsoft::Gelu_5");
  REQUIRE(gelu_in != kNone);
  CHECK(g.value(gelu_in).producer == 0);
  CHECK(g.value(gelu_in).consumers == std::vector<std::pair<NodeId, int32_t>>{{1, 0}, {5, 1}});
  const Node* gelu = FindNode(g, "Gelu_1");
  REQUIRE(gelu != nullptr);
  CHECK(gelu->domain == "com.microsoft");
  CHECK(gelu->since_version == 1);
  CHECK(gelu->Describe() == "'Gelu_1' (Gelu)");
  const Node* gemm = FindNode(g, "Gemm_0");
  REQUIRE(gemm != nullptr);
  CHECK(gemm->since_version == 13);
  CHECK(gemm->proto.op_type() == "Gemm");

  // The small int64 initializers are decoded; they are not graph inputs.
  const ValueId axes = g.FindValue("Gemm_0_Grad/ReduceAxes_for_Gemm_0_Grad/dC_reduced");
  REQUIRE(axes != kNone);
  const Value& a = g.value(axes);
  REQUIRE(a.initializer.has_value());
  CHECK(a.initializer->dtype == DataType::kInt64);
  CHECK(a.initializer->dims == std::vector<int64_t>{1});
  CHECK(a.initializer->storage == InitializerInfo::Storage::kInline);
  CHECK(a.initializer->file_length > 0);
  CHECK(a.initializer->file_offset + a.initializer->file_length <= model->file_size);
  CHECK_FALSE(a.is_graph_input);
  REQUIRE(a.known_values.has_value());
  REQUIRE(a.known_values->size() == 1);
  CHECK((*a.known_values)[0].AsInt() == 0);
  CHECK(ShapeOf(g, "Gemm_0_Grad/ReduceAxes_for_Gemm_0_Grad/dC_reduced") == "[1]");
}

TEST_CASE("Loader: 3-layer BLOOM since-versions at opset 15", "[loader]") {
  auto path = SharedData("ort_recompute/3layer_bloom_optimized_training.onnx");
  if (!path) return;
  auto model = LoadModel(*path);
  REQUIRE(model.ok());
  const Graph& g = model->graph;
  std::map<std::string, std::set<int>> versions;
  for (const auto& n : g.nodes) versions[(n.domain.empty() ? "" : n.domain + "::") + n.op_type].insert(n.since_version);
  CHECK(versions["Add"] == std::set<int>{14});
  CHECK(versions["Where"] == std::set<int>{9});
  CHECK(versions["Reshape"] == std::set<int>{14});
  CHECK(versions["LayerNormalization"] == std::set<int>{1});
  CHECK(versions["Softmax"] == std::set<int>{13});
  CHECK(versions["Gather"] == std::set<int>{13});
  CHECK(versions["Cast"] == std::set<int>{13});
  CHECK(versions["Split"] == std::set<int>{13});
  CHECK(versions["com.microsoft::FusedMatMul"] == std::set<int>{1});
  CHECK(versions["org.pytorch.aten::ATen"] == std::set<int>{1});
  CHECK(OpCounts(g)["LayerNormalization"] == 8);
  CHECK(OpCounts(g)["com.microsoft::YieldOp"] == 1);
  CHECK(FindNode(g, "LayerNormalization_token_0") != nullptr);
  CHECK(ShapeOf(g, "inputs_input_ids") == "[inputs_input_ids_dim0, inputs_attention_mask_dim1]");
  // 67 int32/int64 initializers, all small: every one has known values.
  int decoded = 0;
  for (const auto& v : g.values) {
    if (v.initializer && IsInteger(v.initializer->dtype)) {
      CHECK(v.known_values.has_value());
      decoded += v.known_values.has_value() ? 1 : 0;
    }
  }
  CHECK(decoded == 67);
  const ValueId c = g.FindValue("ortshared_7_1_1_1_token_101");
  REQUIRE(c != kNone);
  REQUIRE(g.value(c).known_values.has_value());
  CHECK((*g.value(c).known_values)[0].AsInt() == 2);
  // Five dims in value_info have neither value nor param: they become fresh unk__ symbols.
  std::set<std::string> unknown;
  for (const auto& v : g.values) {
    if (!v.info.shape) continue;
    for (const auto& d : *v.info.shape) {
      for (const auto& s : d.Symbols()) {
        if (s.rfind("unk__", 0) == 0) unknown.insert(s);
      }
    }
  }
  CHECK(unknown.size() == 5);
  CHECK(unknown.count("unk__0") == 1);
  CHECK(unknown.count("unk__4") == 1);
}

TEST_CASE("Loader: forward graphs", "[loader]") {
  auto bert = SharedData("forward/bert_toy_optimized.onnx");
  if (!bert) return;
  auto model = LoadModel(*bert);
  REQUIRE(model.ok());
  CHECK(model->ir_version == 4);
  CHECK(model->graph.OpsetVersion("") == 12);
  CHECK(ShapeOf(model->graph, "input_ids") == "[batch, max_seq_len_in_batch]");
  for (const auto& n : model->graph.nodes) {
    if (n.op_type == "Softmax") CHECK(n.since_version == 11);
    if (n.op_type == "ReduceMean") CHECK(n.since_version == 11);
    if (n.op_type == "Constant") CHECK(n.since_version == 12);
  }
  auto gpt2 = SharedData("forward/gpt2_megatron.onnx");
  if (!gpt2) return;
  model = LoadModel(*gpt2);
  REQUIRE(model.ok());
  CHECK(ShapeOf(model->graph, "past_0") == "[2, batch_size, 2, past_seq_len, 4]");
  // Initializers that ORT exports also list as graph inputs are both.
  auto tf = SharedData("forward/TFBertForQuestionAnswering.onnx");
  if (!tf) return;
  model = LoadModel(*tf);
  REQUIRE(model.ok());
  CHECK(model->graph.inputs.size() == 3);
  CHECK(ShapeOf(model->graph, "input_ids") == "[batch_size, 7]");
  int inits = 0;
  for (const auto& v : model->graph.values) inits += v.initializer ? 1 : 0;
  CHECK(inits == 1344);
}

TEST_CASE("Loader: text models", "[loader]") {
  auto model = LoadModelFromText(R"(
    <ir_version: 8, opset_import: ["": 15, "com.microsoft": 1]>
    g (float[batch, 16] x) => (float[batch, 16] y) {
      t = Add(x, x)
      g1 = com.microsoft.Gelu(t)
      y = Relu(g1)
    })");
  REQUIRE(model.ok());
  const Graph& g = model->graph;
  REQUIRE(g.nodes.size() == 3);
  CHECK(g.nodes[1].domain == "com.microsoft");
  CHECK(g.nodes[1].op_type == "Gelu");
  CHECK(g.nodes[1].since_version == 1);
  CHECK(g.nodes[0].since_version == 14);
  CHECK(g.nodes[2].since_version == 14);
  CHECK(g.nodes[0].Describe() == "'Add#0' (Add)");
  CHECK(ShapeOf(g, "x") == "[batch, 16]");
  CHECK(g.value(g.FindValue("t")).consumers == std::vector<std::pair<NodeId, int32_t>>{{1, 0}});
  CHECK(model->path.empty());

  auto bad = LoadModelFromText("<ir_version: 8> g (float x) => (float y) { y = Relu(x ");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == ErrorCode::kInvalidInput);
  CHECK(bad.status().message().find("cannot parse the ONNX text model") == 0);

  // Without ir_version the text parser leaves 0; the loader picks a current one.
  auto no_ir = LoadModelFromText(R"(<opset_import: ["": 13]> g (float[2] x) => (float[2] y) { y = Neg(x) })");
  REQUIRE(no_ir.ok());
  CHECK(no_ir->graph.nodes[0].since_version == 13);
}

TEST_CASE("Loader: initializer values, sparse initializers and declared types", "[loader]") {
  auto text = LoadModelFromText(R"(
    <ir_version: 8, opset_import: ["": 15]>
    g (float[2, 3] x) => (float[6] y) <int64[1] s = {6}, float[2] f = {1.0, 2.0}> {
      y = Reshape(x, s)
    })");
  REQUIRE(text.ok());
  const Value& s = text->graph.value(text->graph.FindValue("s"));
  REQUIRE(s.known_values.has_value());
  CHECK(ShapeToString(*s.known_values) == "[6]");
  CHECK_FALSE(s.is_graph_input);
  const Value& f = text->graph.value(text->graph.FindValue("f"));
  CHECK(f.initializer.has_value());
  CHECK_FALSE(f.known_values.has_value());  // floats are never decoded

  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  auto add_init = [&](const std::string& name, int type, std::vector<int64_t> dims) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (int64_t d : dims) t->add_dims(d);
    return t;
  };
  add_init("i32", onnx::TensorProto::INT32, {3});
  for (int v : {-1, 0, 7}) g->mutable_initializer(0)->add_int32_data(v);
  auto* b = add_init("flags", onnx::TensorProto::BOOL, {2});
  b->set_raw_data(std::string("\x01\x00", 2));
  auto* i8 = add_init("i8", onnx::TensorProto::INT8, {});
  i8->set_raw_data(std::string("\xfe", 1));  // scalar -2
  auto* u64 = add_init("u64", onnx::TensorProto::UINT64, {1});
  u64->add_uint64_data(~uint64_t{0});  // does not fit int64: not decoded
  auto* big = add_init("many", onnx::TensorProto::INT64, {kMaxFoldedElements + 1});
  big->set_raw_data(std::string(8 * (kMaxFoldedElements + 1), '\0'));
  auto* sp = g->add_sparse_initializer();
  sp->add_dims(100);
  sp->add_dims(50);
  sp->mutable_values()->set_name("sparse_w");
  sp->mutable_values()->set_data_type(onnx::TensorProto::FLOAT);
  sp->mutable_values()->add_dims(2);
  sp->mutable_values()->add_float_data(1.0f);
  sp->mutable_values()->add_float_data(2.0f);
  sp->mutable_indices()->set_data_type(onnx::TensorProto::INT64);
  sp->mutable_indices()->add_dims(2);
  sp->mutable_indices()->add_int64_data(3);
  sp->mutable_indices()->add_int64_data(4);
  // Graph input that is also an initializer; declared with a symbolic shape.
  auto* in = g->add_input();
  in->set_name("i32");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT32);
  in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param(" n ");
  auto* x = g->add_input();
  x->set_name("x");
  auto* xs = x->mutable_type()->mutable_tensor_type();
  xs->set_elem_type(onnx::TensorProto::FLOAT16);
  xs->mutable_shape()->add_dim()->set_dim_param("  batch\t");
  xs->mutable_shape()->add_dim();  // neither value nor param
  xs->mutable_shape()->add_dim()->set_dim_value(8);
  auto* seq = g->add_input();
  seq->set_name("seq");
  seq->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(1);
  auto* n = g->add_node();
  n->set_op_type("Identity");
  n->set_domain("ai.onnx");
  n->add_input("x");
  n->add_output("y");
  auto* out = g->add_output();
  out->set_name("y");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT16);
  auto* vi = g->add_value_info();
  vi->set_name("y");
  vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim();
  vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(3);

  auto model = ModelFromProto(m);
  REQUIRE(model.ok());
  const Graph& gr = model->graph;
  auto value = [&](const std::string& name) -> const Value& { return gr.value(gr.FindValue(name)); };
  auto known = [&](const std::string& name) {
    const Value& v = value(name);
    return v.known_values ? ShapeToString(*v.known_values) : std::string("none");
  };
  CHECK(known("i32") == "[-1, 0, 7]");
  CHECK(known("flags") == "[1, 0]");
  CHECK(known("i8") == "[-2]");
  CHECK(ShapeToString(*value("i8").info.shape) == "[]");
  CHECK(known("u64") == "none");
  CHECK(known("many") == "none");
  // Initializer and graph input: both; the initializer's constant dims win.
  CHECK(value("i32").is_graph_input);
  CHECK(value("i32").initializer.has_value());
  CHECK(ShapeToString(*value("i32").info.shape) == "[3]");
  const Value& sw = value("sparse_w");
  REQUIRE(sw.initializer.has_value());
  CHECK(sw.initializer->is_sparse);
  CHECK(sw.initializer->dims == std::vector<int64_t>{100, 50});
  CHECK(sw.initializer->dtype == DataType::kFloat);
  CHECK(ShapeToString(*sw.info.shape) == "[100, 50]");
  // Declared types: trimmed dim_param, unk__N for unnamed dims, non-tensor types.
  CHECK(value("x").info.dtype == DataType::kFloat16);
  CHECK(ShapeToString(*value("x").info.shape) == "[batch, unk__0, 8]");
  CHECK_FALSE(value("seq").info.is_tensor);
  CHECK(value("y").info.dtype == DataType::kFloat16);
  CHECK(ShapeToString(*value("y").info.shape) == "[unk__1, 3]");  // from value_info
  CHECK(model->value_info == std::vector<ValueId>{gr.FindValue("y")});
  CHECK(gr.nodes[0].domain.empty());
  CHECK(gr.nodes[0].since_version == 13);
  CHECK(gr.inputs.size() == 3);
}

TEST_CASE("Loader: ModelFromProto matches LoadModel", "[loader]") {
  auto path = SharedData("ort_recompute/recompute_tile.onnx");
  if (!path) return;
  auto from_file = LoadModel(*path);
  REQUIRE(from_file.ok());
  onnx::ModelProto proto;
  {
    std::ifstream in(*path, std::ios::binary);
    REQUIRE(proto.ParseFromIstream(&in));
  }
  auto from_proto = ModelFromProto(proto);
  REQUIRE(from_proto.ok());
  const Graph& a = from_file->graph;
  const Graph& b = from_proto->graph;
  REQUIRE(a.nodes.size() == b.nodes.size());
  REQUIRE(a.values.size() == b.values.size());
  for (size_t i = 0; i < a.values.size(); ++i) {
    CHECK(a.values[i].name == b.values[i].name);
    CHECK(a.values[i].consumers == b.values[i].consumers);
    CHECK(a.values[i].info.shape.has_value() == b.values[i].info.shape.has_value());
  }
  for (size_t i = 0; i < a.nodes.size(); ++i) CHECK(a.nodes[i].since_version == b.nodes[i].since_version);
  CHECK(from_proto->path.empty());
}

}  // namespace memopt

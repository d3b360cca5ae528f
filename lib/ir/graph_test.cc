#include "ir/graph.h"

#include <catch2/catch.hpp>

namespace memopt {

namespace {

onnx::AttributeProto* AddAttr(onnx::NodeProto& p, const std::string& name, onnx::AttributeProto::AttributeType t) {
  auto* a = p.add_attribute();
  a->set_name(name);
  a->set_type(t);
  return a;
}

/// x -> Add(x, x) -> t -> Relu -> y, with t also read by a third node.
Graph SmallGraph() {
  Graph g;
  g.opsets[""] = 15;
  const ValueId x = g.GetOrAddValue("x");
  const ValueId t = g.GetOrAddValue("t");
  const ValueId y = g.GetOrAddValue("y");
  const ValueId z = g.GetOrAddValue("z");
  Node add;
  add.id = 0;
  add.name = "add";
  add.op_type = "Add";
  add.inputs = {x, x};
  add.outputs = {t};
  Node relu;
  relu.id = 1;
  relu.op_type = "Relu";
  relu.inputs = {t};
  relu.outputs = {y};
  Node mul;
  mul.id = 2;
  mul.name = "mul";
  mul.op_type = "Mul";
  mul.inputs = {y, t, kNone};
  mul.outputs = {z, kNone};
  g.nodes = {add, relu, mul};
  g.inputs = {x};
  g.outputs = {z};
  g.RebuildLinks();
  return g;
}

}  // namespace

TEST_CASE("TensorInfo::Bytes multiplies elements by the element size", "[graph]") {
  TensorInfo info;
  CHECK_FALSE(info.Bytes().has_value());  // no type, no shape
  info.dtype = DataType::kFloat16;
  CHECK_FALSE(info.Bytes().has_value());  // rank unknown
  info.shape = Shape{SymExpr::Symbol("batch"), SymExpr(512)};
  REQUIRE(info.Bytes().has_value());
  CHECK(info.Bytes()->ToString() == "1024*batch");
  info.shape = Shape{};
  CHECK(info.Bytes()->AsInt() == 2);  // scalar: one element
  info.dtype = DataType::kString;
  CHECK_FALSE(info.Bytes().has_value());
  info.dtype = DataType::kInt64;
  info.shape = Shape{SymExpr(3), SymExpr(0)};
  CHECK(info.Bytes()->AsInt() == 0);
  info.is_tensor = false;
  CHECK_FALSE(info.Bytes().has_value());
}

TEST_CASE("Node attribute helpers read the proto by name", "[graph]") {
  Node n;
  n.op_type = "Gemm";
  AddAttr(n.proto, "transB", onnx::AttributeProto::INT)->set_i(1);
  AddAttr(n.proto, "alpha", onnx::AttributeProto::FLOAT)->set_f(0.5f);
  AddAttr(n.proto, "mode", onnx::AttributeProto::STRING)->set_s("constant");
  auto* perm = AddAttr(n.proto, "perm", onnx::AttributeProto::INTS);
  perm->add_ints(0);
  perm->add_ints(2);
  perm->add_ints(1);
  auto* value = AddAttr(n.proto, "value", onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  value->mutable_t()->add_int64_data(7);

  CHECK(n.HasAttr("transB"));
  CHECK_FALSE(n.HasAttr("transA"));
  CHECK(n.GetInt("transB", 0) == 1);
  CHECK(n.GetInt("transA", 0) == 0);
  CHECK(n.GetInt("missing", -3) == -3);
  CHECK(n.GetFloat("alpha", 1.0f) == 0.5f);
  CHECK(n.GetFloat("beta", 1.0f) == 1.0f);
  CHECK(n.GetString("mode", "reflect") == "constant");
  CHECK(n.GetString("other", "reflect") == "reflect");
  CHECK(n.GetInts("perm") == std::vector<int64_t>{0, 2, 1});
  CHECK(n.GetInts("axes").empty());
  REQUIRE(n.GetTensor("value") != nullptr);
  CHECK(n.GetTensor("value")->int64_data(0) == 7);
  CHECK(n.GetTensor("perm") == nullptr);
}

TEST_CASE("Node::Describe quotes the name and shows the op type", "[graph]") {
  Node n;
  n.id = 4;
  n.op_type = "Gemm";
  n.name = "Gemm_0";
  CHECK(n.Describe() == "'Gemm_0' (Gemm)");
  n.name.clear();
  CHECK(n.Describe() == "'Gemm#4' (Gemm)");
}

TEST_CASE("Graph value index, links and opsets", "[graph]") {
  Graph g = SmallGraph();
  const ValueId x = g.FindValue("x");
  const ValueId t = g.FindValue("t");
  const ValueId y = g.FindValue("y");
  REQUIRE(x != kNone);
  CHECK(g.FindValue("nope") == kNone);
  CHECK(g.GetOrAddValue("t") == t);
  CHECK(g.values.size() == 4);

  CHECK(g.value(x).is_graph_input);
  CHECK(g.value(x).producer == kNone);
  CHECK(g.value(x).consumers == std::vector<std::pair<NodeId, int32_t>>{{0, 0}, {0, 1}});
  CHECK(g.value(t).producer == 0);
  CHECK(g.value(t).producer_output == 0);
  CHECK(g.value(t).consumers == std::vector<std::pair<NodeId, int32_t>>{{1, 0}, {2, 1}});
  CHECK(g.value(y).producer == 1);
  CHECK(g.value(g.FindValue("z")).is_graph_output);

  // Values pushed directly (bypassing GetOrAddValue) are still found.
  Value extra;
  extra.name = "extra";
  g.values.push_back(extra);
  CHECK(g.FindValue("extra") == 4);
  CHECK(g.GetOrAddValue("extra") == 4);
  CHECK(g.GetOrAddValue("new") == 5);
  // A renamed value is found under its new name after RebuildLinks (which rebuilds the index).
  g.values[5].name = "renamed";
  CHECK(g.FindValue("new") == kNone);  // a stale index hit is detected
  g.RebuildLinks();
  CHECK(g.FindValue("renamed") == 5);

  // Edits followed by RebuildLinks.
  g.nodes[2].inputs = {x, y};
  g.RebuildLinks();
  CHECK(g.value(t).consumers == std::vector<std::pair<NodeId, int32_t>>{{1, 0}});
  CHECK(g.value(x).consumers == std::vector<std::pair<NodeId, int32_t>>{{0, 0}, {0, 1}, {2, 0}});

  CHECK(g.OpsetVersion("") == 15);
  CHECK(g.OpsetVersion("ai.onnx") == 15);
  CHECK(g.OpsetVersion("com.microsoft") == 0);
  g.opsets.clear();
  g.opsets["ai.onnx"] = 13;
  CHECK(g.OpsetVersion("") == 13);
}

TEST_CASE("Since-versions follow the opset imports", "[graph]") {
  Graph g;
  g.opsets[""] = 15;
  g.opsets["com.microsoft"] = 1;
  auto at = [&](const std::string& op, const std::string& domain = "") { return ResolveSinceVersion(g, domain, op); };
  // From the ONNX registry (opset <= 17).
  CHECK(at("Add") == 14);
  CHECK(at("Where") == 9);
  CHECK(at("Reshape") == 14);
  CHECK(at("Softmax") == 13);
  CHECK(at("Gather") == 13);
  CHECK(at("Cast") == 13);
  CHECK(at("Split") == 13);
  CHECK(at("Squeeze") == 13);
  CHECK(at("BatchNormalization") == 15);
  CHECK(at("Dropout") == 13);
  CHECK(at("Range") == 11);
  CHECK(at("Add", "ai.onnx") == 14);
  // ORT contrib ops in the ONNX domain.
  CHECK(at("LayerNormalization") == 1);
  CHECK(at("SimplifiedLayerNormalization") == 1);
  CHECK(at("MaxPoolGrad") == 9);
  CHECK(at("Gelu") == 20);
  // Non-ONNX domains are all version 1, known or not.
  CHECK(at("FusedMatMul", "com.microsoft") == 1);
  CHECK(at("NoSuchOp", "com.microsoft") == 1);
  CHECK(at("ATen", "org.pytorch.aten") == 1);
  // Unknown op in the ONNX domain.
  CHECK(at("NoSuchOp") == 0);

  g.opsets[""] = 12;
  CHECK(at("Where") == 9);
  CHECK(at("Softmax") == 11);
  CHECK(at("Add") == 7);
  CHECK(at("Dropout") == 12);
  CHECK(at("Unsqueeze") == 11);

  g.opsets[""] = 17;
  CHECK(at("LayerNormalization") == 17);
  CHECK(at("SimplifiedLayerNormalization") == 1);

  // Newer than the linked ONNX (table).
  g.opsets[""] = 18;
  CHECK(at("Split") == 18);
  CHECK(at("ReduceMean") == 18);
  CHECK(at("ReduceSum") == 13);
  CHECK(at("Pad") == 18);
  CHECK(at("Cast") == 13);
  CHECK(at("Resize") == 18);
  g.opsets[""] = 21;
  CHECK(at("Cast") == 21);
  CHECK(at("Reshape") == 21);
  CHECK(at("Squeeze") == 21);
  CHECK(at("Unsqueeze") == 21);
  CHECK(at("Transpose") == 21);
  CHECK(at("Equal") == 19);
  CHECK(at("ConstantOfShape") == 21);
  CHECK(at("Gelu") == 20);
  CHECK(at("Pad") == 21);
  CHECK(at("Identity") == 21);
  CHECK(at("Shape") == 21);
  CHECK(at("Size") == 21);
  CHECK(at("Flatten") == 21);
  CHECK(at("Where") == 16);
  CHECK(at("Expand") == 13);
  CHECK(at("Gather") == 13);
  CHECK(at("Tile") == 13);
  CHECK(at("Range") == 11);
  CHECK(at("Slice") == 13);
  CHECK(at("Resize") == 19);
  CHECK(at("ReduceMax") == 20);
  CHECK(at("LayerNormalization") == 17);
  g.opsets[""] = 20;
  CHECK(at("ConstantOfShape") == 20);
  CHECK(at("Cast") == 19);

  // ai.onnx.ml, including versions newer than the linked ONNX.
  g.opsets["ai.onnx.ml"] = 3;
  CHECK(at("LabelEncoder", "ai.onnx.ml") == 2);
  CHECK(at("TreeEnsembleRegressor", "ai.onnx.ml") == 3);
  g.opsets["ai.onnx.ml"] = 5;
  CHECK(at("LabelEncoder", "ai.onnx.ml") == 4);
  CHECK(at("TreeEnsembleRegressor", "ai.onnx.ml") == 5);
  CHECK(at("NoSuchOp", "ai.onnx.ml") == 0);

  // ResolveSinceVersions fills every node.
  Node a;
  a.op_type = "Add";
  Node f;
  f.op_type = "FusedMatMul";
  f.domain = "com.microsoft";
  g.nodes = {a, f};
  g.opsets[""] = 15;
  ResolveSinceVersions(g);
  CHECK(g.nodes[0].since_version == 14);
  CHECK(g.nodes[1].since_version == 1);
}

}  // namespace memopt

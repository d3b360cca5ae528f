// Scan must stay roughly linear in the node count: a synthetic 96-layer transformer training
// graph with about 50k nodes scans in well under a few seconds.
#include <algorithm>
#include <chrono>
#include <string>

#include <catch2/catch.hpp>

#include "analysis/scan.h"
#include "io/model_loader.h"
#include "shape/shape_infer.h"

namespace memopt {
namespace {

class Builder {
 public:
  explicit Builder(onnx::GraphProto* g) : g_(g) {}

  std::string Node(const std::string& op, std::vector<std::string> inputs, const std::string& domain = "") {
    std::string out = "t" + std::to_string(next_++);
    onnx::NodeProto* n = g_->add_node();
    n->set_name("n" + out);
    n->set_op_type(op);
    n->set_domain(domain);
    for (const std::string& in : inputs) n->add_input(in);
    n->add_output(out);
    return out;
  }
  onnx::NodeProto* last() { return g_->mutable_node(g_->node_size() - 1); }

 private:
  onnx::GraphProto* g_;
  int next_ = 0;
};

void AddFloatInitializer(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    n *= d;
  }
  t->set_raw_data(std::string(static_cast<size_t>(n) * 4, '\0'));
}

// Per layer: attention-like block (LN, MatMul, Softmax, Mul, residual Add), MLP block (LN, MatMul,
// Gelu, then `chain` elementwise ops, residual Add); the backward pass multiplies the gradient
// by every second forward activation, so those are stashed.
onnx::ModelProto SyntheticTransformer(int layers, int chain) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  opset = model.add_opset_import();
  opset->set_domain("com.microsoft");
  opset->set_version(1);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("synthetic");
  onnx::ValueInfoProto* x = g->add_input();
  x->set_name("x");
  auto* tt = x->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_param("batch");
  tt->mutable_shape()->add_dim()->set_dim_param("seq");
  tt->mutable_shape()->add_dim()->set_dim_value(64);
  AddFloatInitializer(g, "scale", {64});
  AddFloatInitializer(g, "bias", {64});
  AddFloatInitializer(g, "W", {64, 64});

  Builder b(g);
  const char* elementwise[] = {"Add", "Mul", "Relu", "Neg", "Identity", "Sub"};
  std::vector<std::vector<std::string>> activations(layers);
  std::string h = "x";
  for (int l = 0; l < layers; ++l) {
    auto& acts = activations[l];
    std::string ln = b.Node("LayerNormalization", {h, "scale", "bias"});
    std::string mm = b.Node("MatMul", {ln, "W"});
    std::string sm = b.Node("Softmax", {mm});
    std::string att = b.Node("Mul", {sm, mm});
    std::string res = b.Node("Add", {h, att});
    std::string ln2 = b.Node("LayerNormalization", {res, "scale", "bias"});
    std::string f = b.Node("MatMul", {ln2, "W"});
    f = b.Node("Gelu", {f}, "com.microsoft");
    acts = {ln, mm, sm, att, res, ln2, f};
    for (int i = 0; i < chain; ++i) {
      const std::string op = elementwise[i % 6];
      f = (op == "Add" || op == "Mul" || op == "Sub") ? b.Node(op, {f, f}) : b.Node(op, {f});
      acts.push_back(f);
    }
    h = b.Node("Add", {res, f});
    acts.push_back(h);
  }
  std::string grad = b.Node("YieldOp", {h}, "com.microsoft");
  onnx::AttributeProto* attr = b.last()->add_attribute();
  attr->set_name("full_shape_outputs");
  attr->set_type(onnx::AttributeProto::INTS);
  attr->add_ints(0);
  for (int l = layers - 1; l >= 0; --l) {
    const auto& acts = activations[l];
    for (size_t i = acts.size(); i-- > 0;) {
      if (i % 2 == 0) grad = b.Node("Mul", {grad, acts[i]});
    }
  }
  onnx::ValueInfoProto* out = g->add_output();
  out->set_name(grad);
  return model;
}

// Seconds that Scan takes on a shape-inferred model, and its result.
double TimedScan(Graph& graph, Expected<ScanResult>& result) {
  const auto start = std::chrono::steady_clock::now();
  result = Scan(graph, ScanOptions{});
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Scan's time grows linearly with the graph: four times the layers take at most eight times as
// long (a quadratic step would take sixteen). A ratio, not a time limit, so that it holds in every
// build (Release, -O0 under the sanitizers) and on every machine.
TEST_CASE("scan: ~50k-node synthetic transformer scans in linear time", "[analysis][scan][perf]") {
  Expected<Model> small = ModelFromProto(SyntheticTransformer(24, 330));
  Expected<Model> model = ModelFromProto(SyntheticTransformer(96, 330));
  INFO(model.status().message());
  REQUIRE(small.ok());
  REQUIRE(model.ok());
  REQUIRE(model->graph.nodes.size() > 48000);
  REQUIRE(InferShapes(small->graph).ok());
  REQUIRE(InferShapes(model->graph).ok());
  Expected<ScanResult> small_result = InternalError("not run");
  Expected<ScanResult> r = InternalError("not run");
  // The smaller time is the least of two runs, so that a pause on a busy machine cannot shrink the
  // allowance.
  const double small_seconds = std::min(TimedScan(small->graph, small_result), TimedScan(small->graph, small_result));
  const double seconds = TimedScan(model->graph, r);
  REQUIRE(small_result.ok());
  REQUIRE(r.ok());
  INFO("Scan of " << small->graph.nodes.size() << " nodes took " << small_seconds << " s, of "
                  << model->graph.nodes.size() << " nodes " << seconds << " s");
  CHECK(seconds < 8.0 * small_seconds + 0.05);
  CHECK(r->layer_boundaries.size() == 96);
  CHECK_FALSE(r->plans.empty());
  CHECK(r->order.order.size() == model->graph.nodes.size());
}

}  // namespace
}  // namespace memopt

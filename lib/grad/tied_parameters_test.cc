// Initializers that an eval-mode export merged (one LayerNorm weight read by every layer) are
// reported by grad; parameters one module reads twice, tied embeddings and constants are not.
#include "grad/tied_parameters.h"

#include <catch2/catch.hpp>

#include "grad/grad_builder.h"

namespace memopt {
namespace {

/// The model of `text` with its nodes named `names` (node and proto), as torch.onnx names them.
Model Named(const std::string& text, const std::vector<std::string>& names) {
  auto m = LoadModelFromText(text);
  INFO(m.status().message());
  REQUIRE(m.ok());
  REQUIRE(m->graph.nodes.size() == names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    m->graph.nodes[i].name = names[i];
    m->graph.nodes[i].proto.set_name(names[i]);
  }
  return std::move(m).value();
}

std::vector<TiedParameter> Tied(const Model& m, const GradOptions& options = {}) {
  auto r = BuildGradientGraph(m, options);
  INFO(r.status().message());
  REQUIRE(r.ok());
  return r->tied_parameters;
}

constexpr const char* kTwoLayers = R"(<ir_version: 8, opset_import: ["" : 17]>
  g (float[2, 4] x) => (float loss)
  <float[4] ln_w = {1, 1, 1, 1}, float[4] ln_b = {0, 0, 0, 0},
   float[4, 4] w0 = {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}, float[4, 4] w1 = {2,1,4,3,6,5,8,7,10,9,12,11,14,13,16,15}> {
    a0 = LayerNormalization(x, ln_w, ln_b)
    m0 = MatMul(a0, w0)
    a1 = LayerNormalization(m0, ln_w, ln_b)
    m1 = MatMul(a1, w1)
    loss = ReduceSum<keepdims = 0>(m1)
  })";

TEST_CASE("tied parameters: one LayerNorm weight and bias read by two layers", "[grad][tied]") {
  const Model m = Named(kTwoLayers, {"/h.0/ln/LayerNormalization", "/h.0/fc/MatMul", "/h.1/ln/LayerNormalization",
                                     "/h.1/fc/MatMul", "/loss/ReduceSum"});
  const std::vector<TiedParameter> tied = Tied(m);
  REQUIRE(tied.size() == 2);
  CHECK(tied[0].initializer == "ln_w");
  CHECK(tied[1].initializer == "ln_b");
  CHECK(tied[0].nodes == std::vector<std::string>{"/h.0/ln/LayerNormalization", "/h.1/ln/LayerNormalization"});
  CHECK(tied[0].modules == 2);

  // Frozen tensors are not trained, so not tied either.
  GradOptions frozen;
  frozen.frozen = "^ln_";
  CHECK(Tied(m, frozen).empty());
}

TEST_CASE("tied parameters: a module called twice reads its own parameter twice", "[grad][tied]") {
  // The same LayerNorm module applied to two tensors: torch.onnx names both calls in one scope.
  const Model m = Named(kTwoLayers, {"/norm/LayerNormalization", "/h.0/fc/MatMul", "/norm/LayerNormalization_1",
                                     "/h.1/fc/MatMul", "/loss/ReduceSum"});
  CHECK(Tied(m).empty());
}

TEST_CASE("tied parameters: unscoped node names count as modules of their own", "[grad][tied]") {
  const Model m = Named(kTwoLayers, {"LayerNorm_0", "MatMul_1", "LayerNorm_2", "MatMul_3", "ReduceSum_4"});
  const std::vector<TiedParameter> tied = Tied(m);
  REQUIRE(tied.size() == 2);
  CHECK(tied[0].nodes == std::vector<std::string>{"LayerNorm_0", "LayerNorm_2"});
}

TEST_CASE("tied parameters: tied embeddings, constants and single readers are not reported", "[grad][tied]") {
  // GPT-2 ties the token embedding to the LM head on purpose: Gather is no parameter slot. The
  // scalar `half` feeds two Mul nodes (no parametric op), and each bias Add reads its own bias.
  const Model m = Named(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (int64[2] ids) => (float loss)
    <float[5, 4] wte = {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20}, float half = {0.5},
     float[4, 4] w = {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}, float[4] b = {1, 2, 3, 4}> {
      e = Gather(wte, ids)
      h0 = Mul(e, half)
      p = MatMul(h0, w)
      q = Add(p, b)
      h1 = Mul(q, half)
      logits = Gemm<transB = 1>(h1, wte)
      loss = ReduceSum<keepdims = 0>(logits)
    })",
                        {"/wte/Gather", "/h.0/Mul", "/h.0/fc/MatMul", "/h.0/fc/Add", "/h.1/Mul", "/lm_head/Gemm",
                         "/loss/ReduceSum"});
  CHECK(Tied(m).empty());
}

TEST_CASE("tied parameters: a zero bias that two Linear layers read", "[grad][tied]") {
  const Model m = Named(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[2, 4] x) => (float loss)
    <float[4, 4] w0 = {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16},
     float[4, 4] w1 = {2,1,4,3,6,5,8,7,10,9,12,11,14,13,16,15}, float[4] zero = {0, 0, 0, 0}> {
      p0 = MatMul(x, w0)
      h0 = Add(p0, zero)
      r = Relu(h0)
      p1 = MatMul(r, w1)
      h1 = Add(zero, p1)
      loss = ReduceSum<keepdims = 0>(h1)
    })",
                        {"/fc0/MatMul", "/fc0/Add", "/relu/Relu", "/fc1/MatMul", "/fc1/Add", "/loss/ReduceSum"});
  const std::vector<TiedParameter> tied = Tied(m);
  REQUIRE(tied.size() == 1);
  CHECK(tied[0].initializer == "zero");
  CHECK(tied[0].nodes == std::vector<std::string>{"/fc0/Add", "/fc1/Add"});
}

}  // namespace
}  // namespace memopt

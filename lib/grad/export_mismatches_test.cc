// The warnings for exports whose gradients differ from PyTorch's: a tied weight split into a
// transposed copy, and inference-mode BatchNormalization on the gradient path.
#include "grad/export_mismatches.h"

#include <catch2/catch.hpp>

#include "grad/grad_builder.h"

namespace memopt {
namespace {

Model Text(const std::string& text) {
  auto m = LoadModelFromText(text);
  INFO(m.status().message());
  REQUIRE(m.ok());
  return std::move(m).value();
}

std::vector<std::string> Mismatches(const Model& model) {
  auto r = BuildGradientGraph(model);
  INFO(r.status().message());
  REQUIRE(r.ok());
  return r->export_mismatches;
}

// An LM: Gather from the table emb [4, 3], project with head [3, 4].
std::string Lm(const std::string& head_values) {
  return R"(<ir_version: 8, opset_import: ["" : 17]>
    g (int64[2] ids) => (float loss) <float[4, 3] emb = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, float[3, 4] head = {)" +
         head_values + R"(}> {
      h = Gather(emb, ids)
      logits = MatMul(h, head)
      loss = ReduceSum <keepdims = 0> (logits)
    })";
}

TEST_CASE("export mismatches: a tied LM head written as a transposed copy of the table warns", "[grad]") {
  // head = emb transposed: the TorchScript export of a tied embedding.
  std::vector<std::string> w = Mismatches(Text(Lm("1, 4, 7, 10, 2, 5, 8, 11, 3, 6, 9, 12")));
  REQUIRE(w.size() == 1);
  CHECK(w[0].rfind("initializer 'head' [3, 4] holds the embedding table 'emb' [4, 3] transposed", 0) == 0);
  CHECK(w[0].find("'emb_grad' + the transpose of 'head_grad'") != std::string::npos);
  // Another head of the same shape: no tie, no warning.
  CHECK(Mismatches(Text(Lm("1, 4, 7, 10, 2, 5, 8, 11, 3, 6, 9, 13"))).empty());
}

const char* kBatchNorm = R"(<ir_version: 8, opset_import: ["" : 15]>
    g (float[2, 3, 4, 4] x) => (float loss) <float[3] scale = {1, 2, 3}, float[3] bias = {0, 1, 0},
                                            float[3] mean = {0, 0, 0}, float[3] var = {1, 1, 1}> {
      y = BatchNormalization (x, scale, bias, mean, var)
      loss = ReduceSum <keepdims = 0> (y)
    })";

TEST_CASE("export mismatches: inference-mode BatchNormalization on the gradient path warns", "[grad]") {
  std::vector<std::string> w = Mismatches(Text(kBatchNorm));
  REQUIRE(w.size() == 1);
  CHECK(w[0].rfind("1 BatchNormalization node(s) on the gradient path run in inference mode ('BatchNormalization#0')", 0) == 0);
  CHECK(w[0].find("('mean', 'var')") != std::string::npos);

  // Exported from an inference op (torch.export metadata): the model was exported in eval mode.
  Model eval = Text(kBatchNorm);
  onnx::StringStringEntryProto entry;
  entry.set_key("pkg.torch.onnx.fx_node");
  entry.set_value("%_native_batch_norm_legit_no_training : [num_users=1] = call_function[target=torch.ops.aten."
                  "_native_batch_norm_legit_no_training.default](args = (%x, %p_scale, %p_bias, %b_mean, %b_var, 0.1, 1e-05))");
  onnx::NodeProto& proto = eval.graph.nodes[0].proto;
  proto.GetReflection()->MutableUnknownFields(&proto)->AddLengthDelimited(9, entry.SerializeAsString());
  CHECK(Mismatches(eval).empty());

  // Training mode: no warning.
  std::string training = kBatchNorm;
  training.replace(training.find("BatchNormalization ("), 20, "BatchNormalization <training_mode = 1> (");
  CHECK(Mismatches(Text(training)).empty());
}

}  // namespace
}  // namespace memopt

#include "shape/dims_check.h"

#include <catch2/catch.hpp>

#include "io/model_loader.h"
#include "shape/shape_infer.h"

namespace memopt {
namespace {

/// Loads `text`, infers shapes, binds `dims_text` and returns CheckDimBindings' message ("" = ok).
std::string Check(const char* text, const char* dims_text) {
  auto model = LoadModelFromText(text);
  INFO(model.status().message());
  REQUIRE(model.ok());
  const std::vector<TensorInfo> declared = DeclaredInfos(model->graph);
  REQUIRE(InferShapes(model->graph).ok());
  auto dims = DimBindings::Parse(dims_text);
  REQUIRE(dims.ok());
  const Status s = CheckDimBindings(model->graph, declared, *dims);
  if (!s.ok()) CHECK(s.code() == ErrorCode::kUsage);
  return s.message();
}

constexpr const char* kDeclaredOutput = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[batch, 4] x) => (float[3, 4] y) {
    y = Relu(x)
  }
)";

constexpr const char* kBroadcast = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[batch, 4] x, float[3, 4] w) => (float[batch, 4] y) {
    y = Add(x, w)
  }
)";

constexpr const char* kMatMul = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[batch, d] x, float[784, 10] w) => (float[batch, 10] y) {
    y = MatMul(x, w)
  }
)";

TEST_CASE("dims check: bindings the model agrees with pass", "[shape][dims]") {
  CHECK(Check(kDeclaredOutput, "") == "");
  CHECK(Check(kDeclaredOutput, "batch=3") == "");
  CHECK(Check(kBroadcast, "batch=3") == "");
  CHECK(Check(kMatMul, "batch=8,d=784") == "");
  CHECK(Check(kMatMul, "batch=8") == "");
}

TEST_CASE("dims check: a declared dim contradicted by a binding is named", "[shape][dims]") {
  CHECK(Check(kDeclaredOutput, "batch=8") ==
        "--dims batch=8 contradicts the model: tensor 'y' is declared [3, 4], but under these dims its inputs "
        "make it [8, 4] (computed by node 'Relu#0' (Relu)); check the --dims values");
}

TEST_CASE("dims check: a broadcast against a constant contradicted by a binding is named", "[shape][dims]") {
  const std::string m = Check(kBroadcast, "batch=8");
  CHECK(m.find("--dims batch=8 contradicts the model: tensor 'y' is [3, 4], but these dims make its inputs give [") ==
        0);
}

TEST_CASE("dims check: a matmul inner dim learned from a weight is enforced", "[shape][dims]") {
  const std::string m = Check(kMatMul, "batch=8,d=100");
  CHECK(m.find("--dims batch=8,d=100 contradicts the model: ") == 0);
  CHECK(m.find("MatMul") != std::string::npos);
}

}  // namespace
}  // namespace memopt

// Finite-difference checks of MatMul (all rank combinations, batch broadcasting, rank-1
// operands), Gemm (transposes, alpha, beta, bias shapes) and Einsum gradients (ops/matmul/matmul_gradients.cc).
#include "grad/grad_check_util.h"

namespace memopt {
namespace {

using testing::CountOps;
using testing::GradCheck;
using testing::RunGradCheck;

GradCheck Mm(const std::string& a, const std::string& b, const std::string& y, int opset = 17) {
  GradCheck c;
  c.text = "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + "]>\n g (double" + a + " a, double" + b +
           " b) => (double" + y + " y) {\n y = MatMul(a, b)\n }";
  c.options.trainable = "^(a|b)$";
  return c;
}

TEST_CASE("grad check: MatMul shapes", "[grad][gradcheck]") {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"[3, 4]", "[4, 2]", "[3, 2]"},                    // 2-D x 2-D: Gemm
      {"[2, 3, 4]", "[4, 5]", "[2, 3, 5]"},              // batched x 2-D: rows flattened for dB
      {"[3, 4]", "[2, 4, 5]", "[2, 3, 5]"},              // 2-D x batched: dA summed over the batch
      {"[2, 1, 3, 4]", "[1, 3, 4, 2]", "[2, 3, 3, 2]"},  // both broadcast
      {"[2, 3, 4]", "[2, 4, 2]", "[2, 3, 2]"},           // same batch
      {"[4]", "[4, 3]", "[3]"},                          // rank-1 A
      {"[3, 4]", "[4]", "[3]"},                          // rank-1 B
      {"[4]", "[4]", "[]"},                              // dot product
      {"[2, 3, 4]", "[4]", "[2, 3]"},                    // batched x rank-1
      {"[4]", "[2, 4, 3]", "[2, 3]"},                    // rank-1 x batched
  };
  for (const auto& [a, b, y] : cases) {
    SECTION(a + " x " + b) {
      for (int opset : {12, 17}) RunGradCheck(Mm(a, b, y, opset));
    }
  }
}

TEST_CASE("grad check: MatMul with symbolic batch dims", "[grad][gradcheck]") {
  GradCheck c;
  c.text = R"(<ir_version: 8, opset_import: ["" : 17]>
    g (double[2, 3, 4] x, int64[3] s) => (double[2, 3, 5] y)
    <double[4, 5] w = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}> {
      a = Reshape(x, s)
      y = MatMul(a, w)
    })";
  c.fixed["s"] = testing::Int64s({3}, {2, 3, 4});
  c.options.trainable = "^(x|w)$";
  auto r = RunGradCheck(c);
  CHECK(r.gradients == std::vector<std::string>{"x", "w"});  // graph inputs first, then initializers
}

TEST_CASE("grad check: Gemm", "[grad][gradcheck]") {
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      for (const std::string c_shape : {"[4]", "[1, 4]", "[3, 1]", "[3, 4]"}) {
        SECTION("transA " + std::to_string(ta) + " transB " + std::to_string(tb) + " C " + c_shape) {
          GradCheck c;
          const std::string a = ta ? "[2, 3]" : "[3, 2]", b = tb ? "[4, 2]" : "[2, 4]";
          c.text = "<ir_version: 8, opset_import: [\"\" : 17]>\n g (double" + a + " a, double" + b + " b, double" +
                   c_shape + " c) => (double[3, 4] y) {\n y = Gemm <transA = " + std::to_string(ta) +
                   ", transB = " + std::to_string(tb) + ", alpha = 0.75, beta = 1.5> (a, b, c)\n }";
          c.options.trainable = "^(a|b|c)$";
          RunGradCheck(c);
        }
      }
    }
  }
}

TEST_CASE("grad check: Gemm without C, alpha 1", "[grad][gradcheck]") {
  GradCheck c;
  c.text = R"(<ir_version: 8, opset_import: ["" : 17]>
    g (double[3, 2] a, double[4, 2] b) => (double[3, 4] y) {
      y = Gemm <transB = 1> (a, b)
    })";
  c.options.trainable = "^(a|b)$";
  auto r = RunGradCheck(c);
  CHECK(CountOps(r, "Gemm") == 3);
}

TEST_CASE("grad check: Einsum", "[grad][gradcheck]") {
  const std::vector<std::tuple<std::string, std::string, std::string, std::string>> cases = {
      {"bij,bjk->bik", "[2, 3, 4]", "[2, 4, 2]", "[2, 3, 2]"},
      {"ij,jk", "[3, 4]", "[4, 2]", "[3, 2]"},  // implicit output
      {"bhqd,bhkd->bhqk", "[1, 2, 3, 4]", "[1, 2, 5, 4]", "[1, 2, 3, 5]"},
      {"ij,j->i", "[3, 4]", "[4]", "[3]"},
      {"ij,k->ik", "[3, 4]", "[2]", "[3, 2]"},  // j only in the first operand: restored by Expand
      {"...ij,jk->...ik", "[2, 3, 4]", "[4, 2]", "[2, 3, 2]"},
  };
  for (const auto& [eq, a, b, y] : cases) {
    SECTION(eq) {
      GradCheck c;
      c.text = "<ir_version: 8, opset_import: [\"\" : 17]>\n g (double" + a + " a, double" + b + " b) => (double" + y +
               " y) {\n y = Einsum <equation = \"" + eq + "\"> (a, b)\n }";
      c.options.trainable = "^(a|b)$";
      RunGradCheck(c);
    }
  }
}

}  // namespace
}  // namespace memopt

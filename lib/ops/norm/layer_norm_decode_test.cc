// The layer normalisations' decode (layer_norm.h), which the CPU and CUDA kernels share: the rows
// at `axis`, the attributes' defaults, and one error message per bad input.
#include <catch2/catch.hpp>

#include "ops/norm/layer_norm.h"

namespace memopt::norm {
namespace {

Node NodeWith(std::vector<std::pair<std::string, int64_t>> ints) {
  Node n;
  n.op_type = "LayerNormalization";
  onnx::NodeProto& p = n.proto;
  for (const auto& [name, v] : ints) {
    auto* a = p.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  return n;
}

TEST_CASE("layer norm decode: rows at axis, stash type and defaults", "[ops][norm]") {
  const Tensor x = Tensor::Meta(DataType::kFloat16, {2, 3, 4});
  const Tensor scale = Tensor::Meta(DataType::kFloat16, {3, 4});
  auto p = DecodeLayerNorm(NodeWith({{"axis", 1}, {"stash_type", 11}}), x, scale, nullptr);
  REQUIRE(p.ok());
  CHECK(p->rows.axis == 1);
  CHECK(p->rows.rows == 2);
  CHECK(p->rows.cols == 12);
  CHECK(p->rows.row_shape == std::vector<int64_t>{3, 4});
  CHECK(p->rows.stat_shape == std::vector<int64_t>{2, 1, 1});
  CHECK(p->stash == DataType::kDouble);
  CHECK(p->y_type == DataType::kFloat16);
  CHECK(p->epsilon == Approx(1e-5));

  auto last = DecodeLayerNorm(NodeWith({}), x, Tensor::Meta(DataType::kFloat, {4}), nullptr);
  REQUIRE(last.ok());
  CHECK(last->rows.rows == 6);
  CHECK(last->stash == DataType::kFloat);
  CHECK(last->y_type == DataType::kFloat);  // Scale's type
}

TEST_CASE("layer norm decode: bad axis and parameters are errors naming the shapes", "[ops][norm]") {
  const Tensor x = Tensor::Meta(DataType::kFloat, {2, 3, 4});
  auto axis = DecodeLayerNorm(NodeWith({{"axis", 3}}), x, Tensor::Meta(DataType::kFloat, {4}), nullptr);
  REQUIRE_FALSE(axis.ok());
  CHECK(axis.status().message() == "axis 3 is out of range for X [2, 3, 4]");
  const Tensor bias = Tensor::Meta(DataType::kFloat, {3});
  auto b = DecodeLayerNorm(NodeWith({}), x, Tensor::Meta(DataType::kFloat, {4}), &bias);
  REQUIRE_FALSE(b.ok());
  CHECK(b.status().message() == "B [3] does not broadcast to the normalized shape [4]");
}

TEST_CASE("skip norm decode: input slots, skip rows and checks", "[ops][norm]") {
  const Tensor x = Tensor::Meta(DataType::kFloat, {2, 3, 4}), skip = Tensor::Meta(DataType::kFloat, {3, 4});
  const Tensor gamma = Tensor::Meta(DataType::kFloat, {4}), bias = Tensor::Meta(DataType::kFloat, {4});
  // SkipSimplifiedLayerNormalization: input, skip, gamma, bias.
  auto p = DecodeSkipNorm(NodeWith({}), {&x, &skip, &gamma, &bias}, true);
  REQUIRE(p.ok());
  CHECK(p->hidden == 4);
  CHECK(p->rows == 6);
  CHECK(p->skip_rows == 3);
  CHECK(p->beta_input == -1);
  CHECK(p->bias_input == 3);
  CHECK(p->stat_shape == std::vector<int64_t>{2, 3, 1});
  CHECK(p->epsilon == Approx(1e-12));
  // SkipLayerNormalization: input 3 is beta.
  auto full = DecodeSkipNorm(NodeWith({}), {&x, &skip, &gamma, &bias}, false);
  REQUIRE(full.ok());
  CHECK(full->beta_input == 3);
  CHECK(full->bias_input == -1);

  auto missing = DecodeSkipNorm(NodeWith({}), {&x, nullptr, &gamma}, false);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() == "skip and gamma are required");
  const Tensor bad_skip = Tensor::Meta(DataType::kFloat, {5});
  auto mismatch = DecodeSkipNorm(NodeWith({}), {&x, &bad_skip, &gamma}, false);
  REQUIRE_FALSE(mismatch.ok());
  CHECK(mismatch.status().message() == "skip [5] does not match input [2, 3, 4]");
  const Tensor bad_gamma = Tensor::Meta(DataType::kFloat, {3});
  auto hidden = DecodeSkipNorm(NodeWith({}), {&x, &skip, &bad_gamma}, false);
  REQUIRE_FALSE(hidden.ok());
  CHECK(hidden.status().message() == "gamma/beta/bias [3] must have 4 elements (the hidden size)");
}

}  // namespace
}  // namespace memopt::norm

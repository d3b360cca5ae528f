// The Dropout family's decode (dropout.h), which the CPU and CUDA kernels share: the input roles,
// the mode and ratio of each opset and variant, which scalars are read, and one message per bad
// input.
#include <catch2/catch.hpp>
#include <map>

#include "ops/dropout/dropout.h"

namespace memopt::dropout {
namespace {

Node MakeNode(std::string domain, std::string op, int since_version = 13) {
  Node n;
  n.domain = std::move(domain);
  n.op_type = std::move(op);
  n.since_version = since_version;
  return n;
}

void AddAttr(Node& n, const std::string& name, float f, int64_t i, bool is_float) {
  auto* a = n.proto.add_attribute();
  a->set_name(name);
  if (is_float) {
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(f);
  } else {
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(i);
  }
}

/// Scalars from a map (absent: the default), recording which inputs were read.
struct FakeScalars {
  std::map<int, double> values;
  std::vector<int> read;
  ScalarReader Reader() {
    return [this](int i, double def) -> Expected<double> {
      read.push_back(i);
      auto it = values.find(i);
      return it == values.end() ? def : it->second;
    };
  }
};

TEST_CASE("dropout decode: opset 12+ reads training_mode, then the ratio only in training", "[ops][dropout]") {
  const Tensor x = Tensor::Meta(DataType::kFloat, {4, 8});
  const Node node = MakeNode("", "Dropout");
  FakeScalars inference;
  auto p = DecodeDropout(node, {&x, nullptr, nullptr}, inference.Reader());
  REQUIRE(p.ok());
  CHECK_FALSE(p->training);
  CHECK(p->ratio == 0.0f);
  CHECK_FALSE(p->random());
  CHECK(p->mask == MaskKind::kBool);
  CHECK(inference.read == std::vector<int>{2});

  FakeScalars training{{{1, 0.25}, {2, 1.0}}, {}};
  p = DecodeDropout(node, {&x, &x, &x}, training.Reader());
  REQUIRE(p.ok());
  CHECK(p->training);
  CHECK(p->ratio == 0.25f);
  CHECK(p->random());
  CHECK(training.read == std::vector<int>{2, 1});

  FakeScalars default_ratio{{{2, 1.0}}, {}};
  p = DecodeDropout(node, {&x}, default_ratio.Reader());
  REQUIRE(p.ok());
  CHECK(p->ratio == 0.5f);

  FakeScalars bad{{{1, 1.5}, {2, 1.0}}, {}};
  p = DecodeDropout(node, {&x}, bad.Reader());
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().message() == "dropout ratio 1.500000 is outside [0, 1]");
  // Outside training mode the ratio is not used, so it is not checked.
  FakeScalars bad_unused{{{1, 1.5}}, {}};
  CHECK(DecodeDropout(node, {&x}, bad_unused.Reader()).ok());
}

TEST_CASE("dropout decode: opsets before 12 take ratio and is_test attributes", "[ops][dropout]") {
  const Tensor x = Tensor::Meta(DataType::kFloat, {3});
  FakeScalars none;
  Node v6 = MakeNode("", "Dropout", 6);
  AddAttr(v6, "ratio", 0.2f, 0, true);
  auto p = DecodeDropout(v6, {&x}, none.Reader());
  REQUIRE(p.ok());
  CHECK(p->training);
  CHECK(p->ratio == 0.2f);
  CHECK(p->mask == MaskKind::kData);
  CHECK(none.read.empty());

  AddAttr(v6, "is_test", 0, 1, false);
  p = DecodeDropout(v6, {&x}, none.Reader());
  REQUIRE(p.ok());
  CHECK_FALSE(p->training);
  CHECK(p->ratio == 0.0f);

  auto v10 = DecodeDropout(MakeNode("", "Dropout", 10), {&x}, none.Reader());
  REQUIRE(v10.ok());
  CHECK_FALSE(v10->training);
  CHECK(v10->mask == MaskKind::kBool);
}

TEST_CASE("dropout decode: the com.microsoft variants' inputs and masks", "[ops][dropout]") {
  const Tensor x = Tensor::Meta(DataType::kFloat16, {2, 6});
  const Tensor bias = Tensor::Meta(DataType::kFloat16, {6});
  FakeScalars scalars{{{3, 0.1}, {4, 1.0}}, {}};

  auto bias_dropout =
      DecodeDropout(MakeNode("com.microsoft", "BiasDropout", 1), {&x, &bias, &x, nullptr, nullptr}, scalars.Reader());
  REQUIRE(bias_dropout.ok());
  CHECK(bias_dropout->bias == 1);
  CHECK(bias_dropout->residual == 2);
  CHECK(bias_dropout->mask == MaskKind::kBool);
  CHECK(bias_dropout->ratio == 0.1f);

  auto no_residual = DecodeDropout(MakeNode("com.microsoft", "BitmaskBiasDropout", 1), {&x, &bias}, scalars.Reader());
  REQUIRE(no_residual.ok());
  CHECK(no_residual->residual == -1);
  CHECK(no_residual->mask == MaskKind::kBitmask);

  FakeScalars bitmask_scalars{{{1, 0.3}, {2, 1.0}}, {}};
  auto bitmask = DecodeDropout(MakeNode("com.microsoft", "BitmaskDropout", 1), {&x}, bitmask_scalars.Reader());
  REQUIRE(bitmask.ok());
  CHECK(bitmask->bias == -1);
  CHECK(bitmask->mask == MaskKind::kBitmask);
  CHECK(bitmask->ratio == 0.3f);

  auto missing = DecodeDropout(MakeNode("com.microsoft", "BiasDropout", 1), {&x}, scalars.Reader());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message() == "input bias is missing");

  const Tensor bad_bias = Tensor::Meta(DataType::kFloat16, {5});
  auto bad = DecodeDropout(MakeNode("com.microsoft", "BiasDropout", 1), {&x, &bad_bias}, scalars.Reader());
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == "bias float16[5] does not broadcast onto data float16[2, 6]");

  const Tensor bad_residual = Tensor::Meta(DataType::kFloat, {2, 6});
  auto res = DecodeDropout(MakeNode("com.microsoft", "BiasDropout", 1), {&x, &bias, &bad_residual}, scalars.Reader());
  REQUIRE_FALSE(res.ok());
  CHECK(res.status().message() == "residual float[2, 6] must have the shape and type of data float16[2, 6]");
}

TEST_CASE("dropout decode: DropoutGrad's mask checks and training_mode defaults", "[ops][dropout]") {
  const Tensor dy = Tensor::Meta(DataType::kFloat, {40});
  const Tensor bools = Tensor::Meta(DataType::kBool, {40});
  const Tensor words = Tensor::Meta(DataType::kUint32, {2});
  FakeScalars none;

  // DropoutGrad defaults to training (ratio 0.5); BitmaskDropoutGrad to inference (scale 1).
  auto grad = DecodeDropoutGrad(MakeNode("com.microsoft", "DropoutGrad", 1), {&dy, &bools}, none.Reader());
  REQUIRE(grad.ok());
  CHECK_FALSE(grad->bitmask);
  CHECK(grad->ratio == 0.5f);
  auto bitmask = DecodeDropoutGrad(MakeNode("com.microsoft", "BitmaskDropoutGrad", 1), {&dy, &words}, none.Reader());
  REQUIRE(bitmask.ok());
  CHECK(bitmask->bitmask);
  CHECK(bitmask->ratio == 0.0f);

  auto wrong = DecodeDropoutGrad(MakeNode("com.microsoft", "BitmaskDropoutGrad", 1), {&dy, &bools}, none.Reader());
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.status().message() == "mask bool[40] must be uint32 with ceil(40/32) elements for dy float[40]");
  auto short_mask = DecodeDropoutGrad(MakeNode("com.microsoft", "DropoutGrad", 1), {&dy, &words}, none.Reader());
  REQUIRE_FALSE(short_mask.ok());
  CHECK(short_mask.status().message() == "mask uint32[2] must be bool with the shape of dy float[40]");
  auto no_mask = DecodeDropoutGrad(MakeNode("com.microsoft", "DropoutGrad", 1), {&dy}, none.Reader());
  REQUIRE_FALSE(no_mask.ok());
  CHECK(no_mask.status().message() == "input mask is missing");
}

}  // namespace
}  // namespace memopt::dropout

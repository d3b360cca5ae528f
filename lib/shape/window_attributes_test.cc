// Invalid attributes are errors of shape inference (so every subcommand reports them on load, the
// same way): the window attributes of convolutions and pooling, and axes/permutations that do not
// fit the input's rank.
#include "shape/window_attributes.h"

#include <catch2/catch.hpp>

#include "io/model_loader.h"
#include "shape/shape_infer.h"

namespace memopt {
namespace {

/// The error shape inference gives for `body` (one graph g (float[2, 3, 8, 8] x) => (...)).
std::string InferenceError(const std::string& body) {
  auto model = LoadModelFromText(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[2, 3, 8, 8] x, float[4, 3, 3, 3] w) => (float y) {
)" + body + "\n}");
  INFO(model.status().message());
  REQUIRE(model.ok());
  auto stats = InferShapes(model->graph);
  return stats.ok() ? std::string("<ok>") : stats.status().message();
}

TEST_CASE("window attributes: counts, signs and auto_pad", "[shape]") {
  CHECK(InferenceError("y = Conv <pads = [1, 1]> (x, w)") ==
        "node 'Conv#0' (Conv): pads has 2 entries, but the input has 2 spatial dims, which take 4 entries (the begins "
        "of every dim, then the ends: [x1_begin, x2_begin, ..., x1_end, x2_end, ...])");
  CHECK(InferenceError("y = Conv <strides = [1, 1, 1]> (x, w)") ==
        "node 'Conv#0' (Conv): strides has 3 entries, but the input has 2 spatial dims, which take 2 entries (one per dim)");
  CHECK(InferenceError("y = Conv <dilations = [1, 0]> (x, w)") ==
        "node 'Conv#0' (Conv): dilations has the entry 0; its entries must be positive");
  CHECK(InferenceError("y = MaxPool <kernel_shape = [2, 2], auto_pad = \"SAME\"> (x)") ==
        "node 'MaxPool#0' (MaxPool): unknown auto_pad 'SAME' (expected NOTSET, SAME_UPPER, SAME_LOWER or VALID)");
  CHECK(InferenceError("y = AveragePool <kernel_shape = [2]> (x)") ==
        "node 'AveragePool#0' (AveragePool): kernel_shape has 1 entry, but the input has 2 spatial dims, which take 2 "
        "entries (one per dim)");
  CHECK(InferenceError("y = ConvTranspose <output_padding = [1]> (x, w)") ==
        "node 'ConvTranspose#0' (ConvTranspose): output_padding has 1 entry, but the input has 2 spatial dims, which "
        "take 2 entries (one per dim)");
  CHECK(InferenceError("y = Conv <pads = [1, 1, 1, 1], strides = [2, 2], kernel_shape = [3, 3]> (x, w)") == "<ok>");
}

TEST_CASE("window attributes: with the rank unknown, the attributes must agree", "[shape]") {
  Node node;
  node.op_type = "Conv";
  auto* a = node.proto.add_attribute();
  a->set_name("kernel_shape");
  a->set_type(onnx::AttributeProto::INTS);
  a->add_ints(3);
  a->add_ints(3);
  auto* p = node.proto.add_attribute();
  p->set_name("pads");
  p->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 3; ++i) p->add_ints(1);
  Status s = shape::CheckWindowAttributes(node, -1);
  CHECK(s.message() ==
        "pads has 3 entries, but kernel_shape gives 2 spatial dims, which take 4 entries (the begins of every dim, then "
        "the ends: [x1_begin, x2_begin, ..., x1_end, x2_end, ...])");
  const onnx::AttributeProto pads = *p;
  node.proto.clear_attribute();
  *node.proto.add_attribute() = pads;
  CHECK(shape::CheckWindowAttributes(node, -1).message() ==
        "pads has 3 entries; it takes a begin and an end per spatial dim, an even count");
}

TEST_CASE("shape inference: axes and permutations outside the rank are errors", "[shape]") {
  CHECK(InferenceError("t = Transpose <perm = [0, 1, 2]> (x)\n y = ReduceSum <keepdims = 0> (t)") ==
        "node 'Transpose#0' (Transpose): Transpose perm [0, 1, 2] does not fit rank 4");
  CHECK(InferenceError("c = Concat <axis = 4> (x, x)\n y = ReduceSum <keepdims = 0> (c)") ==
        "node 'Concat#0' (Concat): Concat axis 4 out of range for rank 4");
  CHECK(InferenceError("f = Flatten <axis = 5> (x)\n y = ReduceSum <keepdims = 0> (f)") ==
        "node 'Flatten#0' (Flatten): Flatten axis 5 out of range for rank 4");
  CHECK(InferenceError("a, b = Split <axis = -5> (x)\n y = ReduceSum <keepdims = 0> (a)") ==
        "node 'Split#0' (Split): Split axis -5 out of range for rank 4");
}

}  // namespace
}  // namespace memopt

// The slice decode the CPU and CUDA Slice / SliceGrad kernels share (slice_region.h): clamping,
// the attribute and input forms, the messages for bad inputs, and where a region lies.
#include "exec/kernels/slice_region.h"

#include <catch2/catch.hpp>

namespace memopt {
namespace {

Node SliceNode(int since_version) {
  Node n;
  n.op_type = "Slice";
  n.since_version = since_version;
  return n;
}

void AddInts(Node& n, const std::string& name, const std::vector<int64_t>& values) {
  auto* a = n.proto.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

/// Inputs with these values (nullopt: omitted), and the reader over them.
struct Lists {
  std::vector<std::optional<std::vector<int64_t>>> values;
  std::vector<Tensor> metas;
  std::vector<const Tensor*> inputs;
  explicit Lists(std::vector<std::optional<std::vector<int64_t>>> v, DataType t = DataType::kInt64)
      : values(std::move(v)), metas(values.size()), inputs(values.size(), nullptr) {
    for (size_t i = 0; i < values.size(); ++i) {
      if (!values[i]) continue;
      metas[i] = Tensor::Meta(t, {static_cast<int64_t>(values[i]->size())});
      inputs[i] = &metas[i];
    }
  }
  IntListReader Reader() const {
    return [this](int i) -> Expected<std::vector<int64_t>> { return *values[static_cast<size_t>(i)]; };
  }
};

TEST_CASE("slice decode: clamping, negative steps and the default axes", "[kernels][slice]") {
  const std::vector<int64_t> shape = {4, 10};
  Lists in({std::vector<int64_t>{}, std::vector<int64_t>{-1, 1}, std::vector<int64_t>{-100, 100}, std::nullopt,
            std::vector<int64_t>{-2, 3}});
  auto r = DecodeSlice(SliceNode(13), shape, in.inputs, in.Reader());
  REQUIRE(r.ok());
  // dim 0: start -1 -> 3, end clamped to -1, step -2: 3, 1.
  CHECK((*r)[0].first == 3);
  CHECK((*r)[0].step == -2);
  CHECK((*r)[0].len == 2);
  // dim 1: 1 .. 10 by 3: 1, 4, 7.
  CHECK((*r)[1].first == 1);
  CHECK((*r)[1].len == 3);

  const SliceAddress a = AddressOf(shape, *r);
  CHECK(a.offset == 3 * 10 + 1);
  CHECK(a.strides == std::vector<int64_t>{-20, 3});
  CHECK(a.counts == std::vector<int64_t>{2, 3});
}

TEST_CASE("slice decode: the attribute form before opset 10", "[kernels][slice]") {
  Node n = SliceNode(1);
  AddInts(n, "starts", {1});
  AddInts(n, "ends", {3});
  AddInts(n, "axes", {1});
  Lists none({std::vector<int64_t>{}});
  auto r = DecodeSlice(n, {2, 5}, none.inputs, none.Reader());
  REQUIRE(r.ok());
  CHECK((*r)[0].len == 2);
  CHECK((*r)[1].first == 1);
  CHECK((*r)[1].len == 2);
}

TEST_CASE("slice decode: messages for missing, non-integer and mismatched inputs", "[kernels][slice]") {
  Lists missing({std::vector<int64_t>{}, std::vector<int64_t>{0}});
  auto r = DecodeSlice(SliceNode(13), {3}, missing.inputs, missing.Reader());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "input 2 ('ends') is missing");

  Lists floats({std::vector<int64_t>{}, std::vector<int64_t>{0}, std::vector<int64_t>{1}}, DataType::kFloat);
  r = DecodeSlice(SliceNode(13), {3}, floats.inputs, floats.Reader());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "input 'starts' must be an integer tensor, got float[1]");

  // SliceGrad(dY, shape, starts, ends, axes, steps): an empty axes list does not match starts.
  Lists grad({std::vector<int64_t>{}, std::vector<int64_t>{}, std::vector<int64_t>{0}, std::vector<int64_t>{2},
              std::vector<int64_t>{}});
  r = DecodeSliceGrad({3}, grad.inputs, grad.Reader());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "starts, ends, axes and steps must have the same length");

  Lists ok({std::vector<int64_t>{}, std::vector<int64_t>{}, std::vector<int64_t>{1}, std::vector<int64_t>{3}});
  r = DecodeSliceGrad({5}, ok.inputs, ok.Reader());
  REQUIRE(r.ok());
  CHECK((*r)[0].first == 1);
  CHECK((*r)[0].len == 2);
}

}  // namespace
}  // namespace memopt

// Unit tests of the shape/layout/index kernels on small cases whose expected values are worked out
// by hand (numpy semantics where ONNX follows numpy).
#include <catch2/catch.hpp>
#include <cstring>

#include "exec/kernel.h"
#include "helpers/cpu_kernels_of.h"

namespace memopt::testing {
namespace {

Tensor F32(std::vector<int64_t> shape, const std::vector<float>& v) {
  Tensor t(DataType::kFloat, std::move(shape));
  REQUIRE(static_cast<int64_t>(v.size()) == t.numel());
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}

Tensor I64(std::vector<int64_t> shape, const std::vector<int64_t>& v) {
  Tensor t(DataType::kInt64, std::move(shape));
  REQUIRE(static_cast<int64_t>(v.size()) == t.numel());
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return t;
}

Tensor Iota(std::vector<int64_t> shape) {
  Tensor t(DataType::kFloat, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

Tensor Strings(std::vector<int64_t> shape, const std::vector<std::string>& v) {
  Tensor t(DataType::kString, std::move(shape));
  t.strings() = v;
  return t;
}

std::vector<double> Values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.GetAsDouble(i));
  return v;
}

// One node run directly through the tensor kernels' registry.
class Call {
 public:
  explicit Call(const std::string& op, int since_version = 0, const std::string& domain = "", int outputs = 1) {
    node_.id = 0;
    node_.name = "n";
    node_.op_type = op;
    node_.domain = domain;
    node_.since_version = since_version;
    for (int i = 0; i < outputs; ++i) node_.outputs.push_back(100 + i);
  }
  Call& In(Tensor t) {
    node_.inputs.push_back(static_cast<ValueId>(inputs_.size()));
    inputs_.push_back(std::move(t));
    present_.push_back(true);
    return *this;
  }
  Call& Missing() {
    node_.inputs.push_back(kNone);
    inputs_.emplace_back();
    present_.push_back(false);
    return *this;
  }
  Call& Int(const std::string& name, int64_t v) {
    auto* a = Attr(name, onnx::AttributeProto::INT);
    a->set_i(v);
    return *this;
  }
  Call& Ints(const std::string& name, const std::vector<int64_t>& v) {
    auto* a = Attr(name, onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
    return *this;
  }
  Call& Float(const std::string& name, float v) {
    auto* a = Attr(name, onnx::AttributeProto::FLOAT);
    a->set_f(v);
    return *this;
  }
  Call& Str(const std::string& name, const std::string& v) {
    auto* a = Attr(name, onnx::AttributeProto::STRING);
    a->set_s(v);
    return *this;
  }
  Expected<std::vector<Tensor>> Run() {
    const KernelRegistry r = CpuKernelsOf({"layout/layout_cpu", "layout/shape_cpu", "index", "generate/generate_cpu", "matmul/einsum_cpu"});
    const KernelInfo* k = r.Find(node_.domain, node_.op_type);
    REQUIRE(k != nullptr);
    KernelContext ctx;
    ctx.node = &node_;
    for (size_t i = 0; i < inputs_.size(); ++i) ctx.inputs.push_back(present_[i] ? &inputs_[i] : nullptr);
    ctx.outputs.resize(node_.outputs.size());
    Status st = k->fn(ctx);
    if (!st.ok()) return st;
    return std::move(ctx.outputs);
  }
  std::vector<Tensor> Must() {
    auto r = Run();
    INFO(r.status().message());
    REQUIRE(r.ok());
    return std::move(r).value();
  }

 private:
  onnx::AttributeProto* Attr(const std::string& name, onnx::AttributeProto::AttributeType type) {
    auto* a = node_.proto.add_attribute();
    a->set_name(name);
    a->set_type(type);
    return a;
  }
  Node node_;
  std::vector<Tensor> inputs_;
  std::vector<bool> present_;
};

using V = std::vector<double>;
using S = std::vector<int64_t>;

TEST_CASE("Slice clamps and handles negative steps", "[tensor][kernels]") {
  auto run = [](int64_t start, int64_t end, int64_t step) {
    return Values(Call("Slice", 13)
                      .In(Iota({10}))
                      .In(I64({1}, {start}))
                      .In(I64({1}, {end}))
                      .In(I64({1}, {0}))
                      .In(I64({1}, {step}))
                      .Must()[0]);
  };
  CHECK(run(8, -100, -3) == V{8, 5, 2});
  CHECK(run(20, -20, -1) == V{9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
  CHECK(run(-3, 100, 1) == V{7, 8, 9});
  CHECK(run(5, 2, 1).empty());
  CHECK(run(-1, -11, -4) == V{9, 5, 1});
  // Steps at the int64 limits take one element (the count used to overflow).
  CHECK(run(0, 10, INT64_MAX) == V{0});
  CHECK(run(9, -100, INT64_MIN) == V{9});
  // An empty axis gives an empty result for either step sign (a negative step used to clamp to
  // the empty range [0, -1]).
  for (int64_t step : {int64_t{1}, int64_t{-1}}) {
    auto empty = Call("Slice", 13)
                     .In(Iota({0}))
                     .In(I64({1}, {-1}))
                     .In(I64({1}, {-100}))
                     .In(I64({1}, {0}))
                     .In(I64({1}, {step}))
                     .Must()[0];
    CHECK(empty.shape() == S{0});
  }
  // 2-D, default axes omitted but steps given through the axes input.
  auto out = Call("Slice", 13)
                 .In(Iota({3, 4}))
                 .In(I64({2}, {0, 3}))
                 .In(I64({2}, {3, 0}))
                 .In(I64({2}, {0, 1}))
                 .In(I64({2}, {2, -1}))
                 .Must()[0];
  CHECK(out.shape() == S{2, 3});
  CHECK(Values(out) == V{3, 2, 1, 11, 10, 9});
  // Slice-1: attributes.
  auto old = Call("Slice", 1).In(Iota({3, 4})).Ints("starts", {1}).Ints("ends", {1000}).Ints("axes", {1}).Must()[0];
  CHECK(old.shape() == S{3, 3});
  CHECK(Values(old) == V{1, 2, 3, 5, 6, 7, 9, 10, 11});
  auto zero = Call("Slice", 13).In(Iota({4})).In(I64({1}, {0})).In(I64({1}, {1})).In(I64({1}, {0})).In(I64({1}, {0}));
  REQUIRE_FALSE(zero.Run().ok());
}

TEST_CASE("Pad modes: constant with negative pads, reflect, edge, wrap", "[tensor][kernels]") {
  auto pad = [](const std::string& mode, std::vector<float> x, int64_t b, int64_t e) {
    const int64_t n = static_cast<int64_t>(x.size());
    return Values(Call("Pad", 19).In(F32({n}, x)).In(I64({2}, {b, e})).In(F32({}, {9})).Str("mode", mode).Must()[0]);
  };
  CHECK(pad("reflect", {1, 2, 3}, 2, 2) == V{3, 2, 1, 2, 3, 2, 1});
  CHECK(pad("edge", {1, 2, 3}, 2, 2) == V{1, 1, 1, 2, 3, 3, 3});
  CHECK(pad("wrap", {1, 2, 3}, 2, 2) == V{2, 3, 1, 2, 3, 1, 2});
  CHECK(pad("constant", {1, 2, 3}, -1, 2) == V{2, 3, 9, 9});
  CHECK(pad("reflect", {1, 2}, 3, 0) == V{2, 1, 2, 1, 2});  // numpy: reflection repeats
  // 2-D with the axes input (opset 18): pad only axis 1.
  auto out = Call("Pad", 18).In(Iota({2, 2})).In(I64({2}, {1, 0})).Missing().In(I64({1}, {-1})).Must()[0];
  CHECK(out.shape() == S{2, 3});
  CHECK(Values(out) == V{0, 0, 1, 0, 2, 3});
  // Pad-2: attributes.
  auto old = Call("Pad", 2).In(Iota({2})).Ints("pads", {1, 1}).Float("value", 5).Must()[0];
  CHECK(Values(old) == V{5, 0, 1, 5});
}

TEST_CASE("ConcatTraining returns per-input lengths, SplitTraining splits by lengths", "[tensor][kernels]") {
  auto out = Call("ConcatTraining", 1, "com.microsoft", 2).In(Iota({2, 1})).In(Iota({2, 3})).Int("axis", 1).Must();
  CHECK(out[0].shape() == S{2, 4});
  CHECK(Values(out[0]) == V{0, 0, 1, 2, 1, 3, 4, 5});
  CHECK(out[1].dtype() == DataType::kInt64);
  CHECK(out[1].ToInt64Vector() == S{1, 3});
  auto split = Call("SplitTraining", 1, "com.microsoft", 2).In(Iota({5})).In(I64({2}, {2, 3})).Must();
  CHECK(Values(split[0]) == V{0, 1});
  CHECK(Values(split[1]) == V{2, 3, 4});
  // Empty split: even, the remainder to the first outputs.
  auto even = Call("SplitTraining", 1, "com.microsoft", 2).In(Iota({5})).In(I64({0}, {})).Must();
  CHECK(Values(even[0]) == V{0, 1, 2});
  CHECK(Values(even[1]) == V{3, 4});
}

TEST_CASE("Split: attribute, input and num_outputs forms", "[tensor][kernels]") {
  auto a = Call("Split", 11, "", 2).In(Iota({2, 3})).Int("axis", 1).Ints("split", {1, 2}).Must();
  CHECK(Values(a[0]) == V{0, 3});
  CHECK(Values(a[1]) == V{1, 2, 4, 5});
  auto b = Call("Split", 18, "", 2).In(Iota({5})).Int("num_outputs", 2).Must();
  CHECK(Values(b[0]) == V{0, 1, 2});
  CHECK(Values(b[1]) == V{3, 4});
  auto c = Call("Split", 13, "", 3).In(Iota({4})).In(I64({3}, {0, 3, 1})).Must();
  CHECK(c[0].shape() == S{0});
  CHECK(Values(c[2]) == V{3});
  REQUIRE_FALSE(Call("Split", 13, "", 2).In(Iota({4})).In(I64({2}, {1, 2})).Run().ok());
}

TEST_CASE("TopK breaks ties by the lower index", "[tensor][kernels]") {
  Tensor x = F32({5}, {3, 1, 3, 2, 3});
  auto hi = Call("TopK", 11, "", 2).In(x).In(I64({1}, {2})).Must();
  CHECK(Values(hi[0]) == V{3, 3});
  CHECK(hi[1].ToInt64Vector() == S{0, 2});
  auto lo = Call("TopK", 11, "", 2).In(x).In(I64({1}, {2})).Int("largest", 0).Must();
  CHECK(Values(lo[0]) == V{1, 2});
  CHECK(lo[1].ToInt64Vector() == S{1, 3});
  // Along axis 0 of a 2-D tensor.
  auto col = Call("TopK", 11, "", 2).In(F32({3, 2}, {1, 6, 5, 2, 3, 4})).In(I64({1}, {1})).Int("axis", 0).Must();
  CHECK(Values(col[0]) == V{5, 6});
  CHECK(col[1].ToInt64Vector() == S{1, 0});
}

TEST_CASE("CumSum exclusive and reverse", "[tensor][kernels]") {
  auto run = [](int64_t exclusive, int64_t reverse) {
    return Values(Call("CumSum", 14)
                      .In(F32({3}, {1, 2, 3}))
                      .In(I64({}, {0}))
                      .Int("exclusive", exclusive)
                      .Int("reverse", reverse)
                      .Must()[0]);
  };
  CHECK(run(0, 0) == V{1, 3, 6});
  CHECK(run(1, 0) == V{0, 1, 3});
  CHECK(run(0, 1) == V{6, 5, 3});
  CHECK(run(1, 1) == V{5, 3, 0});
  auto rows = Call("CumSum", 14).In(Iota({2, 3})).In(I64({}, {-1})).Must()[0];
  CHECK(Values(rows) == V{0, 1, 3, 3, 7, 12});
}

TEST_CASE("Einsum: matmul, diagonal, ellipsis transpose, inner product, implicit output", "[tensor][kernels]") {
  auto mm = Call("Einsum", 12).In(Iota({2, 3})).In(Iota({3, 2})).Str("equation", "ij,jk").Must()[0];
  CHECK(mm.shape() == S{2, 2});
  CHECK(Values(mm) == V{10, 13, 28, 40});
  auto diag = Call("Einsum", 12).In(Iota({3, 3})).Str("equation", "ii->i").Must()[0];
  CHECK(Values(diag) == V{0, 4, 8});
  auto trace = Call("Einsum", 12).In(Iota({3, 3})).Str("equation", "ii").Must()[0];
  CHECK(trace.shape() == S{});
  CHECK(Values(trace) == V{12});
  auto tr = Call("Einsum", 12).In(Iota({2, 2, 3})).Str("equation", "...ij->...ji").Must()[0];
  CHECK(tr.shape() == S{2, 3, 2});
  CHECK(Values(tr) == V{0, 3, 1, 4, 2, 5, 6, 9, 7, 10, 8, 11});
  auto dot = Call("Einsum", 12).In(Iota({3})).In(Iota({3})).Str("equation", "i, i").Must()[0];
  CHECK(Values(dot) == V{5});
  // Implicit output sorts the free labels: "ba" -> "ab" is a transpose.
  auto implicit = Call("Einsum", 12).In(Iota({2, 3})).Str("equation", "ba").Must()[0];
  CHECK(implicit.shape() == S{3, 2});
  CHECK(Values(implicit) == V{0, 3, 1, 4, 2, 5});
  // Broadcast ellipsis: [2,1,2] x [3,2] -> [2,3]... via "...j,...j->..."
  auto bc = Call("Einsum", 12).In(Iota({2, 1, 2})).In(Iota({3, 2})).Str("equation", "...j,...j->...").Must()[0];
  CHECK(bc.shape() == S{2, 3});
  CHECK(Values(bc) == V{1, 3, 5, 3, 13, 23});
}

TEST_CASE("Resize: linear half_pixel, nearest modes, cubic identity", "[tensor][kernels]") {
  auto lin = Call("Resize", 19).In(F32({1, 2}, {1, 3})).Missing().In(F32({2}, {1, 2})).Str("mode", "linear").Must()[0];
  CHECK(lin.shape() == S{1, 4});
  CHECK(Values(lin) == V{1, 1.5, 2.5, 3});
  // Nearest, asymmetric: x = y / 2 -> 0, 0.5, 1, 1.5; round_prefer_floor -> 0,0,1,1; ceil -> 0,1,1,2->clamped 1.
  auto near = [](const std::string& nearest_mode) {
    return Values(Call("Resize", 19)
                      .In(F32({2}, {10, 20}))
                      .Missing()
                      .In(F32({1}, {2}))
                      .Str("coordinate_transformation_mode", "asymmetric")
                      .Str("nearest_mode", nearest_mode)
                      .Must()[0]);
  };
  CHECK(near("round_prefer_floor") == V{10, 10, 20, 20});
  CHECK(near("round_prefer_ceil") == V{10, 20, 20, 20});
  CHECK(near("floor") == V{10, 10, 20, 20});
  CHECK(near("ceil") == V{10, 20, 20, 20});
  // Cubic (A = -0.75), align_corners 3 -> 5: x = 0, 0.5, 1, 1.5, 2; K(0.5) = 0.59375, K(1.5) = -0.09375,
  // edge taps clamp: at 0.5 taps read 1,1,5,2 -> 3.28125; at 1.5 taps read 1,5,2,2 -> 3.875.
  auto cubic = Call("Resize", 19)
                   .In(F32({3}, {1, 5, 2}))
                   .Missing()
                   .Missing()
                   .In(I64({1}, {5}))
                   .Str("mode", "cubic")
                   .Str("coordinate_transformation_mode", "align_corners")
                   .Must()[0];
  CHECK(Values(cubic) == V{1, 3.28125, 5, 3.875, 2});
  // Nearest copies any dtype exactly, strings too.
  auto str = Call("Resize", 19).In(Strings({2}, {"a", "b"})).Missing().In(F32({1}, {1.5f})).Must()[0];
  REQUIRE(str.shape() == S{3});
  CHECK(str.strings() == std::vector<std::string>{"a", "a", "b"});
}

TEST_CASE("Reshape, Squeeze, Unsqueeze, Flatten share the buffer", "[tensor][kernels]") {
  Tensor x = Iota({2, 3, 4});
  auto r = Call("Reshape", 14).In(x).In(I64({3}, {0, -1, 2})).Must()[0];
  CHECK(r.shape() == S{2, 6, 2});
  CHECK(r.raw() == x.raw());
  auto z = Call("Reshape", 14).In(Iota({0, 3})).In(I64({2}, {3, 0})).Int("allowzero", 1).Must()[0];
  CHECK(z.shape() == S{3, 0});
  REQUIRE_FALSE(Call("Reshape", 14).In(x).In(I64({2}, {5, -1})).Run().ok());
  auto u = Call("Unsqueeze", 13).In(x).In(I64({2}, {-1, 0})).Must()[0];
  CHECK(u.shape() == S{1, 2, 3, 4, 1});
  auto u11 = Call("Unsqueeze", 11).In(x).Ints("axes", {1}).Must()[0];
  CHECK(u11.shape() == S{2, 1, 3, 4});
  auto s = Call("Squeeze", 13).In(u).Must()[0];
  CHECK(s.shape() == S{2, 3, 4});
  CHECK(s.raw() == x.raw());
  REQUIRE_FALSE(Call("Squeeze", 13).In(x).In(I64({1}, {0})).Run().ok());
  auto f = Call("Flatten", 13).In(x).Int("axis", -1).Must()[0];
  CHECK(f.shape() == S{6, 4});
  auto f0 = Call("Flatten", 13).In(x).Int("axis", 0).Must()[0];
  CHECK(f0.shape() == S{1, 24});
  auto shape = Call("Shape", 15).In(x).Int("start", -2).Must()[0];
  CHECK(shape.ToInt64Vector() == S{3, 4});
  auto size = Call("Size", 13).In(x).Must()[0];
  CHECK(size.shape() == S{});
  CHECK(size.ToInt64Vector() == S{24});
}

TEST_CASE("Transpose, Concat, Gather and Expand move strings too", "[tensor][kernels]") {
  Tensor s = Strings({2, 3}, {"a", "b", "c", "d", "e", "f"});
  auto t = Call("Transpose", 13).In(s).Must()[0];
  CHECK(t.strings() == std::vector<std::string>{"a", "d", "b", "e", "c", "f"});
  auto c = Call("Concat", 13).In(s).In(Strings({1, 3}, {"x", "y", "z"})).Int("axis", 0).Must()[0];
  CHECK(c.shape() == S{3, 3});
  CHECK(c.strings().back() == "z");
  auto g = Call("Gather", 13).In(s).In(I64({2}, {-1, 0})).Int("axis", 1).Must()[0];
  CHECK(g.strings() == std::vector<std::string>{"c", "a", "f", "d"});
  auto e = Call("Expand", 13).In(Strings({1}, {"q"})).In(I64({2}, {2, 2})).Must()[0];
  CHECK(e.strings() == std::vector<std::string>{"q", "q", "q", "q"});
}

TEST_CASE("Transpose with a permutation of a 4-D tensor", "[tensor][kernels]") {
  Tensor x = Iota({2, 3, 4, 5});
  auto t = Call("Transpose", 13).In(x).Ints("perm", {2, 0, 3, 1}).Must()[0];
  REQUIRE(t.shape() == S{4, 2, 5, 3});
  bool ok = true;
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t c = 0; c < 4; ++c)
        for (int64_t d = 0; d < 5; ++d) {
          const float want = static_cast<float>(((a * 3 + b) * 4 + c) * 5 + d);
          ok = ok && t.data<float>()[((c * 2 + a) * 5 + d) * 3 + b] == want;
        }
  CHECK(ok);
}

TEST_CASE("Transpose of large tensors takes the tiled path and matches the index formula", "[tensor][kernels]") {
  // [3, 70, 90] with perm (0, 2, 1) and [130, 77] with perm (1, 0): sizes that are not multiples
  // of the 32 x 32 tiles.
  Tensor x = Iota({3, 70, 90});
  auto t = Call("Transpose", 13).In(x).Ints("perm", {0, 2, 1}).Must()[0];
  REQUIRE(t.shape() == S{3, 90, 70});
  bool ok = true;
  for (int64_t a = 0; a < 3; ++a)
    for (int64_t b = 0; b < 70; ++b)
      for (int64_t c = 0; c < 90; ++c) ok = ok && t.data<float>()[(a * 90 + c) * 70 + b] == static_cast<float>((a * 70 + b) * 90 + c);
  CHECK(ok);
  Tensor y = Iota({130, 77});
  auto u = Call("Transpose", 13).In(y).Must()[0];
  REQUIRE(u.shape() == S{77, 130});
  ok = true;
  for (int64_t i = 0; i < 130; ++i)
    for (int64_t j = 0; j < 77; ++j) ok = ok && u.data<float>()[j * 130 + i] == static_cast<float>(i * 77 + j);
  CHECK(ok);
}

TEST_CASE("Gather, GatherElements and GatherND index correctly", "[tensor][kernels]") {
  auto g = Call("Gather", 13).In(Iota({3, 2})).In(I64({2, 2}, {2, 0, -1, 1})).Must()[0];
  CHECK(g.shape() == S{2, 2, 2});
  CHECK(Values(g) == V{4, 5, 0, 1, 4, 5, 2, 3});
  auto bad = Call("Gather", 13).In(Iota({3})).In(I64({1}, {3})).Run();
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("out of range") != std::string::npos);
  auto ge = Call("GatherElements", 13).In(Iota({2, 3})).In(I64({2, 2}, {2, 0, -1, 1})).Int("axis", 1).Must()[0];
  CHECK(Values(ge) == V{2, 0, 5, 4});
  auto nd = Call("GatherND", 13).In(Iota({2, 2, 2})).In(I64({2, 2}, {0, 1, 1, 0})).Must()[0];
  CHECK(nd.shape() == S{2, 2});
  CHECK(Values(nd) == V{2, 3, 4, 5});
  auto ndb = Call("GatherND", 13).In(Iota({2, 2, 2})).In(I64({2, 1}, {1, 0})).Int("batch_dims", 1).Must()[0];
  CHECK(ndb.shape() == S{2, 2});
  CHECK(Values(ndb) == V{2, 3, 4, 5});
}

TEST_CASE("ScatterND and ScatterElements with reductions", "[tensor][kernels]") {
  auto add = Call("ScatterND", 18)
                 .In(F32({4}, {1, 1, 1, 1}))
                 .In(I64({3, 1}, {1, 1, -1}))
                 .In(F32({3}, {2, 3, 4}))
                 .Str("reduction", "add")
                 .Must()[0];
  CHECK(Values(add) == V{1, 6, 1, 5});
  auto rows = Call("ScatterND", 13).In(Iota({2, 2})).In(I64({1, 1}, {1})).In(F32({1, 2}, {9, 8})).Must()[0];
  CHECK(Values(rows) == V{0, 1, 9, 8});
  auto mx = Call("ScatterElements", 18)
                .In(F32({2, 2}, {5, 5, 5, 5}))
                .In(I64({2, 1}, {1, 0}))
                .In(F32({2, 1}, {7, 2}))
                .Int("axis", 1)
                .Str("reduction", "max")
                .Must()[0];
  CHECK(Values(mx) == V{5, 7, 5, 5});
  auto mul = Call("ScatterElements", 18)
                 .In(F32({3}, {2, 2, 2}))
                 .In(I64({2}, {0, 0}))
                 .In(F32({2}, {3, 4}))
                 .Str("reduction", "mul")
                 .Must()[0];
  CHECK(Values(mul) == V{24, 2, 2});
}

TEST_CASE("Tile, Expand, DepthToSpace, SpaceToDepth", "[tensor][kernels]") {
  auto tile = Call("Tile", 13).In(Iota({2})).In(I64({1}, {3})).Must()[0];
  CHECK(Values(tile) == V{0, 1, 0, 1, 0, 1});
  auto tile2 = Call("Tile", 13).In(Iota({1, 2})).In(I64({2}, {2, 2})).Must()[0];
  CHECK(Values(tile2) == V{0, 1, 0, 1, 0, 1, 0, 1});
  auto ex = Call("Expand", 13).In(Iota({3, 1})).In(I64({3}, {2, 1, 2})).Must()[0];
  CHECK(ex.shape() == S{2, 3, 2});
  CHECK(Values(ex) == V{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2});
  auto dcr = Call("DepthToSpace", 13).In(Iota({1, 8, 1, 1})).Int("blocksize", 2).Must()[0];
  CHECK(dcr.shape() == S{1, 2, 2, 2});
  CHECK(Values(dcr) == V{0, 2, 4, 6, 1, 3, 5, 7});
  auto crd = Call("DepthToSpace", 13).In(Iota({1, 8, 1, 1})).Int("blocksize", 2).Str("mode", "CRD").Must()[0];
  CHECK(Values(crd) == V{0, 1, 2, 3, 4, 5, 6, 7});
  auto s2d = Call("SpaceToDepth", 13).In(dcr).Int("blocksize", 2).Must()[0];
  CHECK(s2d.shape() == S{1, 8, 1, 1});
  CHECK(Values(s2d) == V{0, 1, 2, 3, 4, 5, 6, 7});
}

TEST_CASE("Generators: Constant, ConstantOfShape, Range, EyeLike, Trilu, OneHot", "[tensor][kernels]") {
  auto c = Call("Constant", 13).Ints("value_ints", {4, 5}).Must()[0];
  CHECK(c.dtype() == DataType::kInt64);
  CHECK(c.ToInt64Vector() == S{4, 5});
  auto cf = Call("Constant", 13).Float("value_float", 2.5f).Must()[0];
  CHECK(cf.shape() == S{});
  CHECK(Values(cf) == V{2.5});
  auto zeros = Call("ConstantOfShape", 9).In(I64({2}, {2, 0})).Must()[0];
  CHECK(zeros.dtype() == DataType::kFloat);
  CHECK(zeros.shape() == S{2, 0});
  auto r = Call("Range", 11).In(I64({}, {10})).In(I64({}, {4})).In(I64({}, {-3})).Must()[0];
  CHECK(r.ToInt64Vector() == S{10, 7});
  auto rf = Call("Range", 11).In(F32({}, {1})).In(F32({}, {2})).In(F32({}, {0.25f})).Must()[0];
  CHECK(Values(rf) == V{1, 1.25, 1.5, 1.75});
  auto eye = Call("EyeLike", 9).In(Iota({2, 3})).Int("k", 1).Int("dtype", 7).Must()[0];
  CHECK(eye.dtype() == DataType::kInt64);
  CHECK(eye.ToInt64Vector() == S{0, 1, 0, 0, 0, 1});
  auto up = Call("Trilu", 14).In(Iota({3, 3})).In(I64({}, {1})).Must()[0];
  CHECK(Values(up) == V{0, 1, 2, 0, 0, 5, 0, 0, 0});
  auto lo = Call("Trilu", 14).In(Iota({3, 3})).In(I64({}, {-1})).Int("upper", 0).Must()[0];
  CHECK(Values(lo) == V{0, 0, 0, 3, 0, 0, 6, 7, 0});
  auto oh = Call("OneHot", 11).In(I64({3}, {0, -1, 5})).In(F32({}, {3})).In(F32({2}, {0, 1})).Int("axis", 0).Must()[0];
  CHECK(oh.shape() == S{3, 3});
  CHECK(Values(oh) == V{1, 0, 0, 0, 0, 0, 0, 1, 0});
  auto nz = Call("NonZero", 13).In(F32({2, 2}, {0, 1, 2, 0})).Must()[0];
  CHECK(nz.shape() == S{2, 2});
  CHECK(nz.ToInt64Vector() == S{0, 1, 1, 0});
}

}  // namespace
}  // namespace memopt::testing

#include "exec/random_inputs.h"

#include <catch2/catch.hpp>

#include "helpers/analysis_test_util.h"

namespace memopt {
namespace {

constexpr const char* kGraph = R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[batch, 4] x, int64[batch] idx, float[5, 4] table) => (float[batch, 4] y, float[batch, 4] e) {
      y = Relu(x)
      e = Gather(table, idx)
    })";

Tensor Zeros(DataType t, std::vector<int64_t> shape) { return Tensor(t, std::move(shape)); }

TEST_CASE("random inputs: seeded, shaped by --dims, indices in range", "[exec][inputs]") {
  Model m = testing::TextModel(kGraph, {"relu", "gather"});
  DimBindings dims = DimBindings::Parse("batch=64").value();
  auto a = CompleteFeeds(m.graph, {}, dims, 3);
  auto b = CompleteFeeds(m.graph, {}, dims, 3);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->at("x").Describe() == "float[64, 4]");
  CHECK(a->at("idx").Describe() == "int64[64]");
  bool nonzero = false;
  for (int64_t i = 0; i < 64 * 4; ++i) {
    const float v = a->at("x").data<float>()[i];
    CHECK((v >= -1.0f && v < 1.0f));
    CHECK(v == b->at("x").data<float>()[i]);
    nonzero = nonzero || v != 0.0f;
  }
  CHECK(nonzero);
  for (int64_t i = 0; i < 64; ++i) {
    const int64_t k = a->at("idx").data<int64_t>()[i];
    CHECK((k >= 0 && k < 5));  // rows of the Gather table
  }
  auto missing = CompleteFeeds(m.graph, {}, DimBindings{}, 3);
  CHECK(missing.status().message() == "input 'x' dim 0 is 'batch', which is not bound; pass --dims batch=<value>");
}

TEST_CASE("random inputs: given tensors are checked against the model and --dims", "[exec][inputs]") {
  Model m = testing::TextModel(kGraph, {"relu", "gather"});
  const DimBindings dims = DimBindings::Parse("batch=8").value();
  // The given tensor binds 'batch' for the random ones when --dims does not.
  auto ok = CompleteFeeds(m.graph, {{"x", Zeros(DataType::kFloat, {3, 4})}}, DimBindings{}, 1);
  REQUIRE(ok.ok());
  CHECK(ok->at("idx").Describe() == "int64[3]");

  auto conflict = CompleteFeeds(m.graph, {{"x", Zeros(DataType::kFloat, {3, 4})}}, dims, 1);
  CHECK(conflict.status().message() == "input 'x': dim 0 is 'batch' = 8 (from --dims), got 3");
  auto wrong_type = CompleteFeeds(m.graph, {{"x", Zeros(DataType::kInt32, {8, 4})}}, dims, 1);
  CHECK(wrong_type.status().message() == "input 'x': expected float, got int32");
  auto wrong_rank = CompleteFeeds(m.graph, {{"x", Zeros(DataType::kFloat, {8})}}, dims, 1);
  CHECK(wrong_rank.status().message() == "input 'x': rank 2 expected, got 1 (shape float[8])");
  auto fixed = CompleteFeeds(m.graph, {{"x", Zeros(DataType::kFloat, {8, 5})}}, dims, 1);
  CHECK(fixed.status().message() == "input 'x': dim 1 is 4 in the model, got 5");
  auto between = CompleteFeeds(m.graph, {{"x", Zeros(DataType::kFloat, {8, 4})}, {"idx", Zeros(DataType::kInt64, {7})}},
                               DimBindings{}, 1);
  CHECK(between.status().message() == "input 'x': dim 0 is 'batch' = 7 (from input 'idx'), got 8");
}

}  // namespace
}  // namespace memopt

#include "analysis/peak_estimate.h"

#include <catch2/catch.hpp>

#include "helpers/analysis_test_util.h"
#include "analysis/boundary.h"
#include "analysis/exec_order.h"

namespace memopt {
namespace {

// Forward-only graph; the order is Mul, Relu, Dropout, Add (DFS from the only sink).
constexpr const char* kGraph = R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[N, 4] x, float[4] w) => (float[N, 4] out) {
      a = Mul(x, w)
      b = Relu(a)
      c, mask = Dropout(b)
      out = Add(a, c)
    })";

TEST_CASE("peak estimate: hand-checked live bytes", "[analysis][peak]") {
  Model m = testing::TextModel(kGraph, {"mul", "relu", "dropout", "add"});
  Boundary b = FindBoundary(m.graph, ScanOptions{}).value();
  REQUIRE(b.kind == Boundary::Kind::kNone);
  ExecutionOrder order = MemoryEfficientOrder(m.graph, b).value();
  REQUIRE(testing::NodeNames(m.graph, order.order) == std::vector<std::string>{"mul", "relu", "dropout", "add"});

  std::vector<char> stashed(m.graph.values.size(), 0);
  stashed[m.graph.FindValue("a")] = 1;  // pretend the backward pass reads `a`
  DimBindings dims;
  dims.Set("N", 10);
  PeakEstimate p = EstimatePeak(m.graph, order, stashed, dims);

  // N = 10. fp32 [N,4] = 160 bytes, bool mask [N,4] = 40 bytes, w [4] = 16 bytes.
  // Always live: x + w = 160 + 16 = 176.
  // step 0 mul:     +a 160      -> 336 (peak)             frees nothing (x, w are inputs) -> 336
  // step 1 relu:    +b 160      -> 496 (peak)             a is read again at step 3       -> 496
  // step 2 dropout: +c 160 +mask 40 -> 696 (peak)         frees b (160), mask (40, unread) -> 496
  // step 3 add:     +out 160    -> 656 (< 696)            frees a, c (320); out is a graph output -> 336
  CHECK(p.sized);
  CHECK(p.unbound_dims.empty());
  CHECK(p.weights_and_inputs_bytes == 176);
  CHECK(p.peak_bytes == 696);
  CHECK(p.peak_position == 2);
  CHECK(p.peak_node == testing::NodeByName(m.graph, "dropout"));
  CHECK(p.live_after_step == std::vector<int64_t>{336, 496, 496, 336});
  // Symbolically: x 16N + w 16 + a 16N + b 16N + c 16N + mask 4N = 68N + 16.
  const SymExpr n = SymExpr::Symbol("N");
  CHECK(p.peak_expr == SymExpr(68) * n + SymExpr(16));
  CHECK(p.stashed_bytes_at_peak == 160);
  CHECK(p.stashed_expr_at_peak == SymExpr(16) * n);
  CHECK(p.unsized_values == 0);
}

TEST_CASE("peak estimate: sizes whose sum would overflow int64 count as unsized", "[analysis][peak]") {
  // Each tensor is N * 2^60 bytes (2^62 at N = 4): one fits int64, two do not (found by
  // fuzz_text_graph: the running total overflowed).
  Model m = testing::TextModel(R"(
    <ir_version: 8, opset_import: ["" : 15]>
    g (float[N, 1073741824, 268435456] x) => (float[N, 1073741824, 268435456] y) {
      a = Relu(x)
      y = Neg(a)
    })",
                               {"relu", "neg"});
  Boundary b = FindBoundary(m.graph, ScanOptions{}).value();
  ExecutionOrder order = MemoryEfficientOrder(m.graph, b).value();
  DimBindings dims;
  dims.Set("N", 4);
  PeakEstimate p = EstimatePeak(m.graph, order, std::vector<char>(m.graph.values.size(), 0), dims);
  CHECK(p.unsized_values == 3);  // x, a, y
  CHECK(p.peak_bytes == 0);
}

TEST_CASE("peak estimate: unbound dims locate the peak at 1024", "[analysis][peak]") {
  Model m = testing::TextModel(kGraph, {"mul", "relu", "dropout", "add"});
  Boundary b = FindBoundary(m.graph, ScanOptions{}).value();
  ExecutionOrder order = MemoryEfficientOrder(m.graph, b).value();
  PeakEstimate p = EstimatePeak(m.graph, order, std::vector<char>(m.graph.values.size(), 0), DimBindings{});
  CHECK_FALSE(p.sized);
  CHECK(p.unbound_dims == std::vector<std::string>{"N"});
  CHECK(p.peak_position == 2);
  CHECK(p.peak_bytes == 68 * 1024 + 16);
  CHECK(p.peak_expr == SymExpr(68) * SymExpr::Symbol("N") + SymExpr(16));
  CHECK(p.live_after_step.empty());
  CHECK(p.stashed_expr_at_peak.IsZero());
}

}  // namespace
}  // namespace memopt

// The hint under an empty scan table: the stashed op types the recompute table lacks, largest
// first, and --op-table; nothing when there are candidates or no backward pass.
#include "report/no_candidate_hint.h"

#include <catch2/catch.hpp>

#include "analysis/op_table.h"
#include "grad/grad_builder.h"

namespace memopt {
namespace {

/// A Relu MLP with a SoftmaxCrossEntropyLoss: ORT's recompute table has neither op.
constexpr const char* kReluMlp = R"(<ir_version: 8, opset_import: ["" : 17]>
  mlp (float[batch, 4] x, int64[batch] label) => (float loss)
  <float[4, 8] w1 = {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32},
   float[8, 3] w2 = {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24}> {
    h = MatMul(x, w1)
    r = Relu(h)
    logits = MatMul(r, w2)
    loss = SoftmaxCrossEntropyLoss(logits, label)
  })";

Model Training(const char* text) {
  auto forward = LoadModelFromText(text);
  INFO(forward.status().message());
  REQUIRE(forward.ok());
  auto grad = BuildGradientGraph(*forward);
  INFO(grad.status().message());
  REQUIRE(grad.ok());
  return std::move(grad->model);
}

ScanResult ScanOf(const Model& m, const ScanOptions& options = {}) {
  auto r = Scan(m.graph, options);
  INFO(r.status().message());
  REQUIRE(r.ok());
  return std::move(r).value();
}

TEST_CASE("no-candidate hint: a Relu MLP names Relu first and points to --ops extended and --op-table",
          "[report][hint]") {
  const Model m = Training(kReluMlp);
  const ScanResult scan = ScanOf(m);
  REQUIRE(scan.groups.empty());
  DimBindings dims;
  dims.Set("batch", 16);
  const std::vector<UnrecomputableOp> ops = UnrecomputableStashedOps(m.graph, scan, dims);
  REQUIRE(ops.size() == 2);
  CHECK(ops[0].op == "Relu");  // r: 16 x 8 floats = 512 B
  CHECK(ops[0].nodes == 1);
  CHECK(ops[0].sort_bytes == 512);
  CHECK(ops[1].op == "SoftmaxCrossEntropyLoss");  // the log-probabilities, 16 x 3 floats
  CHECK(ops[1].sort_bytes == 192);
  auto hint = NoCandidateHint(m.graph, scan, dims);
  REQUIRE(hint.has_value());
  CHECK(*hint ==
        "no recompute candidate: the forward pass stashes the outputs of ops that are not recomputable: Relu (1 "
        "node, 512 B), SoftmaxCrossEntropyLoss (1 node, 192 B); --ops extended makes Relu recomputable (memopt's "
        "extended table); --op-table FILE adds ops to the recompute table (format: configs/recompute_ops.json); "
        "--details lists every stashed node");
  // A scan that used the extended table is not told to use it.
  auto with_extended = NoCandidateHint(m.graph, scan, dims, 3, &OpTable::Extended());
  REQUIRE(with_extended.has_value());
  CHECK(with_extended->find("--ops extended") == std::string::npos);
  // Unbound dims: symbolic sizes, and at most `top` op types.
  auto symbolic = NoCandidateHint(m.graph, scan, DimBindings(), 1);
  REQUIRE(symbolic.has_value());
  CHECK(symbolic->find("Relu (1 node, 32*batch bytes) and 1 more op type(s);") != std::string::npos);
}

TEST_CASE("no-candidate hint: none once --op-table makes Relu recomputable", "[report][hint]") {
  const Model m = Training(kReluMlp);
  auto extra = OpTable::Parse(R"({"schema_version": 1, "ops": [
      {"domain": "", "op": "Relu", "level": 0, "versions": {"14": []}}]})");
  INFO(extra.status().message());
  REQUIRE(extra.ok());
  OpTable table = OpTable::Builtin();
  REQUIRE(table.Merge(*extra).ok());
  ScanOptions options;
  options.op_table = &table;
  const ScanResult scan = ScanOf(m, options);
  CHECK_FALSE(scan.groups.empty());
  CHECK_FALSE(NoCandidateHint(m.graph, scan, DimBindings()).has_value());
}

TEST_CASE("no-candidate hint: none for a forward-only graph", "[report][hint]") {
  auto forward = LoadModelFromText(kReluMlp);
  REQUIRE(forward.ok());
  const ScanResult scan = ScanOf(*forward);
  CHECK_FALSE(NoCandidateHint(forward->graph, scan, DimBindings()).has_value());
}

}  // namespace
}  // namespace memopt

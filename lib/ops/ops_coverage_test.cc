// ops_coverage: the op tables agree with each other (ops_coverage.h lists the rules).
#include "helpers/ops_coverage.h"

#include <catch2/catch.hpp>

#include "shape/infer_context.h"
#include "util/status.h"

namespace memopt {
namespace {

Status NoRule(shape::InferContext&) { return Status::Ok(); }
Status NoGrad(grad::NodeGrad&) { return Status::Ok(); }
Status NoKernel(KernelContext&) { return Status::Ok(); }

TEST_CASE("ops_coverage: the built-in op tables agree", "[ops][ops_coverage]") {
  const std::vector<std::string> problems =
      testing::CoverageProblems({&Ops(), {&OpTable::Builtin(), &OpTable::Extended()}, {}});
  for (const std::string& p : problems) UNSCOPED_INFO(p);
  CHECK(problems.empty());
  CHECK(Ops().defs().size() > 200);
}

TEST_CASE("ops_coverage: each kind of gap is reported", "[ops][ops_coverage]") {
  OpRegistry ops;
  ops.SetShape("", "Known", NoRule);
  ops.SetCpuKernel("", "Known", NoKernel);
  ops.SetCost("", "Known", {CostKind::kElementwise, 1});
  ops.SetGrad("", "GradOnly", {NoGrad});
  ops.SetCpuKernel("com.microsoft", "KernelOnly", NoKernel);
  ops.SetShape("", "NoCost", NoRule);
  ops.SetShape("", "Known", NoRule);            // the same rule again: no conflict
  ops.SetCost("", "Known", {CostKind::kMove});  // a second cost class: a conflict
  Expected<OpTable> table = OpTable::Parse(R"({"schema_version": 1, "ops": [
      {"domain": "", "op": "Known", "level": 0, "versions": {"1": []}},
      {"domain": "", "op": "NoCost", "level": 0, "versions": {"1": []}},
      {"domain": "", "op": "Unregistered", "level": 0, "versions": {"1": []}}]})");
  REQUIRE(table.ok());
  const std::vector<std::string> problems =
      testing::CoverageProblems({&ops, {&*table}, {"Known", "CudaOnly", "com.microsoft::KernelOnly"}});
  const std::vector<std::string> expected = {
      "cost class of Known: registered twice",
      "GradOnly: a gradient rule but no shape rule",
      "com.microsoft::KernelOnly: a CPU kernel but no shape rule",
      "NoCost: recomputable but no cost class",
      "Unregistered: in the recompute op table but not a registered op (no "
      "shape rule)",
      "Unregistered: recomputable but no cost class",
      "CudaOnly: a CUDA kernel but no CPU kernel",
      "CudaOnly: a CUDA kernel but no shape rule",
      "com.microsoft::KernelOnly: a CUDA kernel but no shape rule",
  };
  CHECK(problems == expected);
}

TEST_CASE(
    "ops_coverage: lookups normalise the domain and fall back between "
    "ai.onnx and com.microsoft",
    "[ops][ops_coverage]") {
  OpRegistry ops;
  ops.SetShape("ai.onnx", "A", NoRule);
  ops.SetCpuKernel("com.microsoft", "A", NoKernel);
  auto has_shape = [](const OpDef& d) { return d.shape != nullptr; };
  auto has_cpu = [](const OpDef& d) { return d.cpu.fn != nullptr; };
  REQUIRE(ops.FindExact("", "A") != nullptr);
  CHECK(ops.FindExact("", "A") == ops.FindExact("ai.onnx", "A"));
  CHECK(ops.Find("com.microsoft", "A", has_shape) == ops.FindExact("", "A"));
  CHECK(ops.Find("ai.onnx", "A", has_cpu) == ops.FindExact("com.microsoft", "A"));
  CHECK(ops.Find("org.pytorch.aten", "A", has_shape) == nullptr);
}

}  // namespace
}  // namespace memopt

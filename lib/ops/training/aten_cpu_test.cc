// ATen embedding / embedding_backward against hand-computed rows; other aten operators are
// reported before a run.
#include <catch2/catch.hpp>

#include "exec/executor.h"
#include "helpers/analysis_test_util.h"
#include "helpers/cpu_kernels_of.h"
#include "helpers/training_test_util.h"

namespace memopt::testing {
namespace {

constexpr const char* kAten = "org.pytorch.aten";

const KernelRegistry& AtenRegistry() {
  static const KernelRegistry r = CpuKernelsOf({"training/aten_cpu"});
  return r;
}

TEST_CASE("ATen embedding gathers rows of the weight", "[exec][kernels][aten]") {
  KernelCall call(kAten, "ATen");
  call.String("operator", "embedding");
  // weight [4, 2] = rows r0..r3; indices [2, 2].
  call.Input(F32({4, 2}, {0, 1, 10, 11, 20, 21, 30, 31})).Input(I64({2, 2}, {3, 0, 1, 3}));
  call.Input(I64({}, {-1})).Input(BoolScalar(false)).Input(BoolScalar(false));
  auto out = call.Run(0, nullptr, &AtenRegistry());
  REQUIRE(out.ok());
  CHECK((*out)[0].Describe() == "float[2, 2, 2]");
  CheckClose((*out)[0], {30, 31, 0, 1, 10, 11, 30, 31}, 0, 0);

  KernelCall bad(kAten, "ATen");
  bad.String("operator", "embedding").Input(F32({4, 2}, {0, 1, 10, 11, 20, 21, 30, 31})).Input(I64({1}, {4}));
  auto r = bad.Run(0, nullptr, &AtenRegistry());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "node 'ATen_node' (ATen): embedding index 4 is outside [0, 4)");
}

TEST_CASE("ATen embedding_backward scatter-adds, skips padding_idx, scales by frequency", "[exec][kernels][aten]") {
  // grad [3, 2] for indices {1, 2, 1}; num_weights 4.
  auto run = [](int64_t padding_idx, bool scale) {
    KernelCall call(kAten, "ATen");
    call.String("operator", "embedding_backward");
    call.Input(F32({3, 2}, {1, 2, 3, 4, 5, 6})).Input(I64({3}, {1, 2, 1})).Input(I64({}, {4}));
    call.Input(I64({}, {padding_idx})).Input(BoolScalar(scale)).Input(BoolScalar(false));
    auto out = call.Run(0, nullptr, &AtenRegistry());
    REQUIRE(out.ok());
    REQUIRE((*out)[0].Describe() == "float[4, 2]");
    return Values((*out)[0]);
  };
  CheckClose(run(-1, false), {0, 0, 6, 8, 3, 4, 0, 0}, 0, 0);
  CheckClose(run(2, false), {0, 0, 6, 8, 0, 0, 0, 0}, 0, 0);
  CheckClose(run(-1, true), {0, 0, 3, 4, 3, 4, 0, 0}, 0, 0);  // row 1 seen twice: halved
}

TEST_CASE("ATen operators without a kernel are reported before running", "[exec][kernels][aten]") {
  Model m = TextModel(R"(
    <ir_version: 8, opset_import: ["" : 15, "org.pytorch.aten" : 1]>
    g (float[4, 2] w, int64[3] i) => (float[3, 2] y, float[3, 2] z) {
      y = org.pytorch.aten.ATen <operator: string = "embedding"> (w, i)
      z = org.pytorch.aten.ATen <operator: string = "upsample_bicubic2d"> (y)
    })",
                      {"emb", "ups"});
  Status s = CheckSupported(m.graph, AtenRegistry());
  CHECK(s.message() == "unsupported ops: org.pytorch.aten::ATen operator 'upsample_bicubic2d' (node 'ups')");
}

}  // namespace
}  // namespace memopt::testing

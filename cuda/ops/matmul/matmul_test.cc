// matmul.cc's com.microsoft FusedMatMul and TransposeMatMul against the CPU reference: alpha,
// transA/transB, transBatchA/transBatchB, 1-D operands and broadcast batch dims of awkward sizes,
// in float32 (TF32 off), float16 and bfloat16.
#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "helpers/cuda_test_util.h"

namespace memopt::cuda {
namespace {

using memopt::testing::KernelCall;
using testing::CompareWithCpu;
using testing::RandomTensor;

using testing::kFloatTypes;

/// Float accumulation in another order than the CPU's, then one rounding to the output type.
double MatMulTol(DataType t) { return t == DataType::kFloat ? 1e-4 : t == DataType::kFloat16 ? 4e-3 : 2e-2; }

struct Case {
  std::vector<int64_t> a, b;  ///< stored shapes
  int trans_a = 0, trans_b = 0, trans_batch_a = 0, trans_batch_b = 0;
};

void RunCases(const char* op, const std::vector<Case>& cases, uint32_t seed) {
  for (DataType t : kFloatTypes) {
    for (const Case& c : cases) {
      for (float alpha : {1.0f, 0.5f, -2.25f}) {
        KernelCall call("com.microsoft", op);
        call.Float("alpha", alpha).Int("transA", c.trans_a).Int("transB", c.trans_b);
        call.Int("transBatchA", c.trans_batch_a).Int("transBatchB", c.trans_batch_b);
        call.Input(RandomTensor(t, c.a, seed++));
        call.Input(RandomTensor(t, c.b, seed++));
        INFO(op << " " << call.inputs[0]->Describe() << " x " << call.inputs[1]->Describe() << " transA "
                << c.trans_a << " transB " << c.trans_b << " transBatchA " << c.trans_batch_a << " transBatchB "
                << c.trans_batch_b << " alpha " << alpha);
        CompareWithCpu(call, MatMulTol(t));
      }
    }
  }
}

TEST_CASE("cuda matmul: the registry lists MatMul, Gemm, FusedMatMul, TransposeMatMul (host side)", "[cuda]") {
  const auto names = CudaKernelRegistry::Builtin().OpNames();
  for (const char* op : {"MatMul", "Gemm", "com.microsoft::FusedMatMul", "com.microsoft::TransposeMatMul"}) {
    INFO(op);
    CHECK(std::find(names.begin(), names.end(), op) != names.end());
  }
}

TEST_CASE("cuda matmul: FusedMatMul transposes, alpha and broadcast batches match the CPU", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  const std::vector<Case> cases = {
      {{3, 7, 33}, {33, 65}},                  // B shared: one stacked product
      {{3, 7, 33}, {65, 33}, 0, 1},            // transB
      {{3, 33, 7}, {65, 33}, 1, 1},            // transA and transB
      {{33, 7}, {3, 33, 65}, 1, 0},            // A shared by B's batches
      {{2, 1, 5, 9}, {3, 9, 4}},               // batches broadcast on both sides: [2, 3]
      {{2, 1, 9, 5}, {3, 4, 9}, 1, 1},         // the same with both transposed
      {{2, 3, 7, 33}, {33, 65}},               // two batch dims stacked
      {{4, 1, 7, 33}, {1, 5, 65, 33}, 0, 1},   // [4, 5] from [4, 1] and [1, 5]
      {{1, 1}, {1, 1}},
      {{33}, {33, 65}},                        // 1-D operands (trans ignored, as on the CPU)
      {{7, 33}, {33}},
      {{33}, {2, 65, 33}, 1, 1},
      {{3, 0}, {0, 4}},                        // K = 0: zeros
      {{0, 5}, {5, 4}},                        // empty output
  };
  RunCases("FusedMatMul", cases, 1);
}

TEST_CASE("cuda matmul: FusedMatMul transBatchA/transBatchB layouts match the CPU", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  // transBatch: stored [X, batch..., Y] with (X, Y) = (rows, cols), or (cols, rows) with trans.
  const std::vector<Case> cases = {
      {{7, 3, 33}, {3, 33, 65}, 0, 0, 1, 0},      // A [m, 3, k]
      {{3, 7, 33}, {33, 3, 65}, 0, 0, 0, 1},      // B [k, 3, n]
      {{33, 3, 7}, {65, 3, 33}, 1, 1, 1, 1},      // A [k, 3, m], B [n, 3, k]
      {{7, 2, 3, 33}, {33, 65}, 0, 0, 1, 0},      // two batch dims, B shared
      {{7, 2, 1, 33}, {33, 3, 65}, 0, 0, 1, 1},   // broadcast [2, 1] against [3]
      {{7, 33}, {33, 65}, 0, 0, 1, 1},            // rank 2: transBatch has no effect
  };
  RunCases("FusedMatMul", cases, 1000);
}

TEST_CASE("cuda matmul: TransposeMatMul matches the CPU", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  const std::vector<Case> cases = {
      {{3, 33, 7}, {33, 65}, 1, 0},
      {{3, 7, 33}, {3, 65, 33}, 0, 1},
      {{2, 1, 9, 5}, {3, 4, 9}, 1, 1},
  };
  RunCases("TransposeMatMul", cases, 2000);
}

TEST_CASE("cuda matmul: MatMul matches the CPU (1-D, batched, broadcast batches, empty, 1x1)", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{7, 1023}, {1023, 5}}, {{7}, {7, 3}},   {{3, 7}, {7}},  {{2, 3, 4, 5}, {5, 6}}, {{2, 1, 4, 5}, {3, 5, 6}},
      {{4, 5}, {2, 5, 6}},    {{2, 4, 5}, {2, 5, 7}}, {{5}, {2, 3, 5, 4}}, {{3, 0}, {0, 2}}, {{1, 1}, {1, 1}}};
  uint32_t seed = 3000;
  for (DataType t : kFloatTypes) {
    const double tol = t == DataType::kFloat ? 1e-3 : MatMulTol(t);  // k up to 1023
    for (const auto& [sa, sb] : shapes) {
      KernelCall call("", "MatMul");
      call.Input(RandomTensor(t, sa, seed++));
      call.Input(RandomTensor(t, sb, seed++));
      INFO("MatMul " << call.inputs[0]->Describe() << " x " << call.inputs[1]->Describe());
      CompareWithCpu(call, tol);
    }
  }
}

TEST_CASE("cuda matmul: FusedMatMul rejects mismatched inner dims and mixed types", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  KernelCall inner("com.microsoft", "FusedMatMul");
  inner.Int("transB", 1).Input(RandomTensor(DataType::kFloat, {3, 7}, 1));
  inner.Input(RandomTensor(DataType::kFloat, {7, 5}, 2));
  CHECK_FALSE(testing::RunOnGpu(inner).ok());
  KernelCall mixed("com.microsoft", "FusedMatMul");
  mixed.Input(RandomTensor(DataType::kFloat, {3, 7}, 1)).Input(RandomTensor(DataType::kFloat16, {7, 5}, 2));
  CHECK_FALSE(testing::RunOnGpu(mixed).ok());
}

TEST_CASE("cuda kernels: Gemm matches the CPU (transposes, alpha, beta, broadcast C)", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  const int64_t m = 7, k = 33, n = 5;
  uint32_t seed = 700;
  for (DataType t : kFloatTypes) {
    const double tol = t == DataType::kFloat ? 1e-4 : t == DataType::kFloat16 ? 4e-3 : 2e-2;
    for (int trans_a = 0; trans_a < 2; ++trans_a) {
      for (int trans_b = 0; trans_b < 2; ++trans_b) {
        for (const std::vector<int64_t>& c_shape :
             std::vector<std::vector<int64_t>>{{}, {n}, {m, 1}, {m, n}, {0}}) {
          KernelCall call("", "Gemm");
          call.Int("transA", trans_a).Int("transB", trans_b).Float("alpha", 0.5f).Float("beta", 2.0f);
          call.Input(RandomTensor(t, trans_a ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k}, seed++));
          call.Input(RandomTensor(t, trans_b ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}, seed++));
          if (c_shape != std::vector<int64_t>{0}) call.Input(RandomTensor(t, c_shape, seed++));  // {0}: no C
          INFO("Gemm transA " << trans_a << " transB " << trans_b << " C " << c_shape.size() << "-D");
          CompareWithCpu(call, tol);
        }
      }
    }
  }
}

}  // namespace
}  // namespace memopt::cuda

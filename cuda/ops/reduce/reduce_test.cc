// kernels/reduce against the CPU reference: the Reduce* ops over leading, trailing, middle,
// non-adjacent and all axes (axes as attribute and as input, keepdims 0/1, noop_with_empty_axes,
// empty reductions) and the variadic Sum/Mean/Max/Min with broadcasting, in float32, float16 and
// bfloat16; plus the host-side plan of the reduction passes, checked by running it on the host.
#include <algorithm>
#include <numeric>
#include <vector>

#include <catch2/catch.hpp>

#include "helpers/cuda_test_util.h"
#include "reduce_launch.h"

namespace memopt::cuda {
namespace {

using memopt::testing::I64;
using memopt::testing::KernelCall;
using testing::CompareWithCpu;
using testing::RandomTensor;
using testing::TypeTol;

using testing::kFloatTypes;

/// The GPU sums in float in a blocked order, the CPU in double in memory order: a float32 sum of
/// ~10^4 terms of magnitude ~1 (squares up to 4) is off by up to ~1e-5 absolute, so float32 gets
/// 1e-4 (index errors are off by O(1)). The 16-bit types round the float result once, as the CPU
/// rounds its double one, so their own rounding (TypeTol) bounds the difference.
double SumTol(DataType t) { return std::max(TypeTol(t), 1e-4); }

/// The passes of PlanReducePasses run on the host (sums in double), as the kernels chain them.
std::vector<double> RunPlan(const std::vector<ReducePass>& passes, std::vector<double> x) {
  for (const ReducePass& p : passes) {
    REQUIRE(static_cast<int64_t>(x.size()) == p.outer * p.len * p.inner);
    std::vector<double> y(static_cast<size_t>(p.outer * p.inner), 0.0);
    for (int64_t o = 0; o < p.outer; ++o) {
      for (int64_t r = 0; r < p.len; ++r) {
        for (int64_t i = 0; i < p.inner; ++i) y[o * p.inner + i] += x[(o * p.len + r) * p.inner + i];
      }
    }
    x = std::move(y);
  }
  return x;
}

/// Direct reference: every element added to the output whose kept coordinates it shares.
std::vector<double> DirectSum(const std::vector<int64_t>& shape, const std::vector<bool>& reduce,
                              const std::vector<double>& x) {
  int64_t out_n = 1;
  for (size_t d = 0; d < shape.size(); ++d) out_n *= reduce[d] ? 1 : shape[d];
  std::vector<double> y(static_cast<size_t>(out_n), 0.0);
  for (int64_t e = 0; e < static_cast<int64_t>(x.size()); ++e) {
    int64_t rest = e, out = 0, stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      const int64_t c = rest % shape[d];
      rest /= shape[d];
      if (!reduce[d]) {
        out += c * stride;
        stride *= shape[d];
      }
    }
    y[static_cast<size_t>(out)] += x[static_cast<size_t>(e)];
  }
  return y;
}

TEST_CASE("cuda reduce: the pass plan reduces every axis pattern (host side)", "[cuda]") {
  const std::vector<std::vector<int64_t>> shapes = {{3, 4, 5, 6}, {2, 1, 3, 1, 4}, {1, 1}, {7}, {}};
  for (const auto& shape : shapes) {
    const int64_t n = std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<int64_t>());
    std::vector<double> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = static_cast<double>((i * 7919) % 101);
    for (uint32_t mask = 0; mask < (1u << shape.size()); ++mask) {
      std::vector<bool> reduce(shape.size());
      for (size_t d = 0; d < shape.size(); ++d) reduce[d] = ((mask >> d) & 1u) != 0;
      const std::vector<ReducePass> passes = PlanReducePasses(shape, reduce);
      INFO("rank " << shape.size() << " mask " << mask << ", " << passes.size() << " passes");
      REQUIRE(!passes.empty());
      CHECK(RunPlan(passes, x) == DirectSum(shape, reduce, x));
    }
  }
  // Non-adjacent groups take one pass each, innermost first.
  const auto passes = PlanReducePasses({3, 4, 5, 6}, {true, false, true, false});
  REQUIRE(passes.size() == 2);
  CHECK((passes[0].outer == 12 && passes[0].len == 5 && passes[0].inner == 6));
  CHECK((passes[1].outer == 1 && passes[1].len == 3 && passes[1].inner == 24));
}

TEST_CASE("cuda reduce: the column plan covers every row once", "[cuda]") {
  for (int64_t rows : {int64_t{0}, int64_t{1}, int64_t{255}, int64_t{4097}, int64_t{100000}}) {
    for (int64_t cols : {int64_t{1}, int64_t{3}, int64_t{32}, int64_t{1023}, int64_t{768}, int64_t{40}}) {
      for (int bytes : {2, 4}) {
        const int vec = ColumnVecFor(cols, bytes);
        const ColumnPlan p = PlanColumnReduce(2, rows, cols, vec);
        INFO(rows << " x " << cols << ", " << vec << " columns per thread");
        CHECK(cols % vec == 0);
        CHECK(p.tx * p.ty == 256);
        CHECK(p.col_tiles * p.tx * vec >= cols);
        CHECK((p.col_tiles - 1) * p.tx * vec < cols);
        CHECK(p.chunks >= 1);
        CHECK(static_cast<int64_t>(p.chunks) * p.chunk_rows >= rows);
        CHECK((p.chunks == 1 || static_cast<int64_t>(p.chunks - 1) * p.chunk_rows < rows));
      }
    }
  }
}

struct ReduceCase {
  std::vector<int64_t> shape;
  std::vector<int64_t> axes;  // empty: all axes
};

TEST_CASE("cuda reduce: the Reduce ops match the CPU on every axis pattern", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  // Between them the cases take every kernel path: one thread per output (<= 16 elements), a
  // warp or a block per row (inner size 1, >= 1024 rows), the column reduction with one and
  // with several row chunks (also for a few long rows), one column or a 16-byte vector of columns
  // per thread, and chains of two passes.
  const std::vector<ReduceCase> cases = {
      {{37, 1023}, {1}},         {{37, 1023}, {0}},        {{37, 1023}, {}},       {{37, 1023}, {-1}},
      {{5, 7, 4097}, {2}},       {{5, 7, 4097}, {0, 1}},   {{5, 7, 4097}, {1}},    {{3, 4, 5, 6}, {0, 2}},
      {{3, 4, 5, 6}, {1, 3}},    {{3, 4, 5, 6}, {0, 3}},   {{3, 4, 5, 6}, {0, 1, 3}}, {{4097, 7}, {0}},
      {{300, 4, 50, 3}, {0, 2}}, {{2, 1, 3}, {1}},         {{7}, {0}},             {{1}, {}},
      {{3, 40, 9, 30}, {1, 3}},  {{2, 2000, 33}, {1}},     {{1024, 2049}, {-1}},
      // Columns in 16-byte vectors per thread (8 of 16 bits or 4 floats; 12 only for float),
      // with several row chunks, outer indices, and a float second pass.
      {{4096, 768}, {0}},        {{3, 300, 64}, {1}},      {{2, 50, 12}, {1}},     {{9, 40}, {0}},
      {{20, 4, 50, 8}, {0, 2}}};
  uint32_t seed = 1;
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceSumSquare", "ReduceL2",
                         "ReduceLogSumExp"}) {
    for (DataType t : kFloatTypes) {
      for (size_t k = 0; k < cases.size(); ++k) {
        const ReduceCase& c = cases[k];
        const bool as_input = k % 2 == 0;
        const int64_t keepdims = (k / 2) % 2;
        KernelCall call("", op);
        call.Version(as_input ? 18 : 13).Int("keepdims", keepdims);
        call.Input(RandomTensor(t, c.shape, seed++));
        if (as_input) {
          call.Input(I64({static_cast<int64_t>(c.axes.size())}, c.axes));
        } else if (!c.axes.empty()) {
          call.Ints("axes", c.axes);
        }
        INFO(op << " " << call.inputs[0]->Describe() << " axes " << c.axes.size() << (as_input ? " (input)" : "")
                << " keepdims " << keepdims);
        CompareWithCpu(call, SumTol(t));
      }
    }
  }
}

TEST_CASE("cuda reduce: ReduceSumTraining, int32 axes, noop_with_empty_axes and empty reductions", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  uint32_t seed = 1000;
  for (DataType t : kFloatTypes) {
    {
      KernelCall call("com.microsoft", "ReduceSumTraining");
      call.Int("keepdims", 0);
      call.Input(RandomTensor(t, {6, 1023}, seed++)).Input(I64({1}, {0}));
      CompareWithCpu(call, SumTol(t));
    }
    {
      Tensor axes(DataType::kInt32, {2});
      axes.SetFromDouble(0, -1);
      axes.SetFromDouble(1, 0);
      KernelCall call("", "ReduceMean");
      call.Version(18).Input(RandomTensor(t, {9, 5, 11}, seed++)).Input(axes);
      CompareWithCpu(call, SumTol(t));
    }
    for (const char* op : {"ReduceSum", "ReduceSumSquare", "ReduceL2", "ReduceLogSumExp"}) {
      // Empty axes with noop_with_empty_axes: nothing reduced, the map and finish still apply.
      KernelCall call("", op);
      call.Version(18).Int("noop_with_empty_axes", 1);
      call.Input(RandomTensor(t, {3, 7}, seed++)).Input(I64({0}, {}));
      INFO(op << " noop");
      CompareWithCpu(call, TypeTol(t));
    }
    for (const char* op : {"ReduceSum", "ReduceSumSquare"}) {
      // A reduced dim of size 0: zeros (Max/Mean would give -inf/NaN, which no tolerance compares).
      KernelCall call("", op);
      call.Input(Tensor(t, {0, 3})).Ints("axes", {0});
      INFO(op << " over an empty dim");
      CompareWithCpu(call, 0.0);
    }
  }
}

TEST_CASE("cuda reduce: variadic Sum/Mean/Max/Min match the CPU bit for bit", "[cuda][gpu]") {
  MEMOPT_SKIP_WITHOUT_GPU();
  const std::vector<std::vector<std::vector<int64_t>>> lists = {
      {{3, 1, 5}, {4, 1}, {5}},
      {{7, 1023}, {1023}, {7, 1}},
      {{4097}, {4097}, {4097}},
      {{2, 3, 4}, {}},
      {{7, 3}},
      // More than the 8 inputs of one launch: the rest folds into the output.
      {{2, 1, 5}, {5}, {3, 1}, {2, 3, 5}, {1, 1, 5}, {2, 3, 1}, {3, 5}, {}, {5}, {2, 1, 1}}};
  uint32_t seed = 2000;
  for (const char* op : {"Sum", "Mean", "Max", "Min"}) {
    for (DataType t : kFloatTypes) {
      for (const auto& shapes : lists) {
        KernelCall call("", op);
        for (const auto& s : shapes) call.Input(RandomTensor(t, s, seed++));
        INFO(op << " of " << shapes.size() << " inputs, first " << call.inputs[0]->Describe());
        // Same float operations in the same order, rounded after every step like the CPU.
        CompareWithCpu(call, 0.0);
      }
    }
  }
}

}  // namespace
}  // namespace memopt::cuda

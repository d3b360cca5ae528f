// HalfBatchedGemm against the product of the decoded operands summed in double: shapes across the
// tile and depth blocks (edges 256/128/64, depth blocks of 256 and their tails), every transpose,
// padded strides, batches with a shared B, Gemm's initial tile, bfloat16; and the same bits on 1
// and 2 threads.
#include "exec/kernels/half_gemm.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <tuple>
#include <vector>

#include "exec/kernels/kernel_util.h"
#include "util/half.h"

namespace memopt::math {
namespace {

struct Case {
  int64_t m, n, k, count;
  bool ta, tb, shared_b;
};

float Decode(DataType t, uint16_t v) { return t == DataType::kFloat16 ? Float16ToFloat(v) : Bfloat16ToFloat(v); }
uint16_t Encode(DataType t, float v) { return t == DataType::kFloat16 ? FloatToFloat16(v) : FloatToBfloat16(v); }

struct Run {
  std::vector<uint16_t> a, b, y;
  std::vector<int64_t> a_off, b_off;
  int64_t lda = 0, ldb = 0;
};

Run Make(DataType t, const Case& c) {
  Run r;
  r.lda = (c.ta ? c.m : c.k) + 3;
  r.ldb = (c.tb ? c.k : c.n) + 1;
  const int64_t a_size = (c.ta ? c.k : c.m) * r.lda, b_size = (c.tb ? c.n : c.k) * r.ldb;
  r.a.resize(static_cast<size_t>(a_size * c.count));
  r.b.resize(static_cast<size_t>(b_size * (c.shared_b ? 1 : c.count)));
  for (size_t i = 0; i < r.a.size(); ++i) r.a[i] = Encode(t, static_cast<float>(static_cast<int>(i * 37 % 101) - 50) / 64.0f);
  for (size_t i = 0; i < r.b.size(); ++i) r.b[i] = Encode(t, static_cast<float>(static_cast<int>(i * 53 % 97) - 48) / 32.0f);
  for (int64_t e = 0; e < c.count; ++e) {
    r.a_off.push_back(e * a_size);
    r.b_off.push_back(c.shared_b ? 0 : e * b_size);
  }
  r.y.assign(static_cast<size_t>(c.m * c.n * c.count), 0xffff);
  return r;
}

void Compute(DataType t, const Case& c, Run& r, const HalfTileInit& init = nullptr) {
  HalfBatchedGemm(t, c.m, c.n, c.k, 0.5f, {r.a.data(), r.a_off.data(), r.lda, c.ta}, {r.b.data(), r.b_off.data(), r.ldb, c.tb},
                  c.count, r.y.data(), init);
}

/// Largest |y - ref| / (|ref| + 1) over the outputs, ref = 0.5 op(A) op(B) (+ bias(i, j)) in double.
double WorstError(DataType t, const Case& c, const Run& r, double (*bias)(int64_t, int64_t) = nullptr) {
  double worst = 0;
  for (int64_t e = 0; e < c.count; ++e)
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double s = 0;
        for (int64_t kk = 0; kk < c.k; ++kk) {
          const uint16_t av = r.a[r.a_off[e] + (c.ta ? kk * r.lda + i : i * r.lda + kk)];
          const uint16_t bv = r.b[r.b_off[e] + (c.tb ? j * r.ldb + kk : kk * r.ldb + j)];
          s += double(Decode(t, av)) * double(Decode(t, bv));
        }
        double ref = 0.5 * s + (bias ? bias(i, j) : 0.0);
        const double got = Decode(t, r.y[(e * c.m + i) * c.n + j]);
        worst = std::max(worst, std::fabs(got - ref) / (std::fabs(ref) + 1.0));
      }
  return worst;
}

TEST_CASE("half gemm: tiles, depth blocks, transposes and batches against a double reference", "[exec][half_gemm]") {
  const std::vector<Case> cases = {
      {1, 1, 1, 1, false, false, false},     {300, 70, 600, 1, false, false, false}, {300, 70, 600, 1, true, true, false},
      {70, 300, 257, 1, true, false, false}, {257, 520, 40, 1, false, true, false},  {16, 24, 8, 5, false, true, false},
      {33, 17, 300, 3, true, false, true},   {64, 64, 0, 2, false, false, false}};
  for (const Case& c : cases) {
    INFO(c.m << "x" << c.n << "x" << c.k << " count " << c.count << " ta " << c.ta << " tb " << c.tb);
    Run r = Make(DataType::kFloat16, c);
    Compute(DataType::kFloat16, c, r);
    CHECK(WorstError(DataType::kFloat16, c, r) <= 1.0 / 1024);  // float16 rounds to 2^-11 relative
  }
  Case c{130, 90, 70, 2, false, true, true};
  Run r = Make(DataType::kBfloat16, c);
  Compute(DataType::kBfloat16, c, r);
  CHECK(WorstError(DataType::kBfloat16, c, r) <= 1.0 / 128);  // bfloat16 rounds to 2^-8 relative
}

TEST_CASE("half gemm: the initial tile is added once, at its position", "[exec][half_gemm]") {
  Case c{300, 520, 300, 1, false, true, false};
  Run r = Make(DataType::kFloat16, c);
  auto bias = [](int64_t i, int64_t j) { return 0.25 * static_cast<double>((i * 7 + j * 3) % 11) - 1.0; };
  Compute(DataType::kFloat16, c, r, [&](int64_t i0, int64_t j0, int64_t rows, int64_t cols, float* tile, int64_t ld) {
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) tile[i * ld + j] = static_cast<float>(bias(i0 + i, j0 + j));
  });
  CHECK(WorstError(DataType::kFloat16, c, r, +[](int64_t i, int64_t j) {
          return 0.25 * static_cast<double>((i * 7 + j * 3) % 11) - 1.0;
        }) <= 1.0 / 1024);
}

TEST_CASE("half gemm: the same bits on 1 and 2 threads; the tile edge depends on the shape", "[exec][half_gemm]") {
  Case c{513, 300, 700, 1, false, false, false};
  const int before = NumThreads();
  Run one = Make(DataType::kFloat16, c), two = Make(DataType::kFloat16, c);
  SetNumThreads(1);
  Compute(DataType::kFloat16, c, one);
  SetNumThreads(2);
  Compute(DataType::kFloat16, c, two);
  SetNumThreads(before);
  CHECK(one.y == two.y);
  CHECK(HalfTileEdge(1024, 1024, 1) == kHalfTile);
  CHECK(HalfTileEdge(256, 768, 1) == 128);  // 1 x 3 tiles of 256, 2 x 6 of 128
  CHECK(HalfTileEdge(64, 64, 1) == 64);
}

}  // namespace
}  // namespace memopt::math

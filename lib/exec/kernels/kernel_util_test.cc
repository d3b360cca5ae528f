#include "exec/kernels/kernel_util.h"

#include <array>
#include <atomic>
#include <numeric>

#include <catch2/catch.hpp>

namespace memopt {
namespace {

TEST_CASE("kernel util: axes and broadcast shapes", "[exec][kernel_util]") {
  CHECK(NormalizeAxis(-1, 3) == 2);
  CHECK(NormalizeAxis(2, 3) == 2);
  CHECK_FALSE(NormalizeAxis(3, 3).has_value());
  CHECK_FALSE(NormalizeAxis(-4, 3).has_value());
  CHECK(NormalizeAxes({-1, 0}, 3) == std::vector<int64_t>{0, 2});
  CHECK_FALSE(NormalizeAxes({-1, 2}, 3).has_value());  // duplicate

  CHECK(BroadcastShape({2, 1, 4}, {3, 1}) == std::vector<int64_t>{2, 3, 4});
  CHECK(BroadcastShape({}, {5}) == std::vector<int64_t>{5});
  CHECK(BroadcastShape({0, 3}, {1, 3}) == std::vector<int64_t>{0, 3});
  CHECK_FALSE(BroadcastShape({2, 3}, {4}).has_value());
  CHECK(BroadcastShapes({{2, 1}, {1, 3}, {3}}) == std::vector<int64_t>{2, 3});
  CHECK(BroadcastStrides({3, 1}, {2, 3, 4}) == std::vector<int64_t>{0, 1, 0});
  CHECK(BroadcastStrides({2, 3, 4}, {2, 3, 4}) == std::vector<int64_t>{12, 4, 1});
  CHECK(ShapeToString(std::vector<int64_t>{2, 3}) == "[2, 3]");
  CHECK(ProductOf({2, 3, 4}, 1, 3) == 12);
}

TEST_CASE("kernel util: ForEachIndexed visits every element in row-major order", "[exec][kernel_util]") {
  const std::vector<int64_t> out_shape = {2, 3, 4};
  const std::vector<int64_t> a_shape = {3, 1};
  std::vector<std::vector<int64_t>> strides = {BroadcastStrides(a_shape, out_shape), Strides(out_shape)};
  std::vector<int64_t> seen;
  ForEachIndexed(out_shape, strides, [&](int64_t i, const int64_t* off) {
    CHECK(off[1] == i);
    const int64_t j = (i / 4) % 3;  // the a index is the middle coordinate
    CHECK(off[0] == j);
    seen.push_back(i);
  });
  std::vector<int64_t> expected(24);
  std::iota(expected.begin(), expected.end(), 0);
  CHECK(seen == expected);

  int calls = 0;
  ForEachIndexed({}, std::vector<std::vector<int64_t>>(1), [&](int64_t i, const int64_t* off) {
    CHECK(i == 0);
    CHECK(off[0] == 0);
    ++calls;
  });
  CHECK(calls == 1);
  ForEachIndexed({3, 0}, std::vector<std::vector<int64_t>>(1, {0, 0}), [&](int64_t, const int64_t*) { ++calls; });
  CHECK(calls == 1);
}

TEST_CASE("kernel util: BroadcastBinary paths agree", "[exec][kernel_util]") {
  auto run = [](std::vector<int64_t> as, std::vector<int64_t> bs) {
    std::vector<float> a(static_cast<size_t>(NumElements(as))), b(static_cast<size_t>(NumElements(bs)));
    std::iota(a.begin(), a.end(), 1.0f);
    std::iota(b.begin(), b.end(), 100.0f);
    auto os = *BroadcastShape(as, bs);
    std::vector<float> out(static_cast<size_t>(NumElements(os)));
    BroadcastBinary(a.data(), as, b.data(), bs, out.data(), os, [](float x, float y) { return x * 1000 + y; });
    // Reference through explicit coordinates.
    auto sa = BroadcastStrides(as, os), sb = BroadcastStrides(bs, os), so = Strides(os);
    for (int64_t i = 0; i < NumElements(os); ++i) {
      int64_t ia = 0, ib = 0, rem = i;
      for (size_t d = 0; d < os.size(); ++d) {
        const int64_t c = rem / so[d];
        rem %= so[d];
        ia += c * sa[d];
        ib += c * sb[d];
      }
      REQUIRE(out[i] == a[ia] * 1000 + b[ib]);
    }
  };
  run({2, 3}, {2, 3});
  run({2, 3}, {1});
  run({1}, {2, 3});
  run({4, 2, 3}, {3});
  run({4, 2, 3}, {2, 1});
  run({4, 1, 3}, {1, 5, 1});
  run({300, 257}, {257});  // parallel path
  run({300, 257}, {300, 1});
}

TEST_CASE("kernel util: ParallelFor covers the range once", "[exec][kernel_util]") {
  for (int64_t n : {0, 1, 7, 100000, 1000003}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    ParallelFor(n, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[i]++;
    });
    for (int64_t i = 0; i < n; ++i) REQUIRE(hits[i] == 1);
  }
  // Nested regions run inline.
  std::atomic<int64_t> total{0};
  ParallelFor(1000, 100, [&](int64_t b, int64_t e) {
    ParallelFor(1000, 100, [&](int64_t b2, int64_t e2) { total += (e - b) * (e2 - b2); });
  });
  CHECK(total == 1000 * 1000);
  CHECK(NumThreads() >= 1);
}

TEST_CASE("kernel util: dtype dispatch and element conversion", "[exec][kernel_util]") {
  DataType seen = DataType::kUndefined;
  CHECK(DispatchFloat(DataType::kFloat16, [&](auto tag) { seen = DataTypeOf<typename decltype(tag)::type>(); }).ok());
  CHECK(seen == DataType::kFloat16);
  Status s = DispatchFloat(DataType::kInt64, [&](auto) {});
  CHECK(s.code() == ErrorCode::kUnsupported);
  CHECK(s.message() == "unsupported data type 'int64'");
  CHECK(DispatchAll(DataType::kBool, [&](auto tag) -> Status {
          seen = DataTypeOf<typename decltype(tag)::type>();
          return Status::Ok();
        }).ok());
  CHECK(seen == DataType::kBool);
  CHECK(DispatchNumeric(DataType::kUint16, [&](auto tag) { seen = DataTypeOf<typename decltype(tag)::type>(); }).ok());
  CHECK(seen == DataType::kUint16);
  int size = 0;
  CHECK(DispatchBySize(DataType::kBfloat16, [&](auto tag) { size = sizeof(typename decltype(tag)::type); }).ok());
  CHECK(size == 2);

  CHECK(StoreAs<Half>(1.0f).bits == 0x3c00);
  CHECK(StoreAs<BFloat16>(1.0).bits == 0x3f80);
  CHECK(Load(Half{0x3c00}) == 1.0f);
  CHECK(Load(BFloat16{0xc040}) == -3.0f);
  CHECK(StoreAs<bool>(0.5f) == true);
  CHECK(StoreAs<int32_t>(-2.7) == -2);
  static_assert(std::is_same_v<ComputeType<Half>, float>);
  static_assert(std::is_same_v<ComputeType<double>, double>);

  Tensor h(DataType::kFloat16, {3});
  FromFloatVector({0.5f, -1.0f, 0.1f}, h);
  CHECK(h.data<uint16_t>()[2] == 0x2e66);
  CHECK(ToFloatVector(h) == std::vector<float>{0.5f, -1.0f, 0.0999755859375f});
}

TEST_CASE("kernel util: Gemm matches hand arithmetic", "[exec][kernel_util]") {
  // A = [[1,2,3],[4,5,6]], B = [[1,0],[0,1],[1,1]] -> A*B = [[4,5],[10,11]].
  const float a[] = {1, 2, 3, 4, 5, 6};
  const float b[] = {1, 0, 0, 1, 1, 1};
  float c[4] = {1, 1, 1, 1};
  Gemm(false, false, 2, 2, 3, 1.0f, a, 3, b, 2, 0.0f, c, 2);
  CHECK(std::vector<float>(c, c + 4) == std::vector<float>{4, 5, 10, 11});
  // A^T (A stored as [3,2] = [[1,4],[2,5],[3,6]]) times B, plus 2 * C.
  const double at[] = {1, 4, 2, 5, 3, 6};
  const double bd[] = {1, 0, 0, 1, 1, 1};
  double cd[4] = {1, 1, 1, 1};
  Gemm(true, false, 2, 2, 3, 1.0, at, 2, bd, 2, 2.0, cd, 2);
  CHECK(std::vector<double>(cd, cd + 4) == std::vector<double>{6, 7, 12, 13});
}

TEST_CASE("kernel util: back-to-back parallel regions each run every chunk once", "[exec][kernel_util]") {
  const int before = NumThreads();
  for (int threads : {2, 3}) {
    SetNumThreads(threads);
    std::vector<int64_t> sums;
    for (int region = 0; region < 2000; ++region) {
      const int64_t n = 3 + region % 17;
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      ParallelFor(n, 1 << 20, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) hits[i]++;
      });
      for (int64_t i = 0; i < n; ++i) REQUIRE(hits[i] == 1);
    }
  }
  SetNumThreads(before);
}

TEST_CASE("kernel util: a Gemm split over threads gives the one-thread result", "[exec][kernel_util]") {
  // Row and column splits, every transpose combination, sizes that do not divide evenly, on 1, 2,
  // 3 and 4 threads and inside a parallel region. The bits must not depend on the thread count
  // whichever kernel OpenBLAS selected: ctest runs this under the core types CI sets
  // (OPENBLAS_CORETYPE), e.g. Haswell's kernel sums an element in an order that depends on the
  // call's shape.
  const int before = NumThreads();
  const std::vector<std::array<int64_t, 3>> shapes = {{300, 37, 211}, {45, 700, 129}, {128, 1024, 96}, {1000, 33, 70}};
  for (const auto& shape : shapes) {
    const int64_t m = shape[0], n = shape[1], k = shape[2];  // named: lambdas below capture them
    for (int t = 0; t < 4; ++t) {
      const bool ta = (t & 1) != 0, tb = (t & 2) != 0;
      std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
      for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 7919) % 1013) / 507.0f - 1.0f;
      for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 104729) % 997) / 499.0f - 1.0f;
      const int64_t lda = ta ? m : k, ldb = tb ? k : n;
      std::vector<float> c1(static_cast<size_t>(m * n), 0.5f), c2 = c1;
      SetNumThreads(1);
      Gemm(ta, tb, m, n, k, 1.5f, a.data(), lda, b.data(), ldb, 0.25f, c1.data(), n);
      INFO(m << "x" << n << "x" << k << " transA " << ta << " transB " << tb);
      for (int threads : {2, 3, 4}) {
        INFO(threads << " threads");
        SetNumThreads(threads);
        std::vector<float> ct(static_cast<size_t>(m * n), 0.5f);
        Gemm(ta, tb, m, n, k, 1.5f, a.data(), lda, b.data(), ldb, 0.25f, ct.data(), n);
        CHECK(c1 == ct);
      }
      // Inside a parallel region (a convolution's per-image products): the same blocks, in turn.
      SetNumThreads(2);
      ParallelFor(2, int64_t{1} << 20, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          if (i == 0) Gemm(ta, tb, m, n, k, 1.5f, a.data(), lda, b.data(), ldb, 0.25f, c2.data(), n);
        }
      });
      CHECK(c1 == c2);
      // One element by hand, in double.
      double want = 0.25 * 0.5;
      for (int64_t kk = 0; kk < k; ++kk) {
        want += 1.5 * a[static_cast<size_t>(ta ? kk * lda + (m - 1) : (m - 1) * lda + kk)] *
                b[static_cast<size_t>(tb ? (n - 1) * ldb + kk : kk * ldb + (n - 1))];
      }
      CHECK(c2.back() == Approx(want).epsilon(1e-4));
    }
  }
  SetNumThreads(before);
}

}  // namespace
}  // namespace memopt

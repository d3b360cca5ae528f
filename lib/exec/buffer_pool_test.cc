#include "exec/buffer_pool.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "exec/tensor.h"

namespace memopt {
namespace {

/// Runs a test with the global pool on and empty, and leaves it as it was.
struct PoolOn {
  PoolOn() : was(BufferPool::Global().enabled()) {
    BufferPool::Global().SetEnabled(true);
    BufferPool::Global().Trim();
  }
  ~PoolOn() { BufferPool::Global().SetEnabled(was); }
  bool was;
};

TEST_CASE("size classes: aligned below the pooled size, four per power of two above", "[buffer_pool]") {
  CHECK(BufferPool::SizeClass(0) == 64);
  CHECK(BufferPool::SizeClass(1) == 64);
  CHECK(BufferPool::SizeClass(65) == 128);
  CHECK(BufferPool::SizeClass(64 * 1024) == 64 * 1024);
  CHECK(BufferPool::SizeClass(64 * 1024 + 1) == 80 * 1024);
  CHECK(BufferPool::SizeClass(100 * 1024) == 112 * 1024);
  CHECK(BufferPool::SizeClass(1 << 20) == 1 << 20);
  CHECK(BufferPool::SizeClass((1 << 20) + 1) == (1 << 20) + (1 << 18));
  for (size_t bytes : {70000u, 1000000u, 3000001u, 123456789u}) {
    const size_t c = BufferPool::SizeClass(bytes);
    CHECK(c >= bytes);
    CHECK(c % BufferPool::kAlignment == 0);
    CHECK(static_cast<double>(c) <= 1.25 * static_cast<double>(bytes));
  }
}

TEST_CASE("a released buffer is handed out again, zero-filled", "[buffer_pool]") {
  PoolOn on;
  BufferPool& pool = BufferPool::Global();
  const BufferPool::Stats before = pool.stats();
  std::byte* first = nullptr;
  {
    auto a = pool.AcquireZeroed(100000);
    first = a.get();
    std::memset(a.get(), 0x5a, 100000);
  }
  CHECK(pool.stats().cached_bytes == static_cast<int64_t>(BufferPool::SizeClass(100000)));
  auto b = pool.AcquireZeroed(99000);  // the same size class
  CHECK(b.get() == first);
  for (size_t i = 0; i < 99000; ++i) REQUIRE(b[i] == std::byte{0});
  const BufferPool::Stats after = pool.stats();
  CHECK(after.hits == before.hits + 1);
  CHECK(after.misses == before.misses + 1);
  CHECK(after.cached_bytes == 0);
}

TEST_CASE("the cache holds no more than twice the peak in use, and Trim empties it", "[buffer_pool]") {
  PoolOn on;
  BufferPool& pool = BufferPool::Global();
  const int64_t peak0 = pool.stats().in_use_peak;
  { auto a = pool.AcquireZeroed(1 << 20); }
  CHECK(pool.stats().cached_bytes <= BufferPool::kCacheLimitFactor * std::max<int64_t>(peak0, 1 << 20));
  pool.Trim();
  CHECK(pool.stats().cached_bytes == 0);
  // Small buffers never enter the cache.
  { auto s = pool.AcquireZeroed(1000); }
  CHECK(pool.stats().cached_bytes == 0);
}

TEST_CASE("a disabled pool frees at once; buffers taken before still come back safely", "[buffer_pool]") {
  PoolOn on;
  BufferPool& pool = BufferPool::Global();
  auto held = pool.AcquireZeroed(200000);
  pool.SetEnabled(false);
  { auto a = pool.AcquireZeroed(200000); }
  held.reset();
  CHECK(pool.stats().cached_bytes == 0);
}

TEST_CASE("tensors draw from the pool and start zeroed", "[buffer_pool]") {
  PoolOn on;
  const void* first = nullptr;
  {
    Tensor t(DataType::kFloat, {256, 256});
    first = t.raw();
    t.data<float>()[7] = 3.0f;
  }
  Tensor u(DataType::kFloat, {250, 256});
  CHECK(u.raw() == first);
  CHECK(u.data<float>()[7] == 0.0f);
}

TEST_CASE("uninitialized buffers skip the zero fill, and poisoning fills them with 0xFF", "[buffer_pool]") {
  PoolOn on;
  BufferPool& pool = BufferPool::Global();
  const bool poison_before = pool.poison();
  pool.SetPoison(false);
  std::byte* first = nullptr;
  {
    auto a = pool.AcquireUninitialized(300000);
    first = a.get();
    std::memset(a.get(), 0x5a, 300000);
  }
  {
    auto b = pool.AcquireUninitialized(290000);  // the same size class: the old contents stay
    REQUIRE(b.get() == first);
    CHECK(b[0] == std::byte{0x5a});
    CHECK(b[289999] == std::byte{0x5a});
  }
  pool.SetPoison(true);
  for (size_t bytes : {size_t{100}, size_t{290000}}) {  // below and inside the pooled sizes
    auto c = pool.AcquireUninitialized(bytes);
    for (size_t i = 0; i < bytes; ++i) REQUIRE(c[i] == std::byte{0xFF});
  }
  {
    Tensor t = Tensor::Uninitialized(DataType::kFloat, {3, 100000});
    CHECK(t.numel() == 300000);
    CHECK(std::isnan(t.data<float>()[0]));
    CHECK(std::isnan(t.data<float>()[299999]));
    Tensor z(DataType::kFloat, {3, 100000});  // the zeroing constructor is unaffected
    CHECK(z.data<float>()[299999] == 0.0f);
  }
  pool.SetPoison(poison_before);
}

}  // namespace
}  // namespace memopt

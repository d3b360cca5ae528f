#include "caching_pool.h"

#include <cstdlib>
#include <set>
#include <vector>

#include <catch2/catch.hpp>

namespace memopt::cuda {
namespace {

/// A raw allocator over malloc that records what is outstanding and can be made to fail.
struct FakeDevice {
  std::set<void*> blocks;
  size_t capacity = SIZE_MAX;
  size_t used = 0;
  std::map<void*, size_t> sizes;
  CachingPool MakePool() {
    return CachingPool(
        [this](size_t n) -> void* {
          if (used + n > capacity) return nullptr;
          void* p = std::malloc(n);
          blocks.insert(p);
          sizes[p] = n;
          used += n;
          return p;
        },
        [this](void* p) {
          used -= sizes.at(p);
          sizes.erase(p);
          blocks.erase(p);
          std::free(p);
        });
  }
};

TEST_CASE("caching pool: size classes", "[cuda][pool]") {
  CHECK(CachingPool::RoundUp(0) == 512);
  CHECK(CachingPool::RoundUp(1) == 512);
  CHECK(CachingPool::RoundUp(513) == 1024);
  CHECK(CachingPool::RoundUp((1 << 20) - 1) == (1 << 20));
  CHECK(CachingPool::RoundUp(1 << 20) == (2 << 20));
  CHECK(CachingPool::RoundUp((2 << 20) + 1) == (4 << 20));
}

TEST_CASE("caching pool: requested and reserved peaks are exact", "[cuda][pool]") {
  FakeDevice dev;
  {
    CachingPool pool = dev.MakePool();
    void* a = pool.Allocate(1000);   // block 1024
    void* b = pool.Allocate(3000);   // block 3072
    CHECK(pool.stats().requested == 4000);
    CHECK(pool.stats().reserved == 4096);
    REQUIRE(pool.Free(a));
    CHECK(pool.stats().requested == 3000);
    CHECK(pool.stats().reserved == 4096);  // cached, still held
    void* c = pool.Allocate(900);          // reuses a's 1024-byte block
    CHECK(c == a);
    CHECK(pool.stats().reuses == 1);
    CHECK(pool.stats().raw_allocations == 2);
    void* d = pool.Allocate(5000);  // nothing cached fits: a new block
    CHECK(pool.stats().peak_requested == 3000 + 900 + 5000);
    CHECK(pool.stats().peak_reserved == 1024 + 3072 + 5120);
    CHECK_FALSE(pool.Free(reinterpret_cast<void*>(0x10)));  // unknown pointer
    pool.Free(b);
    pool.Free(c);
    pool.Free(d);
    CHECK(pool.stats().requested == 0);
    CHECK(pool.live_blocks() == 0);
    CHECK(pool.cached_blocks() == 3);
    pool.ResetPeaks();
    CHECK(pool.stats().peak_requested == 0);
    CHECK(pool.stats().peak_reserved == pool.stats().reserved);
  }
  CHECK(dev.blocks.empty());  // the destructor returned everything
}

TEST_CASE("caching pool: a cached block more than twice the size class is not used", "[cuda][pool]") {
  FakeDevice dev;
  CachingPool pool = dev.MakePool();
  void* big = pool.Allocate(8 << 20);
  pool.Free(big);
  void* small = pool.Allocate(1 << 20);  // class 2 MiB; the cached 8 MiB block is too big
  CHECK(small != big);
  void* mid = pool.Allocate(5 << 20);  // class 6 MiB: the 8 MiB block is within 2x
  CHECK(mid == big);
  pool.ReleaseAll();
  CHECK(dev.blocks.empty());
  CHECK(pool.stats().reserved == 0);
}

TEST_CASE("caching pool: when the device is full the cache is given back and the request retried",
          "[cuda][pool]") {
  FakeDevice dev;
  dev.capacity = 8 << 20;
  CachingPool pool = dev.MakePool();
  void* a = pool.Allocate(3 << 20);  // 4 MiB block
  void* b = pool.Allocate(3 << 20);  // 4 MiB block: the device is full
  pool.Free(a);
  pool.Free(b);
  void* c = pool.Allocate(7 << 20);  // 8 MiB: only after both cached blocks are returned
  REQUIRE(c != nullptr);
  CHECK(pool.stats().reserved == (8 << 20));
  CHECK(pool.Allocate(1) == nullptr);  // really full: nullptr, no throw
  CHECK(pool.stats().requested == (7 << 20));
}

}  // namespace
}  // namespace memopt::cuda

#include "exec/buffer_pool.h"

#include <bit>
#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#define MEMOPT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEMOPT_ASAN 1
#endif
#endif

namespace memopt {

namespace {

std::byte* AllocateAligned(size_t capacity) {
  void* p = std::aligned_alloc(BufferPool::kAlignment, capacity);
  if (p == nullptr) throw std::bad_alloc();
  return static_cast<std::byte*>(p);
}

bool EnabledByDefault() {
#ifdef MEMOPT_ASAN
  return false;
#else
  const char* env = std::getenv("MEMOPT_BUFFER_POOL");
  return env == nullptr || std::strcmp(env, "0") != 0;
#endif
}

bool PoisonByDefault() {
  const char* env = std::getenv("MEMOPT_POISON_UNINITIALIZED");
  return env != nullptr && std::strcmp(env, "0") != 0 && env[0] != '\0';
}

}  // namespace

BufferPool::BufferPool() : enabled_(EnabledByDefault()), poison_(PoisonByDefault()) {}

BufferPool& BufferPool::Global() {
  // Never destroyed: tensors held by other static objects may release buffers at exit.
  static BufferPool* pool = new BufferPool();
  return *pool;
}

size_t BufferPool::SizeClass(size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes < kMinPooledBytes) return (bytes + kAlignment - 1) / kAlignment * kAlignment;
  const size_t step = std::bit_floor(bytes) / 4;  // >= 16 KiB, a multiple of kAlignment
  return (bytes + step - 1) / step * step;
}

std::shared_ptr<std::byte[]> BufferPool::AcquireZeroed(size_t bytes) { return Acquire(bytes, true); }

std::shared_ptr<std::byte[]> BufferPool::AcquireUninitialized(size_t bytes) { return Acquire(bytes, false); }

void BufferPool::SetPoison(bool poison) { poison_.store(poison); }

bool BufferPool::poison() const { return poison_.load(); }

std::shared_ptr<std::byte[]> BufferPool::Acquire(size_t bytes, bool zero) {
  const size_t capacity = SizeClass(bytes);
  std::byte* p = nullptr;
  bool pooled = false;
  if (capacity >= kMinPooledBytes) {
    std::lock_guard<std::mutex> lock(mu_);
    if (enabled_) {
      pooled = true;
      auto it = free_.find(capacity);
      if (it != free_.end() && !it->second.empty()) {
        p = it->second.back();
        it->second.pop_back();
        stats_.cached_bytes -= static_cast<int64_t>(capacity);
        ++stats_.hits;
      } else {
        ++stats_.misses;
      }
      stats_.in_use_bytes += static_cast<int64_t>(capacity);
      stats_.in_use_peak = std::max(stats_.in_use_peak, stats_.in_use_bytes);
    }
  }
  if (p == nullptr) {
    try {
      p = AllocateAligned(capacity);
    } catch (const std::bad_alloc&) {
      if (pooled) {
        std::lock_guard<std::mutex> lock(mu_);
        stats_.in_use_bytes -= static_cast<int64_t>(capacity);
      }
      // The cache may hold what this request needs in other size classes.
      Trim();
      p = AllocateAligned(capacity);
      if (pooled) {
        std::lock_guard<std::mutex> lock(mu_);
        stats_.in_use_bytes += static_cast<int64_t>(capacity);
      }
    }
  }
  if (zero) {
    std::memset(p, 0, capacity);
  } else if (poison_.load(std::memory_order_relaxed)) {
    std::memset(p, 0xFF, capacity);
  }
  if (!pooled) return std::shared_ptr<std::byte[]>(p, [](std::byte* q) { std::free(q); });
  return std::shared_ptr<std::byte[]>(p, [this, capacity](std::byte* q) { Release(q, capacity); });
}

void BufferPool::Release(std::byte* p, size_t capacity) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.in_use_bytes -= static_cast<int64_t>(capacity);
    const int64_t size = static_cast<int64_t>(capacity);
    if (enabled_ && stats_.cached_bytes + size <= kCacheLimitFactor * stats_.in_use_peak) {
      free_[capacity].push_back(p);
      stats_.cached_bytes += size;
      return;
    }
  }
  std::free(p);
}

void BufferPool::Trim() {
  std::unordered_map<size_t, std::vector<std::byte*>> drop;
  {
    std::lock_guard<std::mutex> lock(mu_);
    drop.swap(free_);
    stats_.cached_bytes = 0;
  }
  for (auto& [capacity, list] : drop) {
    for (std::byte* p : list) std::free(p);
  }
}

void BufferPool::SetEnabled(bool enabled) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    enabled_ = enabled;
  }
  if (!enabled) Trim();
}

bool BufferPool::enabled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return enabled_;
}

BufferPool::Stats BufferPool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace memopt

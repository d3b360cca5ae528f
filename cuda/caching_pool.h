// The bookkeeping of the CUDA backend's caching allocator, free of CUDA so that CPU tests cover
// it: blocks come from a raw allocator (cudaMalloc on the GPU, malloc in tests), are rounded up
// to a size class, and are cached on free for reuse by later requests. All work runs on one
// stream, so a block freed after its last kernel was enqueued may be handed to the next kernel on
// that stream without synchronising (stream order makes the reuse safe).
//
// Accounting is exact: `requested` counts the bytes callers asked for (what the static peak
// estimate predicts), `reserved` the bytes obtained from the raw allocator (what the device gives
// up, including rounding and cached blocks). Both keep their peaks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <unordered_map>

namespace memopt::cuda {

struct PoolStats {
  int64_t requested = 0;       ///< bytes asked for and not yet freed
  int64_t peak_requested = 0;
  int64_t reserved = 0;        ///< bytes held from the raw allocator (in use + cached)
  int64_t peak_reserved = 0;
  int64_t raw_allocations = 0; ///< calls to the raw allocator
  int64_t reuses = 0;          ///< requests served from the cache
};

class CachingPool {
 public:
  /// `raw_alloc(bytes)` returns nullptr on failure; `raw_free(ptr)` returns a block for good.
  CachingPool(std::function<void*(size_t)> raw_alloc, std::function<void(void*)> raw_free)
      : raw_alloc_(std::move(raw_alloc)), raw_free_(std::move(raw_free)) {}
  CachingPool(const CachingPool&) = delete;
  CachingPool& operator=(const CachingPool&) = delete;
  ~CachingPool() { ReleaseAll(); }

  /// Size class of a request: 512-byte multiples below 1 MiB, 2 MiB multiples above (so large
  /// activations of slightly different sizes share blocks). 0 bytes still gets a 512-byte block.
  static size_t RoundUp(size_t bytes) {
    constexpr size_t kSmall = 512, kLarge = size_t{2} << 20, kLargeFrom = size_t{1} << 20;
    if (bytes < kLargeFrom) return bytes == 0 ? kSmall : (bytes + kSmall - 1) / kSmall * kSmall;
    return (bytes + kLarge - 1) / kLarge * kLarge;
  }

  /// A block of at least `bytes`, or nullptr when the raw allocator fails even after the cache
  /// was returned to it. A cached block is reused when it is at most twice the size class.
  void* Allocate(size_t bytes) {
    const size_t size = RoundUp(bytes);
    void* ptr = nullptr;
    size_t block = size;
    auto it = cached_.lower_bound(size);
    if (it != cached_.end() && it->first <= 2 * size) {
      block = it->first;
      ptr = it->second;
      cached_.erase(it);
      ++stats_.reuses;
    } else {
      ptr = raw_alloc_(size);
      if (ptr == nullptr && !cached_.empty()) {
        ReleaseCached();
        ptr = raw_alloc_(size);
      }
      if (ptr == nullptr) return nullptr;
      ++stats_.raw_allocations;
      stats_.reserved += static_cast<int64_t>(size);
      if (stats_.reserved > stats_.peak_reserved) stats_.peak_reserved = stats_.reserved;
    }
    live_[ptr] = {block, bytes};
    stats_.requested += static_cast<int64_t>(bytes);
    if (stats_.requested > stats_.peak_requested) stats_.peak_requested = stats_.requested;
    return ptr;
  }

  /// Returns a block to the cache. Unknown pointers are ignored and reported by the result.
  bool Free(void* ptr) {
    auto it = live_.find(ptr);
    if (it == live_.end()) return false;
    stats_.requested -= static_cast<int64_t>(it->second.requested);
    cached_.emplace(it->second.block, ptr);
    live_.erase(it);
    return true;
  }

  /// Gives every cached (free) block back to the raw allocator.
  void ReleaseCached() {
    for (const auto& [size, ptr] : cached_) {
      raw_free_(ptr);
      stats_.reserved -= static_cast<int64_t>(size);
    }
    cached_.clear();
  }

  /// Frees everything, live blocks included (end of a run).
  void ReleaseAll() {
    for (const auto& [ptr, info] : live_) {
      cached_.emplace(info.block, ptr);
      stats_.requested -= static_cast<int64_t>(info.requested);
    }
    live_.clear();
    ReleaseCached();
  }

  /// Starts new peaks from the current values (between warmup and measured iterations).
  void ResetPeaks() {
    stats_.peak_requested = stats_.requested;
    stats_.peak_reserved = stats_.reserved;
  }

  const PoolStats& stats() const { return stats_; }
  size_t live_blocks() const { return live_.size(); }
  size_t cached_blocks() const { return cached_.size(); }

 private:
  struct Live {
    size_t block;      ///< size of the block held
    size_t requested;  ///< bytes the caller asked for
  };
  std::function<void*(size_t)> raw_alloc_;
  std::function<void(void*)> raw_free_;
  std::multimap<size_t, void*> cached_;  ///< free blocks by size (best fit = lower_bound)
  std::unordered_map<void*, Live> live_;
  PoolStats stats_;
};

}  // namespace memopt::cuda

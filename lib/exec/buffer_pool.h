// Size-class pool for the CPU executor's tensor buffers (those the run's arena, when it has one,
// does not hold: exec/arena_allocator.h; the arena's own buffer comes from here too).
//
// A step allocates and frees the same sizes node after node and step after step; through malloc
// every large buffer is a fresh mmap, so each step pays page faults and the kernel's zeroing
// again. The pool keeps freed buffers in free lists keyed by size class (four classes per power
// of two, so a buffer is at most 25% larger than asked) and hands them out again, zero-filled,
// or as they are for outputs that a kernel writes whole (no memset pass over them).
//
// Memory accounting does not see the pool: the executor's tracker counts tensor bytes as before,
// so `run`'s peak still equals `scan`'s estimate. What the pool holds beyond the live tensors
// shows in the process's RSS (bench reports it). The cache never holds more than
// kCacheLimitFactor times the largest amount of pooled memory that was in use at once, and Trim()
// frees it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace memopt {

class BufferPool {
 public:
  /// Buffers below this size come from malloc directly (its bins serve them without faults).
  static constexpr size_t kMinPooledBytes = 64 * 1024;
  static constexpr size_t kAlignment = 64;
  /// The cache's limit in multiples of the in-use peak. A step frees and takes the same sizes in
  /// the same order every time, but the classes it holds at its peak are not the ones it holds
  /// between steps; at 1x, buffers freed at a step's end pushed out others the next step needed
  /// (BERT forward: 70 ms a step, then 50 ms at 2x, with a lower RSS peak, from fewer fresh maps).
  static constexpr int64_t kCacheLimitFactor = 2;

  struct Stats {
    int64_t hits = 0;          ///< acquisitions served from the cache
    int64_t misses = 0;        ///< pooled-size acquisitions that allocated
    int64_t cached_bytes = 0;  ///< free buffers held now
    int64_t in_use_bytes = 0;  ///< pooled buffers handed out and not yet released
    int64_t in_use_peak = 0;   ///< the most in_use_bytes ever (times kCacheLimitFactor: the cache's limit)
  };

  /// The process's pool. Enabled unless MEMOPT_BUFFER_POOL=0 or the build runs under
  /// AddressSanitizer (which must see each free to catch a use after it).
  static BufferPool& Global();

  /// A zero-filled, kAlignment-aligned buffer of at least `bytes` (at least one block for 0).
  /// Throws std::bad_alloc when the memory cannot be had, as operator new does.
  std::shared_ptr<std::byte[]> AcquireZeroed(size_t bytes);
  /// The same without the zero fill, for kernels that write every element: the contents are
  /// whatever the buffer held last, or all 0xFF bytes (NaN in every float type) when poisoning
  /// is on, so that a test catches an element a kernel left unwritten.
  std::shared_ptr<std::byte[]> AcquireUninitialized(size_t bytes);

  /// Poisoning: on with MEMOPT_POISON_UNINITIALIZED=1 in the environment (the test suite sets
  /// it), or through SetPoison.
  void SetPoison(bool poison);
  bool poison() const;

  /// Frees every cached buffer (buffers in use are unaffected and return to the pool later).
  void Trim();
  /// Turns pooling on or off; off also trims. Buffers handed out earlier still come back.
  void SetEnabled(bool enabled);
  bool enabled() const;
  Stats stats() const;

  /// The capacity a request of `bytes` gets: rounded up to kAlignment below kMinPooledBytes,
  /// else to the next of 4 evenly spaced sizes per power of two.
  static size_t SizeClass(size_t bytes);

 private:
  BufferPool();
  std::shared_ptr<std::byte[]> Acquire(size_t bytes, bool zero);
  void Release(std::byte* p, size_t capacity);

  mutable std::mutex mu_;
  bool enabled_ = true;
  std::atomic<bool> poison_{false};
  std::unordered_map<size_t, std::vector<std::byte*>> free_;
  Stats stats_;
};

}  // namespace memopt

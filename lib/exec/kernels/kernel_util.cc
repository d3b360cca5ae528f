#include "exec/kernels/kernel_util.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>

#include <cblas.h>

// OpenBLAS's (pthreads build) shutdown of its worker threads; weak, so other BLAS builds link.
extern "C" int blas_thread_shutdown_(void) __attribute__((weak));

namespace memopt {

Status UnsupportedType(DataType t, const std::string& what) {
  std::string msg = "unsupported data type '" + DataTypeName(t) + "'";
  if (!what.empty()) msg += " for " + what;
  return Unsupported(msg);
}

std::optional<int64_t> NormalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

std::optional<std::vector<int64_t>> NormalizeAxes(const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  out.reserve(axes.size());
  for (int64_t a : axes) {
    auto n = NormalizeAxis(a, rank);
    if (!n) return std::nullopt;
    out.push_back(*n);
  }
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) return std::nullopt;
  return out;
}

std::optional<std::vector<int64_t>> BroadcastShape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da == db || db == 1) {
      out[i] = da;
    } else if (da == 1) {
      out[i] = db;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

std::optional<std::vector<int64_t>> BroadcastShapes(const std::vector<std::vector<int64_t>>& shapes) {
  std::vector<int64_t> out;
  for (const auto& s : shapes) {
    auto b = BroadcastShape(out, s);
    if (!b) return std::nullopt;
    out = std::move(*b);
  }
  return out;
}

std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& in_shape, const std::vector<int64_t>& out_shape) {
  std::vector<int64_t> strides(out_shape.size(), 0);
  const int64_t shift = static_cast<int64_t>(out_shape.size()) - static_cast<int64_t>(in_shape.size());
  int64_t s = 1;
  for (int64_t i = static_cast<int64_t>(in_shape.size()) - 1; i >= 0; --i) {
    const int64_t o = i + shift;
    if (o >= 0) strides[o] = in_shape[i] == 1 ? 0 : s;
    s *= in_shape[i];
  }
  return strides;
}

std::string ShapeToString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

int64_t ProductOf(const std::vector<int64_t>& shape, int64_t begin, int64_t end) {
  int64_t p = 1;
  for (int64_t i = std::max<int64_t>(begin, 0); i < end && i < static_cast<int64_t>(shape.size()); ++i) p *= shape[i];
  return p;
}

// ---------------------------------------------------------------------------------------------
// A small persistent thread pool (NumThreads() - 1 workers plus the calling thread).

namespace {

thread_local bool t_in_parallel = false;
/// ParallelFor calls under way on this thread (InParallelFor).
thread_local int t_parallel_for_depth = 0;
constexpr int kMaxThreads = 256;

int ReadNumThreads() {
  if (const char* env = std::getenv("MEMOPT_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n >= 1) return std::min(n, kMaxThreads);
  }
  const unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1 : std::min(static_cast<int>(cores), kMaxThreads);
}

/// The thread count in force; 0 until first read (then MEMOPT_NUM_THREADS or the core count).
std::atomic<int> g_threads{0};

/// Workers that find no work spin this long before they sleep: a parallel region usually follows
/// the last one within microseconds, and waking a sleeping thread (on a virtual machine, a halted
/// vCPU) can take longer than the region itself.
constexpr auto kSpinBeforeSleep = std::chrono::milliseconds(2);

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/// A region is cut into this many chunks per thread, claimed in turn: a thread that runs slower
/// (its core shared on the host, or preempted between chunks) takes fewer of them instead of
/// holding up the region by a whole thread's share.
constexpr int kChunksPerThread = 4;

class Pool {
 public:
  explicit Pool(int threads) : chunks_(threads * kChunksPerThread) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_.store(true);
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
  }
  int size() const { return static_cast<int>(workers_.size()) + 1; }

  void Run(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
    std::lock_guard<std::mutex> run_lock(run_mu_);  // one parallel region at a time
    fn_ = &fn;
    n_ = n;
    pending_.store(chunks_);
    // Publishes the region: the new generation with chunk 0 next (see Claim).
    const uint64_t gen = (claim_.load() >> 32) + 1;
    claim_.store(gen << 32);
    if (sleepers_.load() > 0) {
      std::lock_guard<std::mutex> lock(mu_);
      cv_.notify_all();
    }
    DoChunks(gen);
    for (int spins = 0; pending_.load() != 0; ++spins) {
      if (spins < 4096) {
        CpuRelax();
      } else {
        std::this_thread::yield();
      }
    }
    fn_ = nullptr;
  }

 private:
  /// The next chunk of generation `gen`, or -1 when that generation has none left (or is over).
  /// Generation and chunk index share one atomic, so a late worker can never take a chunk of a
  /// later region while reading the earlier one's function.
  int Claim(uint64_t gen) {
    uint64_t v = claim_.load();
    while (true) {
      if ((v >> 32) != gen || static_cast<int>(v & 0xffffffffu) >= chunks_) return -1;
      if (claim_.compare_exchange_weak(v, v + 1)) return static_cast<int>(v & 0xffffffffu);
    }
  }

  void DoChunks(uint64_t gen) {
    t_in_parallel = true;
    for (int c = Claim(gen); c >= 0; c = Claim(gen)) {
      const int64_t begin = n_ * c / chunks_;
      const int64_t end = n_ * (c + 1) / chunks_;
      if (begin < end) (*fn_)(begin, end);
      pending_.fetch_sub(1);
    }
    t_in_parallel = false;
  }

  void WorkerLoop() {
    uint64_t seen = 0;
    while (true) {
      uint64_t gen = claim_.load() >> 32;
      const auto spin_until = std::chrono::steady_clock::now() + kSpinBeforeSleep;
      for (int spins = 0; gen == seen && !stop_.load(); ++spins) {
        CpuRelax();
        if ((spins & 1023) == 1023 && std::chrono::steady_clock::now() > spin_until) {
          std::unique_lock<std::mutex> lock(mu_);
          sleepers_.fetch_add(1);
          cv_.wait(lock, [&] { return stop_.load() || (claim_.load() >> 32) != seen; });
          sleepers_.fetch_sub(1);
        }
        gen = claim_.load() >> 32;
      }
      if (stop_.load()) return;
      seen = gen;
      DoChunks(gen);
    }
  }

  std::vector<std::thread> workers_;
  std::mutex run_mu_;
  std::mutex mu_;  // guards the sleep only
  std::condition_variable cv_;
  std::atomic<bool> stop_{false};
  std::atomic<int> sleepers_{0};
  /// Generation (high 32 bits) and the next chunk to claim (low 32 bits).
  std::atomic<uint64_t> claim_{0};
  std::atomic<int> pending_{0};
  // Written by Run before it publishes a generation through claim_, read by the chunks after
  // they claimed one.
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  const int chunks_;  ///< kChunksPerThread per thread
};

std::mutex g_pool_mu;
std::unique_ptr<Pool> g_pool;

// OpenBLAS runs single-threaded (see GetPool). It starts its worker threads when it loads, and
// each spins on a core until it sleeps or is stopped; lowering the count does not stop them.
// Shutting them down before the program's other initialisation (priority 101: ahead of every
// ordinary static initialiser) spares every process that time: about 0.1 s of CPU per process on
// two cores, more in large binaries, whose static initialisation the threads would spin through.
// With one thread OpenBLAS never starts them again.
__attribute__((constructor(101))) void StopBlasThreadsAtStart() {
  openblas_set_num_threads(1);
  if (blas_thread_shutdown_ != nullptr) blas_thread_shutdown_();
}

/// The pool sized to NumThreads(), rebuilt when SetNumThreads changed it. OpenBLAS runs
/// single-threaded: Gemm splits a product over this pool itself, and kernels that loop over many
/// small products (convolutions, batched MatMul) run them on the pool's threads at once. Its own
/// threads would sit beside ours (they spin after each call), so a step would run more threads
/// than cores.
Pool& GetPool() {
  std::lock_guard<std::mutex> lock(g_pool_mu);
  const int n = NumThreads();
  if (g_pool == nullptr || g_pool->size() != n) {
    g_pool.reset();
    g_pool = std::make_unique<Pool>(n);
  }
  return *g_pool;
}

}  // namespace

int NumThreads() {
  int n = g_threads.load();
  if (n == 0) {
    int expected = 0;
    g_threads.compare_exchange_strong(expected, ReadNumThreads());
    n = g_threads.load();
  }
  return n;
}

void SetNumThreads(int n) {
  g_threads.store(std::clamp(n, 1, kMaxThreads));
  GetPool();
}

bool InParallelFor() { return t_parallel_for_depth > 0; }

void ParallelFor(int64_t n, int64_t cost_per_item, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  struct Depth {
    Depth() { ++t_parallel_for_depth; }
    ~Depth() { --t_parallel_for_depth; }
  } depth;
  const int64_t work = n * std::max<int64_t>(cost_per_item, 1);
  if (n < 2 || work < 32768 || NumThreads() < 2 || t_in_parallel) {
    fn(0, n);
    return;
  }
  GetPool().Run(n, fn);
}

// ---------------------------------------------------------------------------------------------
// BLAS.

std::string BlasCoreName() {
  const char* name = openblas_get_corename();
  return name == nullptr ? "" : name;
}

namespace {
blasint B(int64_t v) { return static_cast<blasint>(v); }
}  // namespace

namespace {

/// Large products are cut into blocks, one single-threaded BLAS call each, and the blocks run on
/// the pool. The cut depends on the shape alone, never on the thread count: OpenBLAS's kernels
/// (Haswell's, Zen's, SkylakeX's) sum an element in an order that depends on the call's m and n
/// and on the element's place in its register tile, so a cut that followed the thread count gave
/// other bits on 2 threads than on 1. With the same blocks on any number of threads (and inside a
/// parallel region, where they run one after another), every element comes from the same call on
/// the same data, whichever kernel OpenBLAS selected (OPENBLAS_CORETYPE).
///
/// A block does at least kGemmBlockMacs multiply-adds (smaller products stay one call: waking the
/// pool would cost more than it saves); at most kMaxGemmBlocks blocks.
constexpr int64_t kGemmBlockMacs = int64_t{1} << 20;
constexpr int64_t kMaxGemmBlocks = 8;
/// Column blocks are multiples of this, row blocks of kGemmRowAlign (whole register tiles).
constexpr int64_t kGemmColumnAlign = 16;
constexpr int64_t kGemmRowAlign = 8;

/// C = alpha op(A) op(B) + beta C as `call(m', n', A', B', C')` on row or column blocks.
template <typename T, typename Call>
void SplitGemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
               int64_t ldb, T* c, int64_t ldc, Call&& call) {
  const int64_t by_work = std::clamp<int64_t>(m * n * std::max<int64_t>(k, 1) / kGemmBlockMacs, 1, kMaxGemmBlocks);
  const bool by_columns = n >= m;
  const int64_t blocks = std::min(by_work, by_columns ? n / kGemmColumnAlign : m / kGemmRowAlign);
  if (blocks < 2) {
    call(m, n, a, b, c);
    return;
  }
  const int64_t extent = by_columns ? n : m, align = by_columns ? kGemmColumnAlign : kGemmRowAlign;
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t blk = begin; blk < end; ++blk) {
      const int64_t s0 = extent * blk / blocks / align * align;
      const int64_t s1 = blk + 1 == blocks ? extent : extent * (blk + 1) / blocks / align * align;
      if (s0 >= s1) continue;
      if (by_columns) {
        call(m, s1 - s0, a, trans_b ? b + s0 * ldb : b + s0, c + s0);
      } else {
        call(s1 - s0, n, trans_a ? a + s0 : a + s0 * lda, b, c + s0 * ldc);
      }
    }
  };
  if (NumThreads() < 2 || t_in_parallel) {
    run(0, blocks);
  } else {
    GetPool().Run(blocks, run);
  }
}

void Blas(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta, tb, B(m), B(n), B(k), alpha, a, B(lda), b, B(ldb), beta, c, B(ldc));
}

void Blas(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta, tb, B(m), B(n), B(k), alpha, a, B(lda), b, B(ldb), beta, c, B(ldc));
}

/// Both Gemm overloads: each block through single-threaded BLAS (OpenBLAS runs single-threaded;
/// the pool splits the product), or, for k = 0, C = beta C.
template <typename T>
void GemmOnPool(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
                const T* b, int64_t ldb, T beta, T* c, int64_t ldc, bool split = true) {
  if (m == 0 || n == 0) return;
  const auto block = [&](int64_t mm, int64_t nn, const T* aa, const T* bb, T* cc) {
    if (k == 0) {
      for (int64_t i = 0; i < mm; ++i)
        for (int64_t j = 0; j < nn; ++j) cc[i * ldc + j] = beta == T(0) ? T(0) : beta * cc[i * ldc + j];
      return;
    }
    Blas(trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, mm, nn, k, alpha, aa, lda, bb, ldb,
         beta, cc, ldc);
  };
  if (!split) {
    block(m, n, a, b, c);
    return;
  }
  GetPool();
  SplitGemm(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc, block);
}

}  // namespace

void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  GemmOnPool(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
          const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  GemmOnPool(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void GemmOneCall(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                 int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  GemmOnPool(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, false);
}

void GemmOneCall(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                 int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  GemmOnPool(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, false);
}

std::vector<float> ToFloatVector(const Tensor& t) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  switch (t.dtype()) {
    case DataType::kFloat:
      std::copy(t.data<float>(), t.data<float>() + t.numel(), out.begin());
      break;
    case DataType::kFloat16:
      for (int64_t i = 0; i < t.numel(); ++i) out[i] = Float16ToFloat(t.data<uint16_t>()[i]);
      break;
    case DataType::kBfloat16:
      for (int64_t i = 0; i < t.numel(); ++i) out[i] = Bfloat16ToFloat(t.data<uint16_t>()[i]);
      break;
    default:
      for (int64_t i = 0; i < t.numel(); ++i) out[i] = static_cast<float>(t.GetAsDouble(i));
  }
  return out;
}

void FromFloatVector(const std::vector<float>& values, Tensor& t) {
  const int64_t n = std::min<int64_t>(t.numel(), static_cast<int64_t>(values.size()));
  switch (t.dtype()) {
    case DataType::kFloat:
      std::copy(values.begin(), values.begin() + n, t.data<float>());
      break;
    case DataType::kFloat16:
      for (int64_t i = 0; i < n; ++i) t.data<uint16_t>()[i] = FloatToFloat16(values[i]);
      break;
    case DataType::kBfloat16:
      for (int64_t i = 0; i < n; ++i) t.data<uint16_t>()[i] = FloatToBfloat16(values[i]);
      break;
    default:
      for (int64_t i = 0; i < n; ++i) t.SetFromDouble(i, values[i]);
  }
}

}  // namespace memopt

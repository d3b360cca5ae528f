#include "exec/kernels/kernel_util.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>

#include <cblas.h>

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

class Pool {
 public:
  explicit Pool(int threads) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
  }
  int size() const { return static_cast<int>(workers_.size()) + 1; }

  void Run(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
    std::lock_guard<std::mutex> run_lock(run_mu_);  // one parallel region at a time
    const int chunks = size();
    {
      std::lock_guard<std::mutex> lock(mu_);
      fn_ = &fn;
      n_ = n;
      chunks_ = chunks;
      next_.store(0);
      pending_ = chunks;
      ++generation_;
    }
    cv_.notify_all();
    DoChunks();
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [this] { return pending_ == 0; });
    fn_ = nullptr;
  }

 private:
  void DoChunks() {
    t_in_parallel = true;
    while (true) {
      int c = next_.fetch_add(1);
      if (c >= chunks_) break;
      int64_t begin = n_ * c / chunks_;
      int64_t end = n_ * (c + 1) / chunks_;
      if (begin < end) (*fn_)(begin, end);
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_cv_.notify_all();
    }
    t_in_parallel = false;
  }

  void WorkerLoop() {
    uint64_t seen = 0;
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      DoChunks();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex run_mu_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable done_cv_;
  bool stop_ = false;
  uint64_t generation_ = 0;
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  int chunks_ = 0;
  std::atomic<int> next_{0};
  int pending_ = 0;
};

std::mutex g_pool_mu;
std::unique_ptr<Pool> g_pool;

/// The pool sized to NumThreads(), rebuilt when SetNumThreads changed it. OpenBLAS gets the same
/// count, so that its own threads neither exceed it nor spin beside ours.
Pool& GetPool() {
  std::lock_guard<std::mutex> lock(g_pool_mu);
  const int n = NumThreads();
  if (g_pool == nullptr || g_pool->size() != n) {
    g_pool.reset();
    g_pool = std::make_unique<Pool>(n);
    openblas_set_num_threads(n);
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

void ParallelFor(int64_t n, int64_t cost_per_item, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int64_t work = n * std::max<int64_t>(cost_per_item, 1);
  if (n < 2 || work < 32768 || NumThreads() < 2 || t_in_parallel) {
    fn(0, n);
    return;
  }
  GetPool().Run(n, fn);
}

// ---------------------------------------------------------------------------------------------
// BLAS.

namespace {
blasint B(int64_t v) { return static_cast<blasint>(v); }
}  // namespace

void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    return;
  }
  GetPool();  // OpenBLAS's thread count follows NumThreads()
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, B(m), B(n),
              B(k), alpha, a, B(lda), b, B(ldb), beta, c, B(ldc));
}

void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
          const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0 ? 0.0 : beta * c[i * ldc + j];
    return;
  }
  GetPool();
  cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, B(m), B(n),
              B(k), alpha, a, B(lda), b, B(ldb), beta, c, B(ldc));
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

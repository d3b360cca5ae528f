// What `memopt bench` runs a model on: a backend that checks it can run every op, runs the warm-up
// and timed iterations, and reports what it measured. The CPU reference executor's is here
// (CpuBenchBackend); the CUDA executor's is cuda::CudaBenchBackend (cuda/cuda_bench.h). The CLI
// picks one from --device, once.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "exec/executor.h"
#include "exec/op_profile.h"
#include "exec/output_gradients.h"
#include "exec/tensor.h"
#include "io/model_loader.h"
#include "util/status.h"

namespace memopt {

struct BenchRunOptions {
  int warmup = 2;
  int iters = 10;
  uint64_t seed = 0;
  OutputGradients output_grads;
  OpProfile* profile = nullptr;       ///< receives the node times of the timed runs, when set
  std::function<void(int)> on_run;    ///< called with the number of runs done after each (may be empty)
};

/// What the runs of one model measured.
struct BenchRuns {
  /// The whole step of each timed run: on the CPU the Execute call (order, input and weight
  /// binding, node loop, outputs); on the GPU the step between CUDA events.
  std::vector<double> times_ms;
  std::vector<double> node_loop_ms;  ///< CPU: the node loop alone of each timed run
  MemoryStats memory;                ///< of the last run
  std::map<std::string, Tensor> outputs;  ///< of the last run
  /// CPU: the process's resident-set high-water mark over the runs (reset just before them where
  /// the kernel allows, /proc/self/clear_refs; else the process's whole life), its resident set
  /// just before them (code, the loaded model, weights, inputs; -1 when the mark could not be
  /// reset), and what the buffer pool holds free after them; -1 elsewhere.
  int64_t rss_peak_bytes = -1, rss_before_bytes = -1, pool_cached_bytes = -1;
  /// The arena the runs allocated the node outputs from (exec/arena_allocator.h on the CPU,
  /// cuda/device_arena.h on the GPU), 0 when none,
  /// with why not (`no_arena`) and what it held in the last run; -1 elsewhere.
  int64_t arena_bytes = -1;
  std::string no_arena;
  ArenaUse arena_use;
  /// GPU: the caching pool's requested and reserved peaks, and cudaMemGetInfo's free bytes before
  /// and after the last run; -1 / 0 elsewhere.
  int64_t pool_peak_requested = -1, pool_peak_reserved = -1;
  uint64_t device_free_before = 0, device_free_after = 0;
};

class BenchBackend {
 public:
  virtual ~BenchBackend() = default;
  /// "cpu" or "cuda" (--device, the JSON report's "device").
  virtual std::string name() const = 0;
  /// The GPU as the device probe describes it; "" on the CPU.
  virtual std::string gpu() const = 0;
  /// Ok when every op of `graph` runs here; else Unsupported naming the ops and a node of each.
  virtual Status CheckSupported(const Graph& graph) const = 0;
  virtual Expected<BenchRuns> Run(const Model& model, const std::map<std::string, Tensor>& feeds,
                                  const BenchRunOptions& options) const = 0;
};

/// The arena a backend's runs share (PlanRunArena), recorded in `out` (arena_bytes, or 0 and why
/// not in no_arena); nullptr when MEMOPT_ARENA=0 or a size is unknown at the bound dims.
std::shared_ptr<const ArenaPlan> PlanBenchArena(const Model& model, const std::map<std::string, Tensor>& feeds,
                                                BenchRuns& out);

/// The CPU reference executor, one Execute call per run (the step time includes the order, the
/// input and weight binding and the outputs; the node loop alone is reported beside it), with the
/// node outputs in one arena planned once before the runs (PlanRunArena) when the inputs bind
/// every dim.
std::unique_ptr<BenchBackend> CpuBenchBackend();

}  // namespace memopt

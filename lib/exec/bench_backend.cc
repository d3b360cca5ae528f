#include "exec/bench_backend.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/resource.h>

#include "exec/buffer_pool.h"
#include "exec/kernel.h"

namespace memopt {

namespace {

/// A field of /proc/self/status in bytes (VmRSS, VmHWM), or -1.
int64_t StatusBytes(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) != 0) continue;
    std::istringstream kb(line.substr(field.size() + 1));
    int64_t value = -1;
    return kb >> value ? value * 1024 : -1;
  }
  return -1;
}

/// Resets the process's resident-set high-water mark to its resident set now (Linux 4.0+).
bool ResetRssPeak() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return out.good();
}

/// The CPU reference executor, one Execute call per run.
class CpuBackend : public BenchBackend {
 public:
  std::string name() const override { return "cpu"; }
  std::string gpu() const override { return ""; }
  Status CheckSupported(const Graph& graph) const override {
    return memopt::CheckSupported(graph, KernelRegistry::Cpu());
  }
  Expected<BenchRuns> Run(const Model& model, const std::map<std::string, Tensor>& feeds,
                          const BenchRunOptions& options) const override {
    RunOptions run_options;
    run_options.seed = options.seed;
    run_options.output_grads = options.output_grads;
    BenchRuns out;
    run_options.arena = PlanBenchArena(model, feeds, out);
    if (ResetRssPeak()) out.rss_before_bytes = StatusBytes("VmRSS");
    const int total = options.warmup + options.iters;
    for (int i = 0; i < total; ++i) {
      run_options.profile = i >= options.warmup ? options.profile : nullptr;  // the timed runs
      const auto start = std::chrono::steady_clock::now();
      MEMOPT_ASSIGN_OR_RETURN(RunResult run, Execute(model, feeds, run_options));
      const double step_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      if (i >= options.warmup) {
        out.times_ms.push_back(step_ms);
        out.node_loop_ms.push_back(run.elapsed_ms);
      }
      if (options.on_run) options.on_run(i + 1);
      if (i + 1 == total) {
        out.memory = run.memory;
        out.arena_use = run.arena;
        out.outputs = std::move(run.outputs);
      }
    }
    if (out.rss_before_bytes >= 0) out.rss_peak_bytes = StatusBytes("VmHWM");
    struct rusage usage {};
    if (out.rss_peak_bytes < 0 && ::getrusage(RUSAGE_SELF, &usage) == 0) {
      out.rss_peak_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;
      out.rss_before_bytes = -1;
    }
    out.pool_cached_bytes = BufferPool::Global().stats().cached_bytes;
    return out;
  }
};

}  // namespace

std::shared_ptr<const ArenaPlan> PlanBenchArena(const Model& model, const std::map<std::string, Tensor>& feeds,
                                                BenchRuns& out) {
  auto arena = ArenaEnabled() ? PlanRunArena(model, feeds)
                              : Expected<std::shared_ptr<const ArenaPlan>>(InvalidInput("MEMOPT_ARENA=0"));
  if (!arena.ok()) {
    out.arena_bytes = 0;
    out.no_arena = arena.status().message();
    return nullptr;
  }
  out.arena_bytes = (*arena)->arena_bytes;
  return *arena;
}

std::unique_ptr<BenchBackend> CpuBenchBackend() { return std::make_unique<CpuBackend>(); }

}  // namespace memopt

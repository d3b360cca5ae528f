// memopt bench MODEL [MODEL2] --device cpu: runs one or two models on the CPU reference executor
// with the same inputs (by input name), and reports the measured peak and the step time of each;
// for two models also the ratios (model2 / model1) and the largest absolute difference between
// their common outputs. --device picks the backend once (exec/bench_backend.h): cuda runs on the
// CUDA executor (cuda/cuda_bench.h) when every op has a GPU kernel; it needs the CUDA backend and a
// usable GPU (exit 4 otherwise). Step times are
// reported as median, p5 and p95 (nearest rank), and as samples per second when --dims binds a
// batch dim (a name containing "batch").
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <optional>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/peak_estimate.h"
#include "bench_backend.h"
#include "cli.h"
#include "exec/executor.h"
#include "exec/initializer_reader.h"
#include "exec/op_profile.h"
#include "run_inputs.h"
#include "util/bytes.h"

namespace memopt::cli {

namespace {

struct BenchArgs {
  std::vector<std::string> models;
  std::string device = "cpu";
  std::string dims;
  int iters = 10;
  int warmup = 2;
  std::string inputs;
  uint64_t seed = 0;
  std::string output_grads = "random";
  std::string format = "table";
  bool tf32 = false;           ///< --device cuda: float32 MatMul/Gemm may use TF32
  bool profile = false;        ///< time each op type (exec/op_profile.h)
  int threads = 0;            ///< --threads (0: the default)
};

struct ModelBench {
  std::string path;
  MemoryStats memory;
  std::string peak_node;
  /// The whole step: on the CPU the Execute call (order, input and weight binding, node loop,
  /// outputs); on the GPU the step between CUDA events.
  double median_ms = 0, min_ms = 0, max_ms = 0, p5_ms = 0, p95_ms = 0;
  /// --device cpu: the median of the node loop alone (RunResult::elapsed_ms); < 0 when not measured.
  double node_loop_median_ms = -1;
  /// --device cpu: the process's resident-set high-water mark over the runs (weights, inputs,
  /// code, the arena, buffers the pool keeps), its resident set before them (-1 when the mark
  /// covers the whole process), and what the buffer pool holds free; -1 when not measured.
  int64_t rss_peak_bytes = -1, rss_before_bytes = -1, pool_cached_bytes = -1;
  /// The arena the node outputs came from, CPU or GPU (0: none, for the reason in no_arena),
  /// and what it held in the last run; -1 elsewhere.
  int64_t arena_bytes = -1;
  std::string no_arena;
  ArenaUse arena_use;
  std::optional<int64_t> batch;  ///< the bound batch dim, for samples per second
  std::map<std::string, Tensor> outputs;
  int64_t pool_peak_requested = -1, pool_peak_reserved = -1;  ///< --device cuda: measured by the pool
  /// --device cuda: cudaMemGetInfo free bytes before the last run and after it (values held).
  uint64_t device_free_before = 0, device_free_after = 0;
  std::vector<OpTime> profile;  ///< --profile: op types by time per step, longest first
  /// The footprint of a layout planned from the run's order (analysis/memory_layout.h: one arena
  /// plus weights and inputs); -1 when a size is unknown at the bound dims.
  int64_t footprint_bytes = -1;
};

/// The footprint of `graph`'s default run order at `dims` (ModelBench::footprint_bytes).
int64_t PlannedFootprint(const Graph& graph, const DimBindings& dims) {
  auto order = ResolveRunOrder(graph, {});
  if (!order.ok()) return -1;
  const PeakEstimate p = EstimatePeak(graph, *order, {}, dims);
  return p.sized && p.unsized_values == 0 ? p.footprint_bytes : -1;
}

/// (RSS peak - weights - inputs) / footprint (issue 37's measure; the code and libraries count
/// in the RSS, not in the footprint, so small models stay well above 1); -1 when not measured.
/// The RSS peak less weights and inputs over the arena (the planned footprint less weights and
/// inputs, which both sides then leave out), or -1 when not measured or without an arena.
double RssLessWeightsOverArena(const ModelBench& b) {
  if (b.rss_peak_bytes < 0 || b.arena_bytes <= 0) return -1;
  return static_cast<double>(b.rss_peak_bytes - b.memory.weights_and_inputs_bytes) /
         static_cast<double>(b.arena_bytes);
}

/// " (less weights and inputs: R x the arena, code and libraries included)", or "".
std::string RssOverArena(const ModelBench& b) {
  const double r = RssLessWeightsOverArena(b);
  return r < 0 ? std::string()
               : fmt::format(" (less weights and inputs: {:.3f} x the arena, code and libraries included)", r);
}

/// Nearest-rank percentile of sorted values.
double Percentile(const std::vector<double>& sorted, double q) {
  const size_t n = sorted.size();
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(n)));
  rank = std::clamp<size_t>(rank, 1, n);
  return sorted[rank - 1];
}

/// The value of the first bound dim whose name contains "batch" (any case), if any.
std::optional<int64_t> BatchOf(const DimBindings& dims) {
  for (const auto& [name, value] : dims.values()) {
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lower.find("batch") != std::string::npos) return value;
  }
  return std::nullopt;
}

/// Initializers the nodes read, loaded once so that the timed runs do not re-read the file.
Expected<std::map<std::string, Tensor>> PreloadInitializers(const Model& model) {
  std::map<std::string, Tensor> out;
  InitializerReader reader(model);
  for (size_t i = 0; i < model.graph.values.size(); ++i) {
    const Value& v = model.graph.values[i];
    if (!v.initializer.has_value() || v.consumers.empty()) continue;
    MEMOPT_ASSIGN_OR_RETURN(Tensor t, reader.Read(static_cast<ValueId>(i)));
    out.emplace(v.name, std::move(t));
  }
  return out;
}

double Median(const std::vector<double>& sorted) {
  const size_t n = sorted.size();
  return n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

Expected<ModelBench> BenchOne(const BenchBackend& backend, const std::string& path, const Model& model,
                              std::map<std::string, Tensor> feeds, const BenchArgs& args,
                              const OutputGradients& output_grads) {
  MEMOPT_ASSIGN_OR_RETURN(auto weights, PreloadInitializers(model));
  for (auto& [name, t] : weights) feeds.emplace(name, std::move(t));
  OpProfile profile;
  Progress progress("benchmarking " + path);
  BenchRunOptions options;
  options.warmup = args.warmup;
  options.iters = args.iters;
  options.seed = args.seed;
  options.output_grads = output_grads;
  options.profile = args.profile ? &profile : nullptr;
  options.on_run = [&progress, total = args.warmup + args.iters](int done) { progress.Update(done, total); };
  auto runs = backend.Run(model, feeds, options);
  if (!runs.ok()) return runs.status().WithContext(path);
  ModelBench bench;
  bench.path = path;
  bench.memory = runs->memory;
  bench.outputs = std::move(runs->outputs);
  bench.rss_peak_bytes = runs->rss_peak_bytes;
  bench.rss_before_bytes = runs->rss_before_bytes;
  bench.pool_cached_bytes = runs->pool_cached_bytes;
  bench.arena_bytes = runs->arena_bytes;
  bench.no_arena = runs->no_arena;
  bench.arena_use = runs->arena_use;
  bench.pool_peak_requested = runs->pool_peak_requested;
  bench.pool_peak_reserved = runs->pool_peak_reserved;
  bench.device_free_before = runs->device_free_before;
  bench.device_free_after = runs->device_free_after;
  std::vector<double>& times = runs->times_ms;
  std::sort(times.begin(), times.end());
  if (!runs->node_loop_ms.empty()) {
    std::sort(runs->node_loop_ms.begin(), runs->node_loop_ms.end());
    bench.node_loop_median_ms = Median(runs->node_loop_ms);
  }
  bench.min_ms = times.front();
  bench.max_ms = times.back();
  bench.median_ms = Median(times);
  bench.p5_ms = Percentile(times, 0.05);
  bench.p95_ms = Percentile(times, 0.95);
  if (args.profile) bench.profile = profile.PerStep();
  bench.peak_node = bench.memory.peak_node == kNone ? "-" : model.graph.node(bench.memory.peak_node).Describe();
  return bench;
}

struct Comparison {
  double peak_ratio = 0, time_ratio = 0;
  double max_abs_diff = 0;
  std::string max_diff_output;
  std::vector<std::string> common;
  std::vector<std::string> mismatched;  ///< common outputs whose dtype or shape differ
};

Comparison Compare(const ModelBench& a, const ModelBench& b) {
  Comparison c;
  c.peak_ratio = a.memory.peak_bytes > 0 ? static_cast<double>(b.memory.peak_bytes) / a.memory.peak_bytes : 0.0;
  c.time_ratio = a.median_ms > 0 ? b.median_ms / a.median_ms : 0.0;
  for (const auto& [name, ta] : a.outputs) {
    auto it = b.outputs.find(name);
    if (it == b.outputs.end()) continue;
    c.common.push_back(name);
    const Tensor& tb = it->second;
    if (ta.shape() != tb.shape() || ta.dtype() != tb.dtype()) {
      c.mismatched.push_back(name);
      continue;
    }
    if (ta.dtype() == DataType::kString) continue;
    for (int64_t i = 0; i < ta.numel(); ++i) {
      const double x = ta.GetAsDouble(i), y = tb.GetAsDouble(i);
      double d;
      if (std::isnan(x) || std::isnan(y)) {
        d = std::isnan(x) && std::isnan(y) ? 0.0 : std::numeric_limits<double>::infinity();
      } else {
        d = x == y ? 0.0 : std::fabs(x - y);
      }
      if (d > c.max_abs_diff) {
        c.max_abs_diff = d;
        c.max_diff_output = name;
      }
    }
  }
  return c;
}

/// --profile: one line per op type, time per step and its share of the profiled total.
std::string RenderProfile(const std::vector<OpTime>& rows) {
  double total = 0;
  for (const OpTime& r : rows) total += r.ms;
  std::string text = fmt::format("  profile (per step, {:.3f} ms in nodes):\n", total);
  text += fmt::format("    {:>10}  {:>6}  {:>6}  {}\n", "ms", "share", "nodes", "op");
  for (const OpTime& r : rows) {
    text += fmt::format("    {:>10.3f}  {:>5.1f}%  {:>6}  {}\n", r.ms, total > 0 ? 100.0 * r.ms / total : 0.0, r.nodes,
                        r.op);
  }
  return text;
}

std::string RenderTable(const BenchBackend& backend, const std::vector<ModelBench>& benches,
                        const std::optional<Comparison>& cmp, const BenchArgs& args) {
  const std::string device = backend.gpu().empty() ? backend.name() : backend.name() + ", " + backend.gpu();
  std::string text = fmt::format("device: {} ({} iterations after {} warmup)\n", device, args.iters, args.warmup);
  for (size_t i = 0; i < benches.size(); ++i) {
    const ModelBench& b = benches[i];
    text += fmt::format("model {}: {}\n", i + 1, b.path);
    text += fmt::format("  measured peak: {} ({} bytes) at {}\n", HumanBytes(b.memory.peak_bytes),
                        WithThousands(b.memory.peak_bytes), b.peak_node);
    if (b.footprint_bytes >= 0) {
      text += fmt::format("  planned footprint: {} ({} bytes, {:.3f} x the measured peak; one arena laid out from the "
                          "schedule plus weights and inputs)\n",
                          HumanBytes(b.footprint_bytes), WithThousands(b.footprint_bytes),
                          b.memory.peak_bytes > 0 ? static_cast<double>(b.footprint_bytes) / b.memory.peak_bytes : 0.0);
    }
    if (b.pool_peak_requested >= 0) {
      // The line above follows the static estimate's rules (views counted as new values); these
      // are the pool's own counts, and the driver's view of the device as a cross-check.
      text += fmt::format("  GPU pool peak: requested {} ({} bytes, {:.3f} x the estimate), reserved {} ({} bytes)\n",
                          HumanBytes(b.pool_peak_requested), WithThousands(b.pool_peak_requested),
                          b.memory.peak_bytes > 0 ? static_cast<double>(b.pool_peak_requested) / b.memory.peak_bytes
                                                  : 0.0,
                          HumanBytes(b.pool_peak_reserved), WithThousands(b.pool_peak_reserved));
      text += fmt::format("  device free (cudaMemGetInfo): {} before the run, {} after it (outputs held)\n",
                          HumanBytes(static_cast<int64_t>(b.device_free_before)),
                          HumanBytes(static_cast<int64_t>(b.device_free_after)));
    }
    text += fmt::format("  step time: median {:.3f} ms, p5 {:.3f} ms, p95 {:.3f} ms, min {:.3f} ms, max {:.3f} ms\n",
                        b.median_ms, b.p5_ms, b.p95_ms, b.min_ms, b.max_ms);
    if (b.node_loop_median_ms >= 0) {
      text += fmt::format("  node loop: median {:.3f} ms (the step less binding inputs and weights and handing back "
                          "outputs)\n",
                          b.node_loop_median_ms);
    }
    if (b.arena_bytes > 0) {
      text += fmt::format("  arena: {} ({} bytes) allocated from the planned arena; of the node outputs with a slot, "
                          "{} written in it, {} views kept, {} copied into it, {} outside it (last run)\n",
                          HumanBytes(b.arena_bytes), WithThousands(b.arena_bytes), b.arena_use.in_slot,
                          b.arena_use.views_kept, b.arena_use.moved, b.arena_use.outside);
    } else if (b.arena_bytes == 0) {
      text += fmt::format("  arena: none, outputs from the buffer pool ({})\n", b.no_arena);
    }
    if (b.rss_peak_bytes >= 0 && b.rss_before_bytes >= 0) {
      const int64_t growth = b.rss_peak_bytes - b.rss_before_bytes;
      text += fmt::format("  process RSS: peak {} over the runs{}, {} above the {} before them (code, model, weights, "
                          "inputs){}; {} the buffer pool keeps for the next step\n",
                          HumanBytes(b.rss_peak_bytes), RssOverArena(b), HumanBytes(growth),
                          HumanBytes(b.rss_before_bytes),
                          b.arena_bytes > 0 ? fmt::format(": {:.3f} x the arena",
                                                          static_cast<double>(growth) / b.arena_bytes)
                                            : std::string(),
                          HumanBytes(b.pool_cached_bytes));
    } else if (b.rss_peak_bytes >= 0) {
      text += fmt::format("  process RSS: peak {} (the process so far: weights, inputs, code and {} the buffer pool "
                          "keeps for the next step)\n",
                          HumanBytes(b.rss_peak_bytes), HumanBytes(b.pool_cached_bytes));
    }
    if (b.batch && b.median_ms > 0) {
      text += fmt::format("  throughput: {:.1f} samples/s (batch {})\n", 1000.0 * *b.batch / b.median_ms, *b.batch);
    }
    if (args.profile) text += RenderProfile(b.profile);
  }
  if (cmp) {
    text += "model 2 / model 1:\n";
    text += fmt::format("  peak ratio: {:.4f}\n", cmp->peak_ratio);
    text += fmt::format("  time ratio: {:.4f}\n", cmp->time_ratio);
    text += fmt::format("  max abs diff: {:.6g} over {} common outputs{}\n", cmp->max_abs_diff, cmp->common.size(),
                        cmp->max_diff_output.empty() ? "" : " (largest in '" + cmp->max_diff_output + "')");
    for (const auto& name : cmp->mismatched) text += fmt::format("  output '{}': dtype or shape differ\n", name);
  }
  return text;
}

nlohmann::json RenderJson(const BenchBackend& backend, const std::vector<ModelBench>& benches,
                          const std::optional<Comparison>& cmp, const BenchArgs& args) {
  nlohmann::json j;
  j["device"] = backend.name();
  if (!backend.gpu().empty()) j["gpu"] = backend.gpu();
  j["iters"] = args.iters;
  j["warmup"] = args.warmup;
  j["models"] = nlohmann::json::array();
  for (const ModelBench& b : benches) {
    j["models"].push_back({{"path", b.path},
                           {"peak_bytes", b.memory.peak_bytes},
                           {"peak_node", b.peak_node},
                           {"weights_and_inputs_bytes", b.memory.weights_and_inputs_bytes},
                           {"time_ms",
                            {{"median", b.median_ms},
                             {"p5", b.p5_ms},
                             {"p95", b.p95_ms},
                             {"min", b.min_ms},
                             {"max", b.max_ms}}}});
    if (b.node_loop_median_ms >= 0) j["models"].back()["node_loop_ms"] = {{"median", b.node_loop_median_ms}};
    j["models"].back()["footprint_bytes"] = b.footprint_bytes >= 0 ? nlohmann::json(b.footprint_bytes) : nlohmann::json(nullptr);
    if (b.rss_peak_bytes >= 0) {
      j["models"].back()["rss_peak_bytes"] = b.rss_peak_bytes;
      j["models"].back()["pool_cached_bytes"] = b.pool_cached_bytes;
      if (RssLessWeightsOverArena(b) >= 0) {
        j["models"].back()["rss_less_weights_and_inputs_over_arena"] = RssLessWeightsOverArena(b);
      }
      if (b.rss_before_bytes >= 0) {
        j["models"].back()["rss_before_bytes"] = b.rss_before_bytes;
        if (b.arena_bytes > 0) {
          j["models"].back()["rss_growth_over_arena"] =
              static_cast<double>(b.rss_peak_bytes - b.rss_before_bytes) / static_cast<double>(b.arena_bytes);
        }
      }
    }
    if (b.arena_bytes >= 0) {
      j["models"].back()["arena_bytes"] = b.arena_bytes;
      if (b.arena_bytes > 0) {
        j["models"].back()["arena_outputs"] = {{"in_slot", b.arena_use.in_slot},
                                               {"views_kept", b.arena_use.views_kept},
                                               {"moved", b.arena_use.moved},
                                               {"outside", b.arena_use.outside}};
      } else {
        j["models"].back()["no_arena"] = b.no_arena;
      }
    }
    if (b.batch && b.median_ms > 0) {
      j["models"].back()["batch"] = *b.batch;
      j["models"].back()["samples_per_s"] = 1000.0 * *b.batch / b.median_ms;
    }
    if (args.profile) {
      nlohmann::json rows = nlohmann::json::array();
      for (const OpTime& r : b.profile) rows.push_back({{"op", r.op}, {"nodes", r.nodes}, {"ms_per_step", r.ms}});
      j["models"].back()["profile"] = rows;
    }
    if (b.pool_peak_requested >= 0) {
      j["models"].back()["gpu_pool"] = {{"peak_requested_bytes", b.pool_peak_requested},
                                        {"peak_reserved_bytes", b.pool_peak_reserved},
                                        {"device_free_before_bytes", b.device_free_before},
                                        {"device_free_after_bytes", b.device_free_after}};
    }
  }
  if (cmp) {
    j["comparison"] = {{"peak_ratio", cmp->peak_ratio},
                       {"time_ratio", cmp->time_ratio},
                       {"max_abs_diff", std::isinf(cmp->max_abs_diff) ? nlohmann::json("inf")
                                                                       : nlohmann::json(cmp->max_abs_diff)},
                       {"common_outputs", cmp->common},
                       {"mismatched_outputs", cmp->mismatched}};
  }
  return j;
}

int RunBench(const BenchArgs& args, const GlobalOptions&) {
  ApplyThreads(args.threads);
  // The device comes first: without a usable GPU the answer is exit 4, whatever the model.
  auto backend = MakeBenchBackend(args.device, args.tf32);
  if (!backend.ok()) return ReportError(backend.status());
  if (args.format != "table" && args.format != "json") {
    return ReportError(UsageError("unknown --format '" + args.format + "'; use table or json"));
  }
  if (args.iters < 1) return ReportError(UsageError("--iters must be at least 1"));
  if (args.warmup < 0) return ReportError(UsageError("--warmup must be 0 or more"));
  auto grad_mode = ParseOutputGradMode(args.output_grads);
  if (!grad_mode.ok()) return ReportError(grad_mode.status());

  std::vector<ModelBench> benches;
  std::map<std::string, Tensor> shared;  // inputs of the first model, reused by name
  for (const std::string& path : args.models) {
    auto loaded = LoadAndInfer(path);
    if (!loaded.ok()) return ReportError(loaded.status());
    // Every op the backend lacks, named with a node, before any weight is read (exit 1).
    Status supported = (*backend)->CheckSupported(loaded->model.graph);
    if (!supported.ok()) return ReportError(supported.WithContext(path));
    auto inputs = PrepareInputs(loaded->model.graph, args.inputs, args.dims, args.seed, shared);
    if (!inputs.ok()) return ReportError(inputs.status().WithContext(path));
    if (shared.empty()) shared = inputs->feeds;
    OutputGradients output_grads;
    output_grads.mode = *grad_mode;
    output_grads.given = inputs->output_grads;
    auto bench = BenchOne(**backend, path, loaded->model, inputs->feeds, args, output_grads);
    if (!bench.ok()) return ReportError(bench.status());
    bench->batch = BatchOf(inputs->dims);
    bench->footprint_bytes = PlannedFootprint(loaded->model.graph, inputs->dims);
    benches.push_back(std::move(bench).value());
  }
  std::optional<Comparison> cmp;
  if (benches.size() == 2) cmp = Compare(benches[0], benches[1]);
  const std::string text = args.format == "json" ? RenderJson(**backend, benches, cmp, args).dump(2) + "\n"
                                                 : RenderTable(**backend, benches, cmp, args);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

}  // namespace

std::function<int()> SetupBench(CLI::App& app, const GlobalOptions& globals) {
  auto args = std::make_shared<BenchArgs>();
  app.add_option("models", args->models, "one model, or two to compare (e.g. original and rewritten)")
      ->required()
      ->expected(1, 2);
  app.add_option("--device", args->device, "cpu (reference executor) or cuda")->default_val("cpu");
  app.add_option("--dims", args->dims, "bind symbolic input dims, e.g. batch=8,seq_len=512");
  app.add_option("--iters", args->iters, "timed iterations")->default_val(10);
  app.add_option("--warmup", args->warmup, "untimed iterations first")->default_val(2);
  app.add_option("--inputs", args->inputs, "folder of TensorProto .pb inputs (as for memopt run)");
  app.add_option("--seed", args->seed, "seed of the random inputs")->default_val(0);
  app.add_option("--output-grads", args->output_grads,
                 "training graphs: gradient fed for module outputs that are not a scalar loss and not given as "
                 "<output>_grad.pb in --inputs: ones or random (a scalar loss always gets 1)")
      ->default_val("random");
  app.add_option("--format", args->format, "table | json")->default_val("table");
  app.add_flag("--tf32", args->tf32, "--device cuda: let float32 MatMul/Gemm use TF32 tensor cores");
  AddThreadsOption(app, args->threads);
  app.add_flag("--profile", args->profile,
               "list the op types by time per step over the timed runs (cpu: each kernel on the wall clock; "
               "cuda: CUDA events between nodes, launch gaps included)");
  return [args, &globals] { return RunBench(*args, globals); };
}

}  // namespace memopt::cli

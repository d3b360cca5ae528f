// memopt run MODEL: runs the model once on the CPU reference executor, in the order `scan` uses,
// and prints the measured peak memory (same accounting rules as scan's static estimate).
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "cli.h"
#include "exec/tensor_compare.h"
#include "exec/executor.h"
#include "exec/tensor_io.h"
#include "run_inputs.h"
#include "util/bytes.h"

namespace memopt::cli {

namespace {

struct RunArgs {
  std::string model;
  std::string inputs;
  std::string save_outputs;
  std::string dims;
  uint64_t seed = 0;
  std::string output_grads = "random";
  double rtol = 1e-3;
  double atol = 1e-7;
  int threads = 0;  ///< --threads (0: the default)
};

std::string NodeText(const Graph& graph, NodeId node) {
  if (node == kNone) return "-";
  return graph.node(node).Describe();
}

/// Compares the outputs with a test-data set's expected ones and adds the count to `text`;
/// `mismatch` becomes the kVerifyFailed status of the worst mismatch (most differing values, then
/// largest difference). An error when an expected output was not computed.
Status CompareExpected(const RunArgs& args, const std::map<std::string, ExpectedOutput>& expected,
                       const std::map<std::string, Tensor>& outputs, std::string* text, Status* mismatch) {
  if (expected.empty()) return Status::Ok();
  const CompareOptions compare{args.rtol, args.atol};
  size_t matched = 0;
  std::pair<int64_t, double> worst{-1, 0.0};
  for (const auto& [name, want] : expected) {
    auto it = outputs.find(name);
    if (it == outputs.end()) return InternalError("graph output '" + name + "' was not computed");
    const TensorComparison c = CompareTensors(it->second, want.tensor, compare);
    if (c.match) {
      ++matched;
      continue;
    }
    if (std::make_pair(c.values_differing, c.worst_abs_diff) > worst) {
      worst = {c.values_differing, c.worst_abs_diff};
      *mismatch = Status(ErrorCode::kVerifyFailed,
                        fmt::format("output '{}' differs from {}: {} (largest |difference| {:g}; rtol {:g}, atol {:g})",
                                    name, want.file, c.mismatch, c.worst_abs_diff, args.rtol, args.atol));
    }
  }
  *text += fmt::format("expected outputs: {} of {} match (rtol {:g}, atol {:g})\n", matched, expected.size(), args.rtol,
                       args.atol);
  return Status::Ok();
}

int RunRun(const RunArgs& args, const GlobalOptions& globals) {
  ApplyThreads(args.threads);
  auto loaded = LoadAndInfer(args.model);
  if (!loaded.ok()) return ReportError(loaded.status());
  const Model& model = loaded->model;
  const Graph& graph = model.graph;
  Status supported = CheckSupported(graph, KernelRegistry::Cpu());
  if (!supported.ok()) return ReportError(supported.WithContext(args.model));

  auto inputs = PrepareInputs(graph, args.inputs, args.dims, args.seed);
  if (!inputs.ok()) return ReportError(inputs.status());

  RunOptions options;
  options.seed = args.seed;
  options.output_grads.given = inputs->output_grads;
  auto grad_mode = ParseOutputGradMode(args.output_grads);
  if (!grad_mode.ok()) return ReportError(grad_mode.status());
  options.output_grads.mode = *grad_mode;
  Stopwatch watch;
  auto result = Execute(model, inputs->feeds, options);
  if (!result.ok()) return ReportError(result.status().WithContext(args.model));
  const double total_ms = watch.ElapsedMs();

  int written = 0;
  if (!args.save_outputs.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(args.save_outputs, ec);
    if (ec) return ReportError(InvalidInput(args.save_outputs + ": cannot create the folder: " + ec.message()));
    for (const auto& [name, tensor] : result->outputs) {
      const std::string path = (std::filesystem::path(args.save_outputs) / OutputFileName(name)).string();
      Status s = WriteTensorFile(path, tensor, name);
      if (!s.ok()) return ReportError(s);
      ++written;
    }
  }

  const MemoryStats& mem = result->memory;
  std::string text = fmt::format("model: {} ({} nodes)\n", args.model, graph.nodes.size());
  if (globals.verbosity >= 1) {
    for (ValueId v : graph.inputs) {
      const std::string& name = graph.value(v).name;
      auto it = inputs->feeds.find(name);
      if (it == inputs->feeds.end()) continue;
      text += fmt::format("input: {} {} ({})\n", name, it->second.Describe(), inputs->origin.at(name));
    }
  }
  text += fmt::format("measured peak: {} ({} bytes)\n", HumanBytes(mem.peak_bytes), WithThousands(mem.peak_bytes));
  text += fmt::format("peak node: {} (step {} of {})\n", NodeText(graph, mem.peak_node), mem.peak_position + 1,
                      graph.nodes.size());
  text += fmt::format("weights and inputs: {} ({} bytes)\n", HumanBytes(mem.weights_and_inputs_bytes),
                      WithThousands(mem.weights_and_inputs_bytes));
  text += fmt::format("time: {:.3f} ms (nodes), {:.3f} ms (with initializer reading)\n", result->elapsed_ms, total_ms);
  if (!args.save_outputs.empty()) text += fmt::format("outputs: {} written to {}\n", written, args.save_outputs);

  // Expected outputs of an ONNX test-data set: all must match, else exit 5 with the worst one.
  Status mismatch = Status::Ok();
  Status compared = CompareExpected(args, inputs->expected, result->outputs, &text, &mismatch);
  if (!compared.ok()) return ReportError(compared);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return mismatch.ok() ? kExitOk : ReportError(mismatch);
}

}  // namespace

std::function<int()> SetupRun(CLI::App& app, const GlobalOptions& globals) {
  auto args = std::make_shared<RunArgs>();
  app.add_option("model", args->model, "ONNX model (forward-only or training graph)")->required();
  app.add_option("--inputs", args->inputs,
                 "folder of TensorProto .pb files: bound by tensor name, or input_<i>.pb by position; "
                 "other inputs get seeded random values; output_<i>.pb files (an ONNX test-data set) are "
                 "expected outputs, compared with --rtol/--atol (exit 5 when one differs)");
  app.add_option("--save-outputs", args->save_outputs, "write each graph output to DIR/<name>.pb");
  app.add_option("--output-grads", args->output_grads,
                 "training graphs: gradient fed for module outputs that are not a scalar loss and not given as "
                 "<output>_grad.pb in --inputs: ones or random (a scalar loss always gets 1, as loss.backward())")
      ->default_val("random");
  app.add_option("--rtol", args->rtol, "relative tolerance for expected outputs (output_<i>.pb in --inputs)")
      ->default_val(1e-3)
      ->check(CLI::NonNegativeNumber);
  app.add_option("--atol", args->atol, "absolute tolerance for expected outputs")
      ->default_val(1e-7)
      ->check(CLI::NonNegativeNumber);
  app.add_option("--dims", args->dims, "bind symbolic input dims, e.g. batch=8,seq_len=512");
  AddThreadsOption(app, args->threads);
  app.add_option("--seed", args->seed, "seed of the random inputs (and of Dropout without a seed attribute)")
      ->default_val(0);
  return [args, &globals] { return RunRun(*args, globals); };
}

}  // namespace memopt::cli

// memopt grad MODEL -o TRAIN.onnx: builds the backward pass of a forward model in ORTModule's
// training-graph layout (forward, YieldOp, backward), so that scan, plan, apply and bench work on
// models exported for inference (docs/grad.md).
#include <cstdio>

#include <fmt/format.h>

#include "cli.h"
#include "grad/grad_builder.h"
#include "grad/training_model_writer.h"
#include "io/temp_file.h"

namespace memopt::cli {

namespace {

struct GradArgs {
  std::string model;
  std::string output;
  std::string loss;
  std::string trainable;
  std::string frozen;
  bool list = false;
  bool no_fuse = false;
};

std::string ListNames(const std::vector<std::string>& names, size_t limit) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < limit; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > limit) out += fmt::format(", ... ({} more)", names.size() - limit);
  return out;
}

/// The report line of a torch.export-based export (grad/torch_parameters.h); "" for other models.
std::string TorchParametersLine(const grad::TorchParameterStats& t) {
  if (!t.has_signature) return "";
  std::vector<std::string> restored;
  if (t.restored_transposes > 0) restored.push_back(fmt::format("{} from folded transposes", t.restored_transposes));
  if (t.split_merged > 0) restored.push_back(fmt::format("{} split from merged initializers", t.split_merged));
  if (t.recurrent_parameters > 0) {
    restored.push_back(fmt::format("{} recurrent weights from folded W/R/B", t.recurrent_parameters));
  }
  if (t.training_batch_norms > 0) {
    restored.push_back(fmt::format("{} BatchNormalization back in training mode", t.training_batch_norms));
  }
  std::string line = fmt::format("  PyTorch export   {} parameters trainable, {} buffers frozen", t.parameters.size(),
                                 t.buffers.size());
  if (!restored.empty()) line += "; restored: " + ListNames(restored, 4);
  return line + "\n";
}

void WarnUnrecoverable(const grad::TorchParameterStats& t) {
  if (t.unrecoverable.empty()) return;
  PrintWarning(fmt::format(
      "{} PyTorch parameter(s) of the graph signature are not in the graph (folded into constants by the exporter's "
      "optimizer, or unused) and get no gradient: {}; export with torch.onnx.export(..., optimize=False) to train "
      "them",
      t.unrecoverable.size(), ListNames(t.unrecoverable, 5)));
}

int RunGrad(const GradArgs& args, const GlobalOptions& globals) {
  if (Status out = io::CheckOutputPath(args.output, args.model); !out.ok()) return ReportError(out);
  auto model = [&] {
    Progress loading("loading " + args.model);
    return LoadModel(args.model);
  }();
  if (!model.ok()) return ReportError(model.status().WithContext(args.model));
  for (const std::string& w : model->warnings) PrintWarning(args.model + ": " + w);
  const int forward_before = static_cast<int>(model->graph.nodes.size());

  Progress progress("building the gradient graph");
  GradOptions options;
  options.loss = args.loss;
  options.trainable = args.trainable;
  options.frozen = args.frozen;
  options.fuse_gelu = !args.no_fuse;
  auto result = BuildGradientGraph(*model, options);
  if (!result.ok()) return ReportError(result.status().WithContext(args.model));

  progress.Stage("writing " + args.output);
  auto written = WriteTrainingModel(*result, args.output);
  if (!written.ok()) return ReportError(written.status());

  std::string text = fmt::format("wrote {} ({} bytes)\n", args.output, written->model_bytes);
  text += fmt::format("  forward nodes    {} ({} in the input model", result->forward_nodes, forward_before);
  text += result->fused_gelu > 0 ? fmt::format("; {} GELU patterns fused into Gelu)\n", result->fused_gelu) : ")\n";
  text += fmt::format("  yield            {}\n", result->model.graph.node(result->yield_node).name);
  text += fmt::format("  backward nodes   {}\n", result->backward_nodes);
  if (!result->loss.empty()) {
    text += fmt::format("  loss             {}\n", result->loss);
  } else {
    std::vector<std::string> grads;
    for (const auto& o : result->seeded_outputs) grads.push_back(o + "_grad");
    text += fmt::format("  loss             none; incoming gradients {}\n", ListNames(grads, 8));
  }
  text += fmt::format("  gradients        {}\n", result->gradients.size());
  text += TorchParametersLine(result->torch_parameters);
  if (args.list) {
    for (const auto& name : result->gradients) text += "    " + name + "_grad\n";
  }
  PrintReport(text, args.output == "-");  // -o -: the model took stdout

  if (globals.verbosity >= 0 && !result->unused_trainable.empty()) {
    PrintWarning(fmt::format("{} trainable tensor(s) do not affect the differentiated outputs and get no gradient: {}",
                             result->unused_trainable.size(), ListNames(result->unused_trainable, 5)));
  }
  if (globals.verbosity >= 0 && !result->nondifferentiable_trainable.empty()) {
    PrintWarning(fmt::format(
        "{} trainable tensor(s) reach the differentiated outputs only through integer, boolean or index values, "
        "which carry no gradient, and get none: {}",
        result->nondifferentiable_trainable.size(), ListNames(result->nondifferentiable_trainable, 5)));
  }
  if (globals.verbosity >= 0) {
    for (const TiedParameter& t : result->tied_parameters) {
      std::vector<std::string> quoted;
      for (const auto& n : t.nodes) quoted.push_back("'" + n + "'");
      PrintWarning(fmt::format(
          "initializer '{}' is read as a parameter by {} nodes of {} modules ({}), which will train it as one tied "
          "tensor; an eval-mode torch.onnx.export merges parameters with equal values (e.g. fresh LayerNorm "
          "weights): export in training mode to keep them apart (docs/grad.md)",
          t.initializer, t.nodes.size(), t.modules, ListNames(quoted, 3)));
    }
  }
  if (globals.verbosity >= 0) {
    for (const std::string& w : result->export_mismatches) PrintWarning(w);
    WarnUnrecoverable(result->torch_parameters);
  }
  for (const auto& w : result->warnings) PrintInfo(1, w);
  return kExitOk;
}

}  // namespace

std::function<int()> SetupGrad(CLI::App& app, const GlobalOptions& globals) {
  auto args = std::make_shared<GradArgs>();
  app.add_option("model", args->model, "forward ONNX model (e.g. from torch.onnx.export)")->required();
  app.add_option("-o,--output", args->output, "training model to write (forward + YieldOp + backward)")->required();
  app.add_option("--loss", args->loss,
                 "graph output to differentiate (default: the only scalar float output; without one, every "
                 "float output gets an incoming gradient <output>_grad)");
  app.add_option("--trainable", args->trainable,
                 "regex (searched in names) of the tensors to train; default: every float initializer. Graph "
                 "inputs get gradients only when named here");
  app.add_option("--frozen", args->frozen, "regex (searched in names) of tensors that get no gradient");
  app.add_flag("--list", args->list, "list the gradient outputs");
  app.add_flag("--no-fuse", args->no_fuse,
               "keep the erf form of GELU as it is (by default it becomes com.microsoft::Gelu, as ORTModule does)");
  return [args, &globals] { return RunGrad(*args, globals); };
}

}  // namespace memopt::cli

// memopt_conformance: runs the ONNX backend node tests (onnx/backend/test/data/node/<case>/) through
// the CPU executor and compares every output with the expected one (rtol 1e-3, atol 1e-7, NaN ==
// NaN). Cases whose op has no kernel, whose inputs/outputs are not plain tensors, or whose data
// types the executor or the kernel does not handle are skipped (listed with the reason in
// --skipped-file). Prints one line per failure, then "N passed, N failed, N skipped".
//
//   memopt_conformance DIR [--ops A,B] [--verbose] [--min-pass-rate 0.95] [--skipped-file PATH]
//
// Exit codes: 0 ok, 1 pass rate below --min-pass-rate, 2 usage, 77 DIR missing (ctest skip).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "exec/executor.h"
#include "exec/tensor_compare.h"
#include "exec/tensor_io.h"
#include "io/model_loader.h"
#include "shape/shape_infer.h"

namespace fs = std::filesystem;
using namespace memopt;

namespace {

constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-7;

struct Options {
  std::string dir;
  std::set<std::string> ops;
  bool verbose = false;
  double min_pass_rate = 0.95;
  std::string skipped_file = "conformance_skipped.txt";
};

enum class Outcome { kPass, kFail, kSkip };

struct CaseResult {
  Outcome outcome = Outcome::kPass;
  std::string reason;
};

CaseResult Skip(std::string reason) { return {Outcome::kSkip, std::move(reason)}; }
CaseResult Fail(std::string reason) { return {Outcome::kFail, std::move(reason)}; }

bool SupportedType(DataType t) {
  switch (t) {
    case DataType::kFloat: case DataType::kDouble: case DataType::kFloat16: case DataType::kBfloat16:
    case DataType::kInt8: case DataType::kUint8: case DataType::kInt16: case DataType::kUint16:
    case DataType::kInt32: case DataType::kUint32: case DataType::kInt64: case DataType::kUint64:
    case DataType::kBool: case DataType::kString:
      return true;
    default:
      return false;
  }
}

std::string OpKey(const Node& n) { return n.domain.empty() ? n.op_type : n.domain + "::" + n.op_type; }

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep)) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

/// "" when `actual` matches `expected`, else the first mismatch.
std::string Compare(const Tensor& actual, const Tensor& expected) {
  return CompareTensors(actual, expected, CompareOptions{kRtol, kAtol}).mismatch;
}

/// Why the executor cannot run this model, or "".
std::string SkipReason(const Graph& graph, const std::map<std::string, Tensor>& feeds) {
  const KernelRegistry& registry = KernelRegistry::Cpu();
  for (const Node& node : graph.nodes) {
    if (registry.Find(node.domain, node.op_type) == nullptr) return "no kernel for " + OpKey(node);
  }
  for (ValueId v : graph.inputs) {
    const Value& value = graph.value(v);
    if (!value.info.is_tensor) return "input '" + value.name + "' is not a plain tensor";
    if (!SupportedType(value.info.dtype)) return "input '" + value.name + "' has data type " + DataTypeName(value.info.dtype);
  }
  for (ValueId v : graph.outputs) {
    const Value& value = graph.value(v);
    if (!value.info.is_tensor) return "output '" + value.name + "' is not a plain tensor";
    if (!SupportedType(value.info.dtype)) {
      return "output '" + value.name + "' has data type " + DataTypeName(value.info.dtype);
    }
  }
  // Kernels that draw random numbers (Dropout in training mode with ratio > 0) use memopt's
  // counter-based generator, not numpy's: such expected values cannot match.
  for (const Node& node : graph.nodes) {
    const KernelInfo* info = registry.Find(node.domain, node.op_type);
    if (info->is_random == nullptr) continue;
    KernelContext ctx;
    ctx.node = &node;
    ctx.graph = &graph;
    for (ValueId in : node.inputs) {
      auto it = in == kNone ? feeds.end() : feeds.find(graph.value(in).name);
      ctx.inputs.push_back(it == feeds.end() ? nullptr : &it->second);
    }
    if (info->is_random(ctx)) return "random output: " + OpKey(node) + " draws from memopt's Philox generator";
  }
  for (const Node& node : graph.nodes) {
    const KernelInfo* info = registry.Find(node.domain, node.op_type);
    if (info->types.empty() || node.inputs.empty() || node.inputs[0] == kNone) continue;
    const Value& main = graph.value(node.inputs[0]);
    DataType t = main.info.dtype;
    if (auto it = feeds.find(main.name); it != feeds.end()) t = it->second.dtype();
    if (t == DataType::kUndefined) continue;
    if (std::find(info->types.begin(), info->types.end(), t) == info->types.end()) {
      return "data type " + DataTypeName(t) + " not handled by the " + OpKey(node) + " kernel";
    }
  }
  return {};
}

std::vector<fs::path> DataSets(const fs::path& case_dir) {
  std::vector<fs::path> sets;
  for (const auto& entry : fs::directory_iterator(case_dir)) {
    if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set_", 0) == 0) {
      sets.push_back(entry.path());
    }
  }
  std::sort(sets.begin(), sets.end());
  return sets;
}

/// Reads `<set>/<prefix>_<i>.pb` for i = 0.. while present.
Expected<std::vector<Tensor>> ReadNumbered(const fs::path& set, const std::string& prefix, std::string* why_skip) {
  std::vector<Tensor> tensors;
  for (int i = 0;; ++i) {
    const fs::path p = set / (prefix + "_" + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    auto t = ReadTensorFile(p.string());
    if (!t.ok()) {
      if (t.status().code() == ErrorCode::kUnsupported) *why_skip = t.status().message();
      return t.status();
    }
    tensors.push_back(std::move(t).value());
  }
  return tensors;
}

CaseResult RunCase(const fs::path& case_dir, const Options& options) {
  auto model = LoadModel((case_dir / "model.onnx").string());
  if (!model.ok()) return Skip("model does not load: " + model.status().message());
  Graph& graph = model->graph;
  if (!options.ops.empty()) {
    bool match = false;
    for (const Node& node : graph.nodes) match = match || options.ops.count(node.op_type) != 0;
    if (!match) return {Outcome::kSkip, "filtered"};
  }
  (void)InferShapes(graph);  // dtypes of intermediate values for the kernel type check

  const std::vector<fs::path> sets = DataSets(case_dir);
  if (sets.empty()) return Skip("no test_data_set_* folder");
  for (const fs::path& set : sets) {
    std::string why_skip;
    auto inputs = ReadNumbered(set, "input", &why_skip);
    if (!inputs.ok()) {
      return why_skip.empty() ? Skip("cannot read inputs: " + inputs.status().message()) : Skip(why_skip);
    }
    auto expected = ReadNumbered(set, "output", &why_skip);
    if (!expected.ok()) {
      return why_skip.empty() ? Skip("cannot read outputs: " + expected.status().message()) : Skip(why_skip);
    }
    if (inputs->size() > graph.inputs.size()) return Skip("more input files than graph inputs");
    std::map<std::string, Tensor> feeds;
    for (size_t i = 0; i < inputs->size(); ++i) feeds[graph.value(graph.inputs[i]).name] = (*inputs)[i];
    if (std::string reason = SkipReason(graph, feeds); !reason.empty()) return Skip(reason);
    if (expected->size() != graph.outputs.size()) {
      return Skip("expected " + std::to_string(expected->size()) + " outputs, the graph has " +
                  std::to_string(graph.outputs.size()));
    }

    auto run = Execute(*model, feeds);
    if (!run.ok()) return Fail(run.status().message());
    for (size_t i = 0; i < graph.outputs.size(); ++i) {
      const std::string& name = graph.value(graph.outputs[i]).name;
      auto it = run->outputs.find(name);
      if (it == run->outputs.end()) return Fail("output " + std::to_string(i) + " '" + name + "' missing");
      std::string diff = Compare(it->second, (*expected)[i]);
      if (!diff.empty()) {
        return Fail("output " + std::to_string(i) + " '" + name + "': " + diff +
                    (sets.size() > 1 ? " (" + set.filename().string() + ")" : ""));
      }
    }
  }
  return {};
}

int Usage(const std::string& message) {
  std::cerr << "memopt_conformance: error: " << message << "\n"
            << "usage: memopt_conformance DIR [--ops A,B] [--verbose] [--min-pass-rate R] [--skipped-file PATH]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (arg == "--verbose" || arg == "-v") {
      options.verbose = true;
    } else if (arg == "--ops") {
      const char* v = next();
      if (!v) return Usage("--ops needs a value");
      for (const auto& op : Split(v, ',')) options.ops.insert(op);
    } else if (arg == "--min-pass-rate") {
      const char* v = next();
      if (!v) return Usage("--min-pass-rate needs a value");
      try {
        options.min_pass_rate = std::stod(v);
      } catch (const std::exception&) {
        return Usage(std::string("--min-pass-rate: not a number: ") + v);
      }
    } else if (arg == "--skipped-file") {
      const char* v = next();
      if (!v) return Usage("--skipped-file needs a value");
      options.skipped_file = v;
    } else if (arg == "--help" || arg == "-h") {
      Usage("help");
      return 0;
    } else if (!arg.empty() && arg[0] == '-') {
      return Usage("unknown option " + arg);
    } else if (options.dir.empty()) {
      options.dir = arg;
    } else {
      return Usage("more than one folder given");
    }
  }
  if (options.dir.empty()) return Usage("no folder given");
  if (!fs::is_directory(options.dir)) {
    std::cout << "skipped: node test folder not found: " << options.dir << "\n";
    return 77;
  }

  std::vector<fs::path> cases;
  for (const auto& entry : fs::directory_iterator(options.dir)) {
    if (entry.is_directory() && fs::exists(entry.path() / "model.onnx")) cases.push_back(entry.path());
  }
  std::sort(cases.begin(), cases.end());

  int passed = 0, failed = 0, skipped = 0;
  std::vector<std::pair<std::string, std::string>> skipped_list;
  const auto start = std::chrono::steady_clock::now();
  for (const fs::path& dir : cases) {
    const std::string name = dir.filename().string();
    const auto case_start = std::chrono::steady_clock::now();
    CaseResult r = RunCase(dir, options);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - case_start).count();
    if (r.outcome == Outcome::kSkip && r.reason == "filtered") continue;
    switch (r.outcome) {
      case Outcome::kPass:
        ++passed;
        if (options.verbose) std::cout << name << ": ok\n";
        break;
      case Outcome::kFail:
        ++failed;
        std::cout << name << ": " << r.reason << "\n";
        break;
      case Outcome::kSkip:
        ++skipped;
        skipped_list.emplace_back(name, r.reason);
        if (options.verbose) std::cout << name << ": skipped: " << r.reason << "\n";
        break;
    }
    if (options.verbose && seconds > 2.0) std::cout << name << ": slow (" << seconds << " s)\n";
  }
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::ofstream out(options.skipped_file);
  if (out) {
    for (const auto& [name, reason] : skipped_list) out << name << ": " << reason << "\n";
  } else {
    std::cerr << "memopt_conformance: warning: cannot write " << options.skipped_file << "\n";
  }
  if (options.verbose) std::cout << "time: " << total << " s\n";
  std::cout << passed << " passed, " << failed << " failed, " << skipped << " skipped" << std::endl;
  const int ran = passed + failed;
  if (ran > 0 && static_cast<double>(passed) / ran < options.min_pass_rate) {
    std::cerr << "memopt_conformance: pass rate " << static_cast<double>(passed) / ran << " is below "
              << options.min_pass_rate << "\n";
    return 1;
  }
  return 0;
}

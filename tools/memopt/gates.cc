#include "gates.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/bytes.h"

namespace memopt::cli {
namespace {

std::string BytesText(int64_t bytes) { return fmt::format("{} ({} bytes)", HumanBytes(bytes), WithThousands(bytes)); }

Expected<double> ParseTolerance(const std::string& text) {
  std::string t = text;
  if (!t.empty() && t.back() == '%') t.pop_back();
  char* end = nullptr;
  errno = 0;
  double v = t.empty() ? -1 : std::strtod(t.c_str(), &end);
  if (t.empty() || end == nullptr || *end != '\0' || errno != 0 || !std::isfinite(v) || v < 0) {
    return UsageError("invalid --tolerance '" + text + "': expected a percentage >= 0, e.g. 5 or 2.5%");
  }
  return v;
}

Expected<int64_t> BaselinePeak(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidInput(path + ": cannot open the --baseline report");
  std::stringstream text;
  text << in.rdbuf();
  const std::string content = text.str();
  for (size_t i = 0; i < content.size() && i < 256; ++i) {
    const auto c = static_cast<unsigned char>(content[i]);
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') {
      return InvalidInput(path + ": a binary file, not a JSON report (--baseline takes an earlier `memopt scan|plan "
                                 "--format json` report, not a model)");
    }
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(content);
  } catch (const nlohmann::json::exception& e) {
    return InvalidInput(path + ": not a JSON report (" + e.what() + "); make baselines with --format json");
  }
  if (!j.is_object() || !j.contains("peak") || !j["peak"].is_object()) {
    return InvalidInput(path + ": no \"peak\" object; make baselines with `memopt scan|plan --format json`");
  }
  const nlohmann::json& bytes = j["peak"]["bytes"];
  if (bytes.is_null()) {
    return InvalidInput(path + ": the baseline peak is symbolic (peak.bytes is null); make the baseline with --dims");
  }
  if (!bytes.is_number_integer()) return InvalidInput(path + ": peak.bytes is not an integer");
  return bytes.get<int64_t>();
}

}  // namespace

void AddGateOptions(CLI::App& app, GateOptions& options) {
  app.add_option("--fail-above", options.fail_above,
                 "CI gate: exit 3 when the peak exceeds SIZE (12GiB, 800MB, or a fraction of the unoptimized peak)");
  app.add_option("--baseline", options.baseline, "CI gate: an earlier --format json report to compare the peak with");
  app.add_option("--tolerance", options.tolerance,
                 "CI gate: allowed peak growth over --baseline, in percent (default 0)");
}

Status ValidateGateOptions(const GateOptions& options) {
  if (!options.fail_above.empty()) {
    auto size = ParseSize(options.fail_above);
    if (!size.ok()) return size.status().WithContext("--fail-above");
  }
  if (!options.tolerance.empty()) {
    if (options.baseline.empty()) return UsageError("--tolerance needs --baseline FILE.json");
    auto t = ParseTolerance(options.tolerance);
    if (!t.ok()) return t.status();
  }
  if (!options.baseline.empty()) {
    auto baseline = BaselinePeak(options.baseline);  // read again at the check: it is small
    if (!baseline.ok()) return baseline.status();
  }
  return Status::Ok();
}

std::vector<std::string> UnsizedValueNames(const Graph& graph, const PeakEstimate& peak) {
  std::vector<std::string> names;
  for (ValueId v : peak.unsized) names.push_back(graph.value(v).name);
  return names;
}

int CheckGates(const GateOptions& options, const GateInput& input, const GlobalOptions& globals) {
  if (!options.any()) return kExitOk;
  if (!input.sized) {
    return ReportError(UsageError(fmt::format("the CI gates need a concrete peak; bind the dims with --dims {}",
                                              DimsExample(input.unbound_dims))));
  }
  if (!input.unsized_values.empty()) {
    std::string names;
    const size_t shown = std::min<size_t>(input.unsized_values.size(), 3);
    for (size_t i = 0; i < shown; ++i) names += (i ? ", '" : "'") + input.unsized_values[i] + "'";
    if (shown < input.unsized_values.size()) names += fmt::format(", ... ({} more)", input.unsized_values.size() - shown);
    return ReportError(Status(ErrorCode::kBudgetNotMet,
                              fmt::format("the CI gates cannot pass: {} value{} of unknown size ({}) would count as 0 "
                                          "bytes in the {}; see --details for the list and give the model shapes",
                                          input.unsized_values.size(), input.unsized_values.size() == 1 ? "" : "s",
                                          names, input.what)));
  }
  int code = kExitOk;
  if (!options.fail_above.empty()) {
    SizeSpec spec = *ParseSize(options.fail_above);
    const int64_t limit = spec.is_fraction
                              ? static_cast<int64_t>(std::llround(spec.fraction * input.unoptimized_peak_bytes))
                              : spec.bytes;
    if (input.peak_bytes > limit) {
      ReportError(Status(ErrorCode::kBudgetNotMet,
                         fmt::format("{} {} exceeds --fail-above {} by {}", input.what, BytesText(input.peak_bytes),
                                     BytesText(limit), HumanBytes(input.peak_bytes - limit))));
      code = kExitGate;
    } else if (globals.verbosity >= 0) {
      std::fprintf(stderr, "memopt: gate passed: %s %s is within --fail-above %s\n", input.what.c_str(),
                   BytesText(input.peak_bytes).c_str(), BytesText(limit).c_str());
    }
  }
  if (!options.baseline.empty()) {
    auto baseline = BaselinePeak(options.baseline);
    if (!baseline.ok()) return ReportError(baseline.status());
    const double tolerance = options.tolerance.empty() ? 0.0 : *ParseTolerance(options.tolerance);
    const double growth = *baseline > 0 ? 100.0 * static_cast<double>(input.peak_bytes - *baseline) /
                                              static_cast<double>(*baseline)
                                        : (input.peak_bytes > 0 ? INFINITY : 0.0);
    if (growth > tolerance) {
      ReportError(Status(ErrorCode::kBudgetNotMet,
                         fmt::format("{} grew by {:.2f}% over the baseline {} ({} -> {}), more than the {}% "
                                     "tolerance",
                                     input.what, growth, options.baseline, BytesText(*baseline),
                                     BytesText(input.peak_bytes), tolerance)));
      code = kExitGate;
    } else if (globals.verbosity >= 0) {
      std::fprintf(stderr, "memopt: gate passed: %s %s is within %g%% of the baseline %s\n", input.what.c_str(),
                   BytesText(input.peak_bytes).c_str(), tolerance, BytesText(*baseline).c_str());
    }
  }
  return code;
}

}  // namespace memopt::cli

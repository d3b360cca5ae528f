#include "run_inputs.h"

#include "cli.h"
#include "exec/input_binding.h"
#include "exec/random_inputs.h"
#include "exec/tensor_io.h"

namespace memopt::cli {

Expected<RunInputs> PrepareInputs(const Graph& graph, const std::string& inputs_dir, const std::string& dims_text,
                                  uint64_t seed, const std::map<std::string, Tensor>& given) {
  RunInputs out;
  MEMOPT_ASSIGN_OR_RETURN(out.dims, ParseDimsForModel(dims_text, graph));
  std::map<std::string, Tensor> bound;
  if (!inputs_dir.empty()) {
    MEMOPT_ASSIGN_OR_RETURN(bound, ReadInputDir(inputs_dir, graph, &out.expected, &out.output_grads));
    for (const auto& [name, tensor] : bound) out.origin[name] = "file";
  }
  for (ValueId v : graph.inputs) {
    const std::string& name = graph.value(v).name;
    auto it = given.find(name);
    if (it != given.end() && bound.count(name) == 0) {
      bound.emplace(name, it->second);
      out.origin[name] = "shared";
    }
  }
  const DimBindings from_feeds = DimsFromFeeds(graph, bound);
  for (const auto& [name, value] : from_feeds.values()) {
    if (!out.dims.Get(name).has_value()) out.dims.Set(name, value);
  }
  MEMOPT_ASSIGN_OR_RETURN(out.feeds, CompleteFeeds(graph, bound, out.dims, seed));
  for (const auto& [name, tensor] : out.feeds) out.origin.emplace(name, "random");
  return out;
}

}  // namespace memopt::cli

#include "shape/window_attributes.h"

#include <string>
#include <utility>
#include <vector>

namespace memopt::shape {

namespace {

std::string Entries(size_t n) { return std::to_string(n) + (n == 1 ? " entry" : " entries"); }

}  // namespace

Status CheckWindowAttributes(const Node& node, int64_t spatial) {
  const std::vector<int64_t> kernel = node.GetInts("kernel_shape");
  const std::vector<int64_t> strides = node.GetInts("strides");
  const std::vector<int64_t> dilations = node.GetInts("dilations");
  const std::vector<int64_t> pads = node.GetInts("pads");
  const std::vector<std::pair<const char*, const std::vector<int64_t>*>> per_dim = {
      {"kernel_shape", &kernel}, {"strides", &strides}, {"dilations", &dilations}};
  // The spatial rank: the input's, else the first attribute that implies one.
  std::string source = "the input has";
  for (size_t i = 0; spatial < 0 && i < per_dim.size(); ++i) {
    if (per_dim[i].second->empty()) continue;
    spatial = static_cast<int64_t>(per_dim[i].second->size());
    source = std::string(per_dim[i].first) + " gives";
  }
  if (spatial < 0 && !pads.empty()) {
    if (pads.size() % 2 != 0) {
      return InvalidInput("pads has " + Entries(pads.size()) +
                          "; it takes a begin and an end per spatial dim, an even count");
    }
    spatial = static_cast<int64_t>(pads.size() / 2);
    source = "pads gives";
  }
  if (spatial >= 0) {
    const auto n = static_cast<size_t>(spatial);
    const std::string dims = source + " " + std::to_string(n) + " spatial dim" + (n == 1 ? "" : "s");
    for (const auto& [name, v] : per_dim) {
      if (!v->empty() && v->size() != n) {
        return InvalidInput(std::string(name) + " has " + Entries(v->size()) + ", but " + dims + ", which take " +
                            Entries(n) + " (one per dim)");
      }
    }
    if (!pads.empty() && pads.size() != 2 * n) {
      return InvalidInput("pads has " + Entries(pads.size()) + ", but " + dims + ", which take " + Entries(2 * n) +
                          " (the begins of every dim, then the ends: [x1_begin, x2_begin, ..., x1_end, x2_end, ...])");
    }
    if (node.op_type == "ConvTranspose") {
      const std::vector<int64_t> out_pad = node.GetInts("output_padding");
      if (!out_pad.empty() && out_pad.size() != n) {
        return InvalidInput("output_padding has " + Entries(out_pad.size()) + ", but " + dims + ", which take " +
                            Entries(n) + " (one per dim)");
      }
      const std::vector<int64_t> out_shape = node.GetInts("output_shape");
      if (!out_shape.empty() && out_shape.size() != n && out_shape.size() != n + 2) {
        return InvalidInput("output_shape has " + Entries(out_shape.size()) + ", but " + dims + ", which take " +
                            Entries(n) + " (or " + std::to_string(n + 2) + " with N and C first)");
      }
    }
  }
  for (const auto& [name, v] : per_dim) {
    for (int64_t x : *v) {
      if (x <= 0) {
        return InvalidInput(std::string(name) + " has the entry " + std::to_string(x) + "; its entries must be positive");
      }
    }
  }
  const std::string auto_pad = node.GetString("auto_pad", "NOTSET");
  if (!auto_pad.empty() && auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" && auto_pad != "VALID") {
    return InvalidInput("unknown auto_pad '" + auto_pad + "' (expected NOTSET, SAME_UPPER, SAME_LOWER or VALID)");
  }
  return Status::Ok();
}

}  // namespace memopt::shape

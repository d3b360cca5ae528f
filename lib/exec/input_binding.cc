#include "exec/input_binding.h"

namespace memopt {

namespace {

/// The dim's name when it is a plain symbol ("batch"), else "".
std::string SymbolName(const SymExpr& dim) {
  const std::vector<std::string> symbols = dim.Symbols();
  if (symbols.size() == 1 && dim == SymExpr::Symbol(symbols[0])) return symbols[0];
  return {};
}

}  // namespace

Status CheckFeed(const Graph& graph, ValueId value, const Tensor& feed, BoundDims& bound) {
  const Value& v = graph.value(value);
  const std::string what = "input '" + v.name + "'";
  if (!v.info.is_tensor) return Unsupported(what + ": only tensor inputs are supported (sequence/optional/map input)");
  if (!feed.defined()) return InvalidInput(what + ": the fed tensor is empty (no data type)");
  if (v.info.dtype != DataType::kUndefined && v.info.dtype != feed.dtype()) {
    return InvalidInput(what + ": expected " + DataTypeName(v.info.dtype) + ", got " + DataTypeName(feed.dtype()));
  }
  if (!v.info.shape.has_value()) return Status::Ok();
  const Shape& shape = *v.info.shape;
  if (static_cast<int64_t>(shape.size()) != feed.rank()) {
    return InvalidInput(what + ": rank " + std::to_string(shape.size()) + " expected, got " +
                        std::to_string(feed.rank()) + " (shape " + feed.Describe() + ")");
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t got = feed.dim(static_cast<int64_t>(i));
    if (auto fixed = shape[i].AsInt()) {
      if (*fixed != got) {
        return InvalidInput(what + ": dim " + std::to_string(i) + " is " + std::to_string(*fixed) +
                            " in the model, got " + std::to_string(got));
      }
      continue;
    }
    const std::string name = SymbolName(shape[i]);
    if (name.empty()) continue;
    auto [it, inserted] = bound.emplace(name, std::make_pair(got, v.name));
    if (!inserted && it->second.first != got) {
      const std::string& source = it->second.second;
      const std::string from = source.rfind("--", 0) == 0 ? source : "input '" + source + "'";
      return InvalidInput(what + ": dim " + std::to_string(i) + " is '" + name + "' = " +
                          std::to_string(it->second.first) + " (from " + from + "), got " + std::to_string(got));
    }
  }
  return Status::Ok();
}

DimBindings DimsFromFeeds(const Graph& graph, const std::map<std::string, Tensor>& feeds) {
  DimBindings dims;
  for (ValueId id : graph.inputs) {
    const Value& v = graph.value(id);
    auto it = feeds.find(v.name);
    if (it == feeds.end() || !v.info.shape.has_value()) continue;
    const Shape& shape = *v.info.shape;
    if (static_cast<int64_t>(shape.size()) != it->second.rank()) continue;
    for (size_t i = 0; i < shape.size(); ++i) {
      const std::string name = SymbolName(shape[i]);
      if (!name.empty() && !dims.Get(name).has_value()) dims.Set(name, it->second.dim(static_cast<int64_t>(i)));
    }
  }
  return dims;
}

}  // namespace memopt

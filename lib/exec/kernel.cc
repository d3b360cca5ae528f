#include "exec/kernel.h"

#include <algorithm>

#include "ir/op_registry.h"

namespace memopt {

Status KernelContext::Error(const std::string& message) const {
  const std::string where = node != nullptr ? "node " + node->Describe() : std::string("kernel");
  return InvalidInput(where + ": " + message);
}

void KernelRegistry::Register(const std::string& domain, const std::string& op, KernelFn fn,
                              std::vector<DataType> types) {
  KernelInfo& info = kernels_[{std::string(NormalizeDomain(domain)), op}];
  info.fn = fn;
  info.types = std::move(types);
}

const KernelInfo* KernelRegistry::Find(const std::string& domain, const std::string& op) const {
  return FindWithFallback(domain, [&](std::string_view d) -> const KernelInfo* {
    auto it = kernels_.find({std::string(d), op});
    return it == kernels_.end() ? nullptr : &it->second;
  });
}

std::vector<std::string> KernelRegistry::OpNames() const {
  std::vector<std::string> names;
  names.reserve(kernels_.size());
  for (const auto& [key, info] : kernels_) {
    names.push_back(OpKey(key.first, key.second).ToString());
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// The CPU kernels of the op registry (registered by the lib/ops/<family>/*_cpu.cc files), as the
/// executor looks them up.
const KernelRegistry& KernelRegistry::Cpu() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    for (const auto& [key, def] : Ops().defs()) {
      if (def.cpu.fn != nullptr) r.Register(key, def.cpu);
    }
    return r;
  }();
  return registry;
}

}  // namespace memopt

// Test helper: a kernel registry with only the CPU kernels that some op files registered, for
// tests that run one family's kernels (or pick one family's conformance cases).
#pragma once

#include <string>
#include <vector>

#include "exec/kernel.h"
#include "ir/op_registry.h"

namespace memopt::testing {

/// The CPU kernels registered by the given op files ("<family>/<file>", e.g. "reduce/reduce_cpu")
/// or by every file of a family ("elementwise").
inline KernelRegistry CpuKernelsOf(const std::vector<std::string>& files) {
  KernelRegistry r;
  for (const auto& [key, def] : Ops().defs()) {
    if (def.cpu.fn == nullptr) continue;
    for (const std::string& f : files) {
      if (def.cpu_file == f || def.cpu_file.rfind(f + "/", 0) == 0) {
        r.Register(key, def.cpu);
        break;
      }
    }
  }
  return r;
}

}  // namespace memopt::testing

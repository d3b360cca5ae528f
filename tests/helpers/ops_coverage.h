// The consistency checks of the op tables (ops_coverage_test.cc, and the CUDA build's
// cuda/ops_coverage_cuda_test.cc): each problem as one line naming the op.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "analysis/op_table.h"
#include "ir/op_registry.h"

namespace memopt::testing {

struct CoverageInput {
  const OpRegistry* ops = nullptr;
  /// The recompute op tables (configs/recompute_ops*.json).
  std::vector<const OpTable*> tables;
  /// "op" / "domain::op" of every CUDA kernel (empty in a build without CUDA).
  std::vector<std::string> cuda_ops;
};

inline std::vector<std::string> CoverageProblems(const CoverageInput& in) {
  const OpRegistry& ops = *in.ops;
  std::vector<std::string> problems = ops.conflicts();
  auto has_shape = [](const OpDef& d) { return d.shape != nullptr; };
  auto has_cpu = [](const OpDef& d) { return d.cpu.fn != nullptr; };
  auto has_cost = [](const OpDef& d) { return d.cost.kind != CostKind::kNone; };
  for (const auto& [key, def] : ops.defs()) {
    if (def.grad.rule != nullptr && ops.Find(key.domain, key.op, has_shape) == nullptr) {
      problems.push_back(key.ToString() + ": a gradient rule but no shape rule");
    }
    if (def.cpu.fn != nullptr && ops.Find(key.domain, key.op, has_shape) == nullptr) {
      problems.push_back(key.ToString() + ": a CPU kernel but no shape rule");
    }
  }
  for (const OpTable* table : in.tables) {
    for (const OpTable::OpEntry* e : table->Entries()) {
      const std::string name = OpKey(e->domain, e->op).ToString();
      if (ops.Find(e->domain, e->op, has_shape) == nullptr) {
        problems.push_back(name +
                           ": in the recompute op table but not a "
                           "registered op (no shape rule)");
      }
      if (ops.Find(e->domain, e->op, has_cost) == nullptr && ops.Find(kOnnxDomain, e->op, has_cost) == nullptr) {
        problems.push_back(name + ": recomputable but no cost class");
      }
    }
  }
  for (const std::string& name : in.cuda_ops) {
    const size_t sep = name.find("::");
    const std::string domain = sep == std::string::npos ? std::string() : name.substr(0, sep);
    const std::string op = sep == std::string::npos ? name : name.substr(sep + 2);
    if (ops.Find(domain, op, has_cpu) == nullptr) problems.push_back(name + ": a CUDA kernel but no CPU kernel");
    if (ops.Find(domain, op, has_shape) == nullptr) problems.push_back(name + ": a CUDA kernel but no shape rule");
  }
  std::vector<std::string> unique;
  for (std::string& p : problems) {
    if (std::find(unique.begin(), unique.end(), p) == unique.end()) unique.push_back(std::move(p));
  }
  return unique;
}

}  // namespace memopt::testing

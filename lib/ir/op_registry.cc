#include "ir/op_registry.h"

namespace memopt {

OpDef& OpRegistry::Def(std::string_view domain, std::string_view op) {
  OpKey key(domain, op);
  auto it = defs_.find(key);
  if (it == defs_.end()) {
    it = defs_.emplace(key, OpDef{}).first;
    it->second.key = key;
  }
  return it->second;
}

void OpRegistry::Conflict(const OpKey& key, std::string_view part) {
  conflicts_.push_back(std::string(part) + " of " + key.ToString() + ": registered twice" +
                       (file_.empty() ? "" : " (again by ops/" + file_ + ")"));
}

void OpRegistry::SetShape(std::string_view domain, std::string_view op, ShapeRuleFn fn) {
  OpDef& def = Def(domain, op);
  if (def.shape != nullptr && def.shape != fn) return Conflict(def.key, "shape rule");
  def.shape = fn;
}

void OpRegistry::SetValues(std::string_view domain, std::string_view op, ShapeRuleFn fn) {
  OpDef& def = Def(domain, op);
  if (def.values != nullptr && def.values != fn) return Conflict(def.key, "value rule");
  def.values = fn;
}

void OpRegistry::SetCpuKernel(std::string_view domain, std::string_view op, KernelInfo kernel) {
  OpDef& def = Def(domain, op);
  if (def.cpu.fn != nullptr) return Conflict(def.key, "CPU kernel");
  def.cpu = std::move(kernel);
  def.cpu_file = file_;
}

void OpRegistry::BeginOpFile(std::string_view family, std::string_view file) {
  file_ = std::string(family) + "/" + std::string(file);
}

void OpRegistry::SetGrad(std::string_view domain, std::string_view op, GradInfo grad) {
  OpDef& def = Def(domain, op);
  if (def.grad.rule != nullptr) return Conflict(def.key, "gradient rule");
  def.grad = std::move(grad);
}

void OpRegistry::SetCost(std::string_view domain, std::string_view op, CostClass cost) {
  OpDef& def = Def(domain, op);
  if (def.cost.kind != CostKind::kNone) return Conflict(def.key, "cost class");
  def.cost = cost;
}

void OpRegistry::SetCostForOpType(std::string_view op, CostClass cost) { costs_by_type_.emplace_back(op, cost); }

void OpRegistry::Finalize() {
  for (const auto& [op, cost] : costs_by_type_) {
    bool found = false;
    for (auto& [key, def] : defs_) {
      if (key.op != op) continue;
      found = true;
      SetCost(key.domain, key.op, cost);
    }
    if (!found) SetCost(kOnnxDomain, op, cost);
  }
  costs_by_type_.clear();
}

const OpDef* OpRegistry::FindExact(std::string_view domain, std::string_view op) const {
  auto it = defs_.find(OpKey(domain, op));
  return it == defs_.end() ? nullptr : &it->second;
}

const OpRegistry& Ops() {
  static const OpRegistry* const registry = [] {
    auto* r = new OpRegistry();
    RegisterOpFiles(*r);
    r->Finalize();
    return r;
  }();
  return *registry;
}

}  // namespace memopt

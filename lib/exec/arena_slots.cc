#include "exec/arena_slots.h"

namespace memopt {

ArenaSlots::ArenaSlots(std::shared_ptr<const ArenaPlan> plan)
    : plan_(std::move(plan)), holder_(plan_->offset.size(), kNone) {
  use_.arena_bytes = plan_->arena_bytes;
}

void ArenaSlots::Offer(const Node& node) {
  slots_.clear();
  for (ValueId v : node.outputs) {
    if (v != kNone && plan_->offset[v] != ArenaPlan::kNotInArena) slots_.push_back({v});
  }
}

int64_t ArenaSlots::Claim(int64_t bytes) {
  for (Slot& slot : slots_) {
    if (slot.claimed || plan_->size[slot.value] != bytes) continue;
    slot.claimed = true;
    return plan_->offset[slot.value];
  }
  return -1;
}

ValueId ArenaSlots::SafeHolder(const Node& node, const std::vector<Output>& outputs, size_t j) const {
  const ValueId v = node.outputs[j];
  const int64_t begin = outputs[j].offset;
  if (begin < 0) return kNone;
  const int64_t end = begin + outputs[j].bytes;
  if (plan_->InSlot(v, begin, end)) return v;
  ValueId holder = kNone;
  // A view of an input's data (wherever that input's data is held) ...
  for (size_t i = 0; i < node.inputs.size() && holder == kNone; ++i) {
    const ValueId u = node.inputs[i];
    if (u != kNone && holder_[u] != kNone && plan_->InSlot(holder_[u], begin, end)) holder = holder_[u];
  }
  // ... or a buffer in another output's slot.
  for (size_t k = 0; k < node.outputs.size() && holder == kNone; ++k) {
    const ValueId w = node.outputs[k];
    if (k != j && w != kNone && plan_->InSlot(w, begin, end)) holder = w;
  }
  return holder != kNone && plan_->release[v] < plan_->next_write[holder] ? holder : kNone;
}

bool ArenaSlots::SlotFree(ValueId v, const Node& node, const std::vector<Output>& outputs, size_t j) const {
  const int64_t slot_begin = plan_->offset[v], slot_end = slot_begin + plan_->size[v];
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    if (k == j || node.outputs[k] == kNone || !outputs[k].present) continue;
    const int64_t begin = outputs[k].offset;
    if (begin >= 0 && begin < slot_end && begin + outputs[k].bytes > slot_begin) return false;
  }
  return true;
}

ArenaSlots::Placement ArenaSlots::SettleOutput(const Node& node, std::vector<Output>& outputs, size_t j) {
  const ValueId v = node.outputs[j];
  if (v == kNone) return Placement::kOutside;
  holder_[v] = kNone;
  Output& out = outputs[j];
  if (!out.present) return Placement::kOutside;
  const ValueId holder = SafeHolder(node, outputs, j);
  if (holder != kNone) {
    holder_[v] = holder;
    ++(holder == v ? use_.in_slot : use_.views_kept);
    return Placement::kKeep;
  }
  const bool in_arena = out.offset >= 0;
  const bool planned = plan_->offset[v] != ArenaPlan::kNotInArena;
  const bool has_slot = planned && plan_->size[v] == out.bytes;
  // A view of a buffer outside the arena (a weight, a value the pool holds) keeps it as before.
  const bool input_view = !in_arena && out.input_view;
  if (has_slot && !input_view && SlotFree(v, node, outputs, j)) {
    out.offset = plan_->offset[v];
    holder_[v] = v;
    ++use_.moved;
    return Placement::kMoveToSlot;
  }
  if (in_arena) {
    out.offset = -1;
    if (planned) ++use_.outside;
    return Placement::kCopyOut;
  }
  if (planned) ++(input_view ? use_.views_kept : use_.outside);
  return Placement::kOutside;
}

}  // namespace memopt

#include "exec/arena_allocator.h"

#include <algorithm>
#include <cstring>

#include "exec/buffer_pool.h"
#include "exec/kernels/kernel_util.h"

namespace memopt {

namespace {

/// The arena whose node offers its slots on this thread (ArenaAllocator::Offer).
thread_local ArenaAllocator* t_offered = nullptr;

}  // namespace

ArenaAllocator::ArenaAllocator(std::shared_ptr<const ArenaPlan> plan)
    : plan_(std::move(plan)), holder_(plan_->offset.size(), kNone) {
  buffer_ = BufferPool::Global().AcquireUninitialized(static_cast<size_t>(plan_->arena_bytes));
  use_.arena_bytes = plan_->arena_bytes;
}

ArenaAllocator::Offer::Offer(ArenaAllocator* arena, const Node& node) : previous_(t_offered) {
  if (arena != nullptr) {
    arena->slots_.clear();
    for (ValueId v : node.outputs) {
      if (v != kNone && arena->plan_->offset[v] != ArenaPlan::kNotInArena) arena->slots_.push_back({v});
    }
  }
  t_offered = arena;
}

void ArenaAllocator::Offer::End() {
  if (!open_) return;
  t_offered = previous_;
  open_ = false;
}

std::shared_ptr<std::byte[]> ArenaAllocator::Claim(size_t bytes, bool zero) {
  ArenaAllocator* arena = t_offered;
  if (arena == nullptr || bytes == 0 || InParallelFor()) return nullptr;
  for (Slot& slot : arena->slots_) {
    if (slot.claimed || arena->plan_->size[slot.value] != static_cast<int64_t>(bytes)) continue;
    slot.claimed = true;
    std::shared_ptr<std::byte[]> buffer = arena->SlotBuffer(slot.value);
    if (zero) {
      std::memset(buffer.get(), 0, bytes);
    } else if (BufferPool::Global().poison()) {
      std::memset(buffer.get(), 0xFF, bytes);
    }
    return buffer;
  }
  return nullptr;
}

std::shared_ptr<std::byte[]> ArenaAllocator::SlotBuffer(ValueId v) const {
  return std::shared_ptr<std::byte[]>(buffer_, buffer_.get() + plan_->offset[v]);  // shares the arena
}

int64_t ArenaAllocator::OffsetOf(const Tensor& t) const {
  const auto* p = static_cast<const std::byte*>(t.raw());
  if (p == nullptr || p < buffer_.get() || p >= buffer_.get() + plan_->arena_bytes) return -1;
  return p - buffer_.get();
}

ValueId ArenaAllocator::SafeHolder(const Node& node, const KernelContext& ctx, size_t j) const {
  const ValueId v = node.outputs[j];
  const int64_t begin = OffsetOf(ctx.outputs[j]);
  if (begin < 0) return kNone;
  const int64_t end = begin + ctx.outputs[j].bytes();
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

bool ArenaAllocator::SlotFree(ValueId v, const Node& node, const KernelContext& ctx, size_t j) const {
  const int64_t slot_begin = plan_->offset[v], slot_end = slot_begin + plan_->size[v];
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    if (k == j || node.outputs[k] == kNone || !ctx.outputs[k].defined()) continue;
    const int64_t begin = OffsetOf(ctx.outputs[k]);
    if (begin >= 0 && begin < slot_end && begin + ctx.outputs[k].bytes() > slot_begin) return false;
  }
  return true;
}

namespace {

/// memmove, with copies of 1 MiB or more between disjoint buffers split into 256 KiB pieces over
/// the pool's threads (a view moved into its own slot is a whole activation's copy).
void CopyBytes(void* dst, const void* src, size_t bytes) {
  constexpr size_t kPiece = size_t{256} << 10;
  auto* d = static_cast<std::byte*>(dst);
  const auto* s = static_cast<const std::byte*>(src);
  const bool disjoint = d + bytes <= s || s + bytes <= d;
  if (bytes < 4 * kPiece || !disjoint) {
    std::memmove(dst, src, bytes);
    return;
  }
  const int64_t pieces = static_cast<int64_t>((bytes + kPiece - 1) / kPiece);
  ParallelFor(pieces, static_cast<int64_t>(kPiece), [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const size_t off = static_cast<size_t>(p) * kPiece;
      std::memcpy(d + off, s + off, std::min(kPiece, bytes - off));
    }
  });
}

}  // namespace

void ArenaAllocator::Settle(const Node& node, KernelContext& ctx) {
  for (size_t j = 0; j < node.outputs.size(); ++j) {
    const ValueId v = node.outputs[j];
    if (v == kNone) continue;
    Tensor& out = ctx.outputs[j];
    holder_[v] = kNone;
    if (!out.defined() || out.dtype() == DataType::kString || out.bytes() == 0 || out.raw() == nullptr) continue;
    const ValueId holder = SafeHolder(node, ctx, j);
    if (holder != kNone) {
      holder_[v] = holder;
      ++(holder == v ? use_.in_slot : use_.views_kept);
      continue;
    }
    const bool in_arena = OffsetOf(out) >= 0;
    const bool has_slot = plan_->offset[v] != ArenaPlan::kNotInArena && plan_->size[v] == out.bytes();
    // A view of a tensor outside the arena (a weight, a value the pool holds) keeps it as before.
    bool input_view = false;
    for (size_t i = 0; i < ctx.inputs.size() && !in_arena; ++i) {
      const Tensor* in = ctx.inputs[i];
      if (in == nullptr || in->raw() == nullptr) continue;
      const auto* p = static_cast<const std::byte*>(out.raw());
      const auto* q = static_cast<const std::byte*>(in->raw());
      if (p >= q && p < q + in->bytes()) input_view = true;
    }
    if (has_slot && !input_view && SlotFree(v, node, ctx, j)) {
      out = out.CopyInto(SlotBuffer(v), CopyBytes);
      holder_[v] = v;
      ++use_.moved;
    } else if (in_arena) {
      out = out.Clone();  // no offer is open: the pool's
      if (plan_->offset[v] != ArenaPlan::kNotInArena) ++use_.outside;
    } else if (plan_->offset[v] != ArenaPlan::kNotInArena) {
      ++(input_view ? use_.views_kept : use_.outside);
    }
  }
}

}  // namespace memopt

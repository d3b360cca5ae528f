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

ArenaAllocator::ArenaAllocator(std::shared_ptr<const ArenaPlan> plan) : slots_(std::move(plan)) {
  buffer_ = BufferPool::Global().AcquireUninitialized(static_cast<size_t>(slots_.plan().arena_bytes));
}

ArenaAllocator::Offer::Offer(ArenaAllocator* arena, const Node& node) : previous_(t_offered) {
  if (arena != nullptr) arena->slots_.Offer(node);
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
  const int64_t offset = arena->slots_.Claim(static_cast<int64_t>(bytes));
  if (offset < 0) return nullptr;
  std::shared_ptr<std::byte[]> buffer(arena->buffer_, arena->buffer_.get() + offset);  // shares the arena
  if (zero) {
    std::memset(buffer.get(), 0, bytes);
  } else if (BufferPool::Global().poison()) {
    std::memset(buffer.get(), 0xFF, bytes);
  }
  return buffer;
}

std::shared_ptr<std::byte[]> ArenaAllocator::SlotBuffer(ValueId v) const {
  return std::shared_ptr<std::byte[]>(buffer_, buffer_.get() + slots_.plan().offset[v]);  // shares the arena
}

int64_t ArenaAllocator::OffsetOf(const Tensor& t) const {
  const auto* p = static_cast<const std::byte*>(t.raw());
  if (p == nullptr || p < buffer_.get() || p >= buffer_.get() + slots_.plan().arena_bytes) return -1;
  return p - buffer_.get();
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
  std::vector<ArenaSlots::Output> outputs(node.outputs.size());
  for (size_t j = 0; j < outputs.size(); ++j) {
    const Tensor& out = ctx.outputs[j];
    if (node.outputs[j] == kNone || !out.defined() || out.dtype() == DataType::kString || out.bytes() == 0 ||
        out.raw() == nullptr) {
      continue;
    }
    ArenaSlots::Output& o = outputs[j];
    o.present = true;
    o.offset = OffsetOf(out);
    o.bytes = out.bytes();
    o.input_view = o.offset < 0 && LiesInAny(out.raw(), ctx.inputs);
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    switch (slots_.SettleOutput(node, outputs, j)) {
      case ArenaSlots::Placement::kMoveToSlot:
        ctx.outputs[j] = ctx.outputs[j].CopyInto(SlotBuffer(node.outputs[j]), CopyBytes);
        break;
      case ArenaSlots::Placement::kCopyOut:
        ctx.outputs[j] = ctx.outputs[j].Clone();  // no offer is open: the pool's
        break;
      case ArenaSlots::Placement::kKeep:
      case ArenaSlots::Placement::kOutside:
        break;
    }
  }
}

}  // namespace memopt

// Helpers shared by the Device's translation units (not part of the public API).
#pragma once

#include <algorithm>
#include <cstring>

#include "quiesce/cuda/device.h"
#include "quiesce/cuda/errors.h"

namespace quiesce::cuda {

template <class Slot>
Slot* Device::resolve(detail::SlotTable<Slot>& table, std::uint64_t id, std::uint32_t epoch) {
  Slot* slot = table.find(id);
  if (slot == nullptr) return nullptr;
  const detail::ContextSlot* context = contexts_.find(slot->context_id);
  if (context == nullptr || context->epoch != epoch) return nullptr;
  return slot;
}

// True when [offset, offset + bytes) lies within a buffer of `size` bytes, without overflow.
inline bool range_within(std::uint64_t offset, std::uint64_t bytes, std::uint64_t size) {
  return offset <= size && bytes <= size - offset;
}

}  // namespace quiesce::cuda

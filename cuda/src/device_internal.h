// Helpers shared by the Device's translation units (not part of the public API).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

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

template <class Slot>
Slot* Device::child_of(detail::SlotTable<Slot>& table, const detail::QueueSlot& queue, std::uint32_t queue_epoch,
                       std::uint64_t id, std::uint32_t epoch) {
  Slot* slot = table.find(id);
  return slot != nullptr && slot->context_id == queue.context_id && epoch == queue_epoch ? slot : nullptr;
}

// True when [offset, offset + bytes) lies within a buffer of `size` bytes, without overflow.
inline bool range_within(std::uint64_t offset, std::uint64_t bytes, std::uint64_t size) {
  return offset <= size && bytes <= size - offset;
}

// The pause between two polls of a wait that ends at `deadline_ns`: a yield while the wait is younger than
// poll_spin_ns (the driver's own synchronize spins too), then a sleep of an eighth of the time waited so far,
// at least 1 µs, at most poll_backoff_max_ns and never past the deadline. A wait so oversleeps its work by
// about an eighth at most, where a doubling backoff could add its whole cap to a wait of a millisecond.
class PollPacer {
 public:
  PollPacer(const DeviceOptions& options, std::uint64_t timeout_ns)
      : options_(options),
        start_ns_(host_now_ns()),
        deadline_ns_(start_ns_ + std::min<std::uint64_t>(timeout_ns, UINT64_MAX / 2)) {}

  // False once the deadline has passed: the caller polls once more, or gives up.
  bool before_deadline() const { return host_now_ns() < deadline_ns_; }

  void pause() const {
    const std::uint64_t now = host_now_ns();
    const std::uint64_t waited = now - start_ns_;
    if (waited < options_.poll_spin_ns || now >= deadline_ns_) {
      std::this_thread::yield();
      return;
    }
    const std::uint64_t sleep_ns = std::clamp<std::uint64_t>(waited / 8, 1'000, options_.poll_backoff_max_ns);
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::min(sleep_ns, deadline_ns_ - now)));
  }

 private:
  const DeviceOptions& options_;
  std::uint64_t start_ns_;
  std::uint64_t deadline_ns_;
};

}  // namespace quiesce::cuda

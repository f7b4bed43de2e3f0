// The raw workload, part 4: the liveness phase, in which everything retained must be released within a
// bounded number of rounds, and the digest notes.
// Member definitions of raw_detail::RawWorkload (raw_workload_impl.h), which includes this header at its end.
#pragma once

#include "quiesce/properties/raw_workload_impl.h"

namespace quiesce::properties::raw_detail {

template <Backend B>
void RawWorkload<B>::drain() {
  for (std::uint32_t round = 0; round < options_.liveness_rounds_max; ++round) {
    if (device_lost_) recover();
    for (std::uint32_t i = 0; i < events_.size() && !device_lost_; ++i) {
      if (!events_[i].dead && !events_[i].terminal_seen) wait_for(i);
    }
    destroy_terminal_events();
    for (std::size_t i = 0; i < executables_.size(); ++i) destroy_executable();
    bool leaked_one = false;
    for (auto& slot : buffers_) {
      if (slot.dead || slot.pins != 0) continue;
      if (mutated(Mutation::LeakAtShutdown) && !leaked_one) {
        leaked_one = true;  // the bug: one buffer is forgotten at shutdown
        continue;
      }
      release_buffer(slot);
    }
    if (everything_released()) break;
  }
  close_context();
}

template <Backend B>
bool RawWorkload<B>::everything_released() const {
  for (const auto& slot : buffers_) if (!slot.dead) return false;
  for (const auto& slot : events_) if (!slot.dead) return false;
  for (const auto& slot : executables_) if (!slot.dead) return false;
  return true;
}

template <Backend B>
void RawWorkload<B>::close_context() {
  std::uint64_t quarantined = 0;
  std::uint64_t leaked_buffers = 0;
  std::uint64_t leaked_events = 0;
  std::uint64_t leaked_executables = leaked_executables_.size();
  for (const auto& slot : buffers_) {
    if (!slot.dead && slot.quarantined) quarantined++;
    else if (!slot.dead) leaked_buffers++;
  }
  for (const auto& slot : events_) {
    if (!slot.dead && slot.quarantined) quarantined++;
    else if (!slot.dead) leaked_events++;
  }
  for (const auto& slot : executables_) {
    if (!slot.dead && slot.quarantined) quarantined++;
    else if (!slot.dead) leaked_executables++;
  }
  stats_.quarantined_handles += quarantined;
  stats_.leaked_handles += leaked_buffers + leaked_events + leaked_executables;
  if (leaked_buffers + leaked_events + leaked_executables != 0) {
    stats_.problems.push_back("the liveness phase ended with " + std::to_string(leaked_buffers) + " buffers, " +
                              std::to_string(leaked_events) + " events and " + std::to_string(leaked_executables) +
                              " executables still live.");
  }
  if (quarantined != 0 || context_tainted_) device_lost_ = true;  // only a discard lets these go
  if (stats_.leaked_handles != 0 || device_lost_) {
    // Whatever is left is abandoned with the context: the one legal way to let it go.
    note(4, backend_.discard_context(std::move(context_)).ok());
    return;
  }
  if (mutated(Mutation::DestroyContextBeforeChildren)) {  // the bug: the parent goes first
    ReleaseResult<Context> released = backend_.destroy_context(std::move(context_));
    if (settle_release(released, context_)) return;
  }
  for (auto& program : programs_) release_with_retries(program, [&](Program&& p) { return backend_.unload_program(std::move(p)); });
  for (auto& queue : queues_) release_with_retries(queue, [&](Queue&& q) { return backend_.destroy_queue(std::move(q)); });
  bool context_released = false;
  for (std::uint32_t round = 0; round < kReleaseRoundsMax && !context_released; ++round) {
    ReleaseResult<Context> released = backend_.destroy_context(std::move(context_));
    context_released = settle_release(released, context_);
  }
  if (!context_released) note(4, backend_.discard_context(std::move(context_)).ok());
}

template <Backend B>
template <class H, class Release>
void RawWorkload<B>::release_with_retries(H& handle, Release release) {
  for (std::uint32_t round = 0; round < kReleaseRoundsMax && handle.valid(); ++round) {
    auto released = release(std::move(handle));
    if (settle_release(released, handle)) return;
  }
  if (handle.valid()) {
    stats_.leaked_handles++;
    stats_.problems.push_back("a release was rejected " + std::to_string(kReleaseRoundsMax) +
                              " times in the liveness phase.");
  }
}

template <Backend B>
void RawWorkload<B>::note(std::uint8_t what, std::uint64_t outcome) {
  digest_.add(what);
  digest_.add(outcome);
}

}  // namespace quiesce::properties::raw_detail

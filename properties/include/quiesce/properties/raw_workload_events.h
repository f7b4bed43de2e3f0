// The raw workload, part 3: observing events (poll, wait, cancel, synchronize), applying what is known to
// have run to the model, quarantining what an indeterminate release reaches, and captured executables.
// Member definitions of raw_detail::RawWorkload (raw_workload_impl.h), which includes this header at its end.
#pragma once

#include "quiesce/properties/raw_workload_impl.h"

namespace quiesce::properties::raw_detail {

template <Backend B>
std::uint32_t RawWorkload<B>::pick_live_event(bool pending_only) {
  return pick_index(static_cast<std::uint32_t>(events_.size()), [&](std::uint32_t i) {
    return !events_[i].dead && (!pending_only || !events_[i].terminal_seen);
  });
}

template <Backend B>
void RawWorkload<B>::poll() {
  const std::uint32_t index = pick_live_event(false);
  if (index == kNone) return;
  stats_.polls++;
  const Observation observation = backend_.poll_event(events_[index].handle);
  note(10, static_cast<std::uint8_t>(observation.state));
  observe(index, observation.state, observation.error);
}

template <Backend B>
void RawWorkload<B>::wait() {
  const std::uint32_t index = pick_live_event(true);
  if (index == kNone) return;
  wait_for(index);
}

template <Backend B>
void RawWorkload<B>::wait_for(std::uint32_t index) {
  stats_.waits++;
  const WaitResult result = backend_.wait_event(events_[index].handle, options_.wait_timeout_ns);
  note(11, result.ok());
  if (result.ok()) {
    observe(index, result.value().state, result.value().error);
  } else if (mutated(Mutation::IndeterminateWaitAsTerminal)) {
    observe(index, EventState::Complete, Error{});  // the bug: an unproven fence taken as complete
  } else {
    stats_.waits_indeterminate++;
    lost(result.error().error);
  }
}

template <Backend B>
void RawWorkload<B>::observe(std::uint32_t index, EventState state, const Error& error) {
  EventSlot& slot = events_[index];
  if (state == EventState::Indeterminate) {
    lost(error);
    return;
  }
  if (!is_terminal(state)) return;
  if (slot.terminal_seen) {
    if (state != slot.terminal) {
      stats_.terminal_changes++;
      stats_.problems.push_back("event " + std::to_string(slot.handle.id()) + " changed its terminal state.");
    }
    return;
  }
  slot.terminal_seen = true;
  slot.terminal = state;
  if (state == EventState::Complete) stats_.terminals_complete++;
  if (state == EventState::FailedButQuiescent) stats_.terminals_failed++;
  if (state == EventState::Cancelled) stats_.terminals_cancelled++;
  const bool applies_cancelled = mutated(Mutation::ApplyWonCancellation) && state == EventState::Cancelled;
  const bool ran_exactly = (state == EventState::Complete || applies_cancelled) && !slot.indeterminate;
  const std::vector<Planned>& effects =
      slot.executable == kNone ? slot.effects : executables_[slot.executable].effects;
  for (const Planned& planned : effects) {
    if (state == EventState::Cancelled && !applies_cancelled) break;  // a won cancellation has no effects (R8)
    if (ran_exactly) apply(planned);
    else forget_contents(planned);
  }
  if (error.kind == ErrorKind::DeviceLost) lost(error);
  if (mutated(Mutation::AbandonAfterLocalError) && state == EventState::FailedButQuiescent &&
      error.kind != ErrorKind::DeviceLost) {
    abandon_pending_events();
  }
}

template <Backend B>
void RawWorkload<B>::abandon_pending_events() {
  for (auto& other : events_) {
    if (other.dead || other.terminal_seen) continue;
    other.terminal_seen = true;
    other.terminal = EventState::FailedButQuiescent;
    for (const Planned& planned : other.effects) forget_contents(planned);
  }
}

template <Backend B>
void RawWorkload<B>::apply(const Planned& planned) {
  switch (planned.kind) {
    case CommandKind::Launch: {
      std::vector<std::vector<std::uint8_t>*> bound;
      for (std::uint32_t s : planned.slots) bound.push_back(&buffers_[s].model);
      (void)apply_kernel(planned.kernel, bound, planned.data);
      if (planned.kernel == BuiltinKernel::Fill) buffers_[planned.slots[0]].initialized = true;
      if (planned.kernel == BuiltinKernel::Copy) {
        BufferSlot& target = buffers_[planned.slots[1]];
        target.initialized = target.initialized || buffers_[planned.slots[0]].bytes >= target.bytes;
      }
      break;
    }
    case CommandKind::Copy: {
      BufferSlot& target = buffers_[planned.slots[1]];
      std::memmove(target.model.data() + planned.target_offset,
                   buffers_[planned.slots[0]].model.data() + planned.source_offset, planned.bytes);
      target.initialized = target.initialized || planned.bytes == target.bytes;
      break;
    }
    case CommandKind::Upload: {
      BufferSlot& target = buffers_[planned.slots[0]];
      std::memcpy(target.model.data() + planned.target_offset, planned.data.data(), planned.data.size());
      target.initialized = target.initialized || planned.bytes == target.bytes;
      break;
    }
    case CommandKind::Zero: {
      BufferSlot& target = buffers_[planned.slots[0]];
      std::memset(target.model.data() + planned.target_offset, 0, planned.bytes);
      target.initialized = target.initialized || planned.bytes == target.bytes;
      break;
    }
    case CommandKind::Wait:
    case CommandKind::Replay:
      break;
  }
}

template <Backend B>
void RawWorkload<B>::forget_contents(const Planned& planned) {
  if (planned.kind == CommandKind::Wait) return;
  const std::size_t first_written = planned.slots.size() == 2 ? 1 : 0;
  for (std::size_t i = first_written; i < planned.slots.size(); ++i) {
    buffers_[planned.slots[i]].initialized = false;
    stats_.reads_unknown++;
  }
}

template <Backend B>
void RawWorkload<B>::destroy_terminal_events() {
  for (std::uint32_t i = 0; i < events_.size(); ++i) {
    EventSlot& slot = events_[i];
    const bool observed = slot.terminal_seen || mutated(Mutation::DestroyUnobservedEvent);
    if (slot.dead || !observed || slot.pins != 0) continue;
    ReleaseResult<Event> released = backend_.destroy_event(std::move(slot.handle));
    if (!settle_release(released, slot.handle)) continue;
    slot.dead = true;
    if (released.status == ReleaseStatus::Indeterminate) {  // what it pinned stays quarantined (R2)
      quarantine_reachable(i);
      continue;
    }
    for (std::uint32_t b : slot.buffers) buffers_[b].pins--;
    for (std::uint32_t e : slot.waited) events_[e].pins--;
    if (slot.executable != kNone) executables_[slot.executable].live_replays--;
  }
}

template <Backend B>
void RawWorkload<B>::quarantine_reachable(std::uint32_t first_event) {
  std::vector<std::uint32_t> pending = {first_event};
  for (std::size_t steps = 0; !pending.empty() && steps <= events_.size(); ++steps) {
    EventSlot& slot = events_[pending.back()];
    pending.pop_back();
    for (std::uint32_t b : slot.buffers) buffers_[b].quarantined = true;
    if (slot.executable != kNone) quarantine_executable(executables_[slot.executable]);
    for (std::uint32_t e : slot.waited) {
      if (!events_[e].quarantined) {
        events_[e].quarantined = true;
        pending.push_back(e);
      }
    }
  }
}

template <Backend B>
void RawWorkload<B>::quarantine_executable(ExecutableSlot& slot) {
  slot.quarantined = true;
  for (std::uint32_t b : slot.buffers) buffers_[b].quarantined = true;
}

template <Backend B>
void RawWorkload<B>::cancel() {
  const std::uint32_t index = pick_live_event(true);
  if (index == kNone) return;
  const Status status = backend_.cancel_event(events_[index].handle);
  note(12, status.ok() ? 0 : static_cast<std::uint8_t>(status.error().kind) + 1);
  if (!status.ok()) lost(status.error());
}

template <Backend B>
void RawWorkload<B>::synchronize() {
  if (queues_.empty()) return;
  const Status status = backend_.synchronize(queues_[prng_.below(queues_.size())], options_.wait_timeout_ns);
  note(13, status.ok());
  if (!status.ok()) lost(status.error());
}

template <Backend B>
void RawWorkload<B>::capture() {
  if (queues_.empty()) return;
  const auto queue_index = static_cast<std::uint32_t>(prng_.below(queues_.size()));
  Plan plan = plan_batch(queue_index, true);
  if (plan.commands.empty() || !programs_loaded(plan)) return;
  std::vector<std::vector<Binding>> bindings;
  const std::vector<Command> commands = encode(plan, bindings);
  const Queue& queue = queues_[queue_index];
  const Status begun = backend_.begin_capture(queue);
  note(14, begun.ok());
  if (!begun.ok()) {
    lost(begun.error());
    return;
  }
  if (mutated(Mutation::SyncInsideCapture)) (void)backend_.synchronize(queue, options_.wait_timeout_ns);
  const Status recorded = backend_.capture(queue, commands);
  note(15, recorded.ok());
  if (!recorded.ok() && lost(recorded.error())) return;  // a lost context takes its capture with it
  if (mutated(Mutation::CaptureNotEnded)) return;  // the bug: the window is never ended
  Result<Executable> executable = backend_.end_capture(queue);  // every begin is ended (R13)
  note(16, executable.ok());
  if (!executable.ok()) {
    lost(executable.error());
    return;
  }
  if (!recorded.ok()) {  // a capture that failed part-way is not replayed
    ReleaseResult<Executable> released = backend_.destroy_executable(std::move(executable).value());
    note(17, static_cast<std::uint8_t>(released.status));
    if (released.status == ReleaseStatus::Rejected) leaked_executables_.push_back(std::move(released.handle));
    return;
  }
  stats_.captures++;
  ExecutableSlot slot;
  slot.handle = std::move(executable).value();
  slot.buffers = std::move(plan.buffers);
  slot.effects = std::move(plan.commands);
  if (!mutated(Mutation::CapturedBuffersUnpinned)) {
    for (std::uint32_t b : slot.buffers) buffers_[b].pins++;
  }
  executables_.push_back(std::move(slot));
}

template <Backend B>
void RawWorkload<B>::replay() {
  std::vector<std::uint32_t> candidates;
  for (std::uint32_t i = 0; i < executables_.size(); ++i) {
    const ExecutableSlot& slot = executables_[i];
    if (slot.dead || slot.live_replays != 0) continue;
    bool exclusive = true;
    for (std::uint32_t b : slot.buffers) exclusive = exclusive && buffers_[b].pins == 1;
    if (exclusive) candidates.push_back(i);
  }
  if (candidates.empty() || queues_.empty()) return;
  const std::uint32_t index = candidates[prng_.below(candidates.size())];
  const std::vector<Command> commands = {Command::replay(executables_[index].handle.ref())};
  SubmitOptions options;
  options.invocation = ++invocations_;
  options.admission_timeout_ns = options_.wait_timeout_ns;
  Plan plan;
  plan.buffers = executables_[index].buffers;
  stats_.replays++;
  submit(queues_[prng_.below(queues_.size())], commands, options, std::move(plan), index);
}

template <Backend B>
void RawWorkload<B>::destroy_executable() {
  for (auto& slot : executables_) {
    if (slot.dead || slot.live_replays != 0) continue;
    ReleaseResult<Executable> released = backend_.destroy_executable(std::move(slot.handle));
    if (!settle_release(released, slot.handle)) return;
    slot.dead = true;
    if (released.status == ReleaseStatus::Released) {
      if (!mutated(Mutation::CapturedBuffersUnpinned)) {
        for (std::uint32_t b : slot.buffers) buffers_[b].pins--;
      }
    } else {
      quarantine_executable(slot);
    }
    return;
  }
}

}  // namespace quiesce::properties::raw_detail

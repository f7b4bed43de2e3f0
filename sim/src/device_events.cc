// sim::Device: observing, waiting for, cancelling and destroying events; synchronizing queues.
//
// A poll never blocks and never releases; a terminal state, once reached, never changes (R7). A wait
// passes virtual time through the Waiter until the event is terminal or the deadline passes, and then
// answers a Receipt or FenceIndeterminate with the event still live. Observing a Complete terminal teaches
// the host (agent 0 of the oracle) that everything the batch did happened before what it does next.
#include "device_internal.h"
#include "quiesce/sim/device.h"

namespace quiesce::sim {

using namespace internal;  // NOLINT(google-build-using-namespace)

namespace {

struct EventWait {
  const Device* device;
  std::uint64_t event_id;
};

}  // namespace

Observation Device::poll_event(const Event& event) {
  ++operations_;
  charge_host_ns(config_.costs.event_query_ns);
  EventRecord* record = find_event(event.ref());
  if (record == nullptr) {
    note(kCallPollEvent, event.id(), &kInvalidHandle);
    return Observation{quiesce::EventState::Indeterminate, kInvalidHandle, std::nullopt};
  }
  if (context_of(record->context_id).lost) {
    note(kCallPollEvent, event.id(), &kDeviceLost);
    return Observation{quiesce::EventState::Indeterminate, kDeviceLost, std::nullopt};
  }
  if (QueueRecord* queue = queues_.find(record->queue_id); queue != nullptr && queue->capturing) {
    invalidate_capture(*queue);
    note(kCallPollEvent, event.id(), &kCaptureUnsupported);
    return Observation{quiesce::EventState::Indeterminate, kCaptureUnsupported, std::nullopt};
  }
  note(kCallPollEvent, event.id(), nullptr);
  if (!is_terminal(record->state)) return Observation{record->state, {}, std::nullopt};
  if (record->state == quiesce::EventState::Complete) host_clock_.join(record->end_clock);
  Observation observation{record->state, record->error, std::nullopt};
  if (record->timing && record->state != quiesce::EventState::Cancelled) observation.timing = record->receipt;
  return observation;
}

WaitResult Device::wait_event(const Event& event, std::uint64_t timeout_ns) {
  ++operations_;
  const auto indeterminate = [&](const Error& error) -> WaitResult {
    note(kCallWaitEvent, event.id(), &error);
    return FenceIndeterminate{error};
  };
  EventRecord* record = find_event(event.ref());
  if (record == nullptr) return indeterminate(kInvalidHandle);
  const std::uint64_t context_id = record->context_id;
  if (context_of(context_id).lost) return indeterminate(kDeviceLost);
  if (QueueRecord* queue = queues_.find(record->queue_id); queue != nullptr && queue->capturing) {
    invalidate_capture(*queue);
    return indeterminate(kCaptureUnsupported);
  }
  if (!is_terminal(record->state)) {
    const EventWait wait{this, event.id()};
    const auto done = [](const void* raw) {
      const auto* self = static_cast<const EventWait*>(raw);
      const EventRecord* waited = self->device->events_.find(self->event_id);
      return waited == nullptr || is_terminal(waited->state) || self->device->context_lost(waited->context_id);
    };
    (void)waiter_->wait_until(saturating_add(clock_.now_ns(), timeout_ns), done, &wait);
    record = find_event(event.ref());
    if (record == nullptr) return indeterminate(kInvalidHandle);
    if (context_of(context_id).lost) return indeterminate(kDeviceLost);
    if (!is_terminal(record->state)) {
      return indeterminate(sim_error(ErrorKind::Timeout, Code::Timeout,
                                     "the event did not reach a terminal state before the wait's deadline", true));
    }
  }
  note(kCallWaitEvent, event.id(), nullptr);
  if (record->state == quiesce::EventState::Complete) host_clock_.join(record->end_clock);
  Receipt receipt{record->state, record->error, std::nullopt};
  if (record->timing && record->state != quiesce::EventState::Cancelled) receipt.timing = record->receipt;
  return receipt;
}

Status Device::cancel_event(const Event& event) {
  ++operations_;
  const auto fail = [&](const Error& error) -> Status {
    note(kCallCancelEvent, event.id(), &error);
    return error;
  };
  if (!has_capability(Capability::EventCancellation)) {
    return fail(sim_error(ErrorKind::Unsupported, Code::NotSupported, "event cancellation is switched off on this device"));
  }
  EventRecord* record = find_event(event.ref());
  if (record == nullptr) return fail(kInvalidHandle);
  if (context_of(record->context_id).lost) return fail(kDeviceLost);
  if (record->state == quiesce::EventState::Cancelled) {
    note(kCallCancelEvent, event.id(), nullptr);
    return ok_status();
  }
  constexpr Error kLost = sim_error(ErrorKind::Busy, Code::CancelLost,
                                    "cancellation lost the race: a command of the batch already started");
  if (is_terminal(record->state) || record->started) return fail(kLost);
  QueueRecord* queue = queues_.find(record->queue_id);
  BatchRecord* batch = nullptr;
  for (std::uint32_t offset = 0; queue != nullptr && offset < queue->count; ++offset) {
    BatchRecord& candidate = queue->ring[(queue->head + offset) % config_.queue_depth_max];
    if (candidate.event_id == event.id()) batch = &candidate;
  }
  if (batch == nullptr || batch->started) return fail(kLost);
  // Won: nothing of the batch ran, so nothing of it ever will. Release what it referenced now.
  for (std::uint32_t index = batch->next; index < batch->store.commands.size(); ++index) {
    const StagedCommand& command = batch->store.commands[index];
    unreference(command, batch->store, false);
    if (command.kind == CommandKind::Replay) {
      if (ExecutableRecord* executable = executables_.find(command.executable_id)) {
        executable->cancelled_tickets.push_back(command.replay_ticket);
        if (queue->ring[queue->head].event_id == event.id()) wake_blocked(QueueRun::BlockedOnReplay, command.executable_id);
      }
    }
  }
  batch->cancelled = true;
  record->state = quiesce::EventState::Cancelled;
  if (queue->ring[queue->head].event_id == event.id()) {
    if (queue->run == QueueRun::WaitingEngine) engines_waiting_[queue->engine_class]--;
    if (queue->run != QueueRun::Running && queue->run != QueueRun::Stopped) queue->run = QueueRun::Idle;
  }
  // Queues blocked on a replay ticket this batch held, or on this event, may move now.
  for (std::uint32_t slot = 0; slot < queues_.slots(); ++slot) {
    if (queues_.live(slot) && queues_.at(slot).run == QueueRun::BlockedOnReplay) {
      queues_.at(slot).run = QueueRun::Idle;
      schedule_pump(queues_.id_at(slot));
    }
  }
  wake_blocked(QueueRun::BlockedOnEvent, event.id());
  schedule_pump(record->queue_id);
  drain();
  note(kCallCancelEvent, event.id(), nullptr);
  return ok_status();
}

ReleaseResult<Event> Device::destroy_event(Event&& event) {
  ++operations_;
  EventRecord* record = find_event(event.ref());
  if (record == nullptr) {
    note(kCallDestroyEvent, event.id(), &kInvalidHandle);
    return ReleaseResult<Event>::rejected(std::move(event), kInvalidHandle);
  }
  ContextRecord* context = &context_of(record->context_id);
  if (context->lost) {
    note(kCallDestroyEvent, event.id(), &kDeviceLost);
    Event consumed = std::move(event);
    return ReleaseResult<Event>::indeterminate(kDeviceLost);
  }
  if (!is_terminal(record->state)) {
    constexpr Error kPending = sim_error(ErrorKind::Busy, Code::ResourceBusy,
                                         "the event is still pending: its batch may touch its resources", true);
    note(kCallDestroyEvent, event.id(), &kPending);
    return ReleaseResult<Event>::rejected(std::move(event), kPending);
  }
  events_.release(SlotTable<EventRecord>::slot_of(event.id()));
  context->events--;
  note(kCallDestroyEvent, event.id(), nullptr);
  Event consumed = std::move(event);
  return ReleaseResult<Event>::released();
}

Status Device::synchronize(const Queue& queue, std::uint64_t timeout_ns) {
  ++operations_;
  const auto fail = [&](const Error& error) -> Status {
    note(kCallSynchronize, queue.id(), &error);
    return error;
  };
  QueueRecord* record = find_queue(queue.ref());
  if (record == nullptr) return fail(kInvalidHandle);
  const std::uint64_t context_id = record->context_id;
  if (context_of(context_id).lost) return fail(kDeviceLost);
  if (record->capturing) {
    invalidate_capture(*record);
    return fail(kCaptureUnsupported);
  }
  struct QueueWait {
    const Device* device;
    std::uint64_t queue_id;
  } wait{this, queue.id()};
  const auto done = [](const void* raw) {
    const auto* self = static_cast<const QueueWait*>(raw);
    const QueueRecord* waited = self->device->queues_.find(self->queue_id);
    return waited == nullptr || waited->count == 0 || self->device->context_lost(waited->context_id);
  };
  (void)waiter_->wait_until(saturating_add(clock_.now_ns(), timeout_ns), done, &wait);
  record = find_queue(queue.ref());
  if (record == nullptr) return fail(kInvalidHandle);
  if (context_of(context_id).lost) return fail(kDeviceLost);
  if (record->count != 0) {
    return fail(sim_error(ErrorKind::Timeout, Code::Timeout, "the queue still had work in flight at the deadline", true));
  }
  host_clock_.join(record->clock);
  note(kCallSynchronize, queue.id(), nullptr);
  return ok_status();
}

}  // namespace quiesce::sim

// ContractChecker, part 2: batches and submission, events, capture windows, executables and the end-of-run
// checks. Pins: an event pins every handle its batch references (and, for a Replay, everything the
// executable captured) from submit until the event is destroyed; an executable pins what it captured until
// it is destroyed. A release of a pinned handle is a caller violation.
#include <algorithm>
#include <cassert>

#include "quiesce/core/validator/checker.h"

namespace quiesce {

// ---- batches ----

void ContractChecker::check_binding_target(BufferRef ref, BufferUsage needed, std::uint64_t offset,
                                           std::uint64_t bytes, std::uint64_t context, QueueRef queue_ref) {
  const BufferShadow* buffer = use_buffer(ref, Use::Operate);
  if (buffer == nullptr) return;
  const HandleName name{HandleKind::BufferHandle, ref.id, ref.epoch};
  if (buffer->context != context) {
    report(Rule::CallerCrossContext, name, HandleName{HandleKind::QueueHandle, queue_ref.id, queue_ref.epoch},
           "the command references a buffer of another context");
  }
  if (!has_usage(buffer->usage, needed)) {
    report(Rule::CallerAccessMode, name, {},
           needed == BufferUsage::TransferSource ? "a copy source needs TransferSource usage"
                                                 : "a copy, upload or zero target needs TransferTarget usage");
  }
  if (offset > buffer->bytes || bytes > buffer->bytes - offset) {
    report(Rule::CallerOutOfRange, name, {}, "the command's range ends past the buffer's size, at byte", offset + bytes);
  }
}

void ContractChecker::check_command(const Command& command, std::uint64_t context, QueueRef queue_ref) {
  const HandleName queue_name{HandleKind::QueueHandle, queue_ref.id, queue_ref.epoch};
  switch (command.kind) {
    case CommandKind::Launch: {
      const ProgramShadow* program = use_program(command.program, Use::Operate);
      if (program != nullptr && program->context != context) {
        report(Rule::CallerCrossContext, HandleName{HandleKind::ProgramHandle, command.program.id, command.program.epoch},
               queue_name, "the launch names a program of another context");
      }
      for (const Binding& binding : command.bindings) {
        const BufferShadow* buffer = use_buffer(binding.buffer, Use::Operate);
        if (buffer == nullptr) continue;
        const HandleName name{HandleKind::BufferHandle, binding.buffer.id, binding.buffer.epoch};
        if (buffer->context != context) {
          report(Rule::CallerCrossContext, name, queue_name, "the launch binds a buffer of another context");
        }
        if (!access_allowed(binding.access, buffer->usage)) {
          report(Rule::CallerAccessMode, name, {}, "the binding's access mode is not allowed by the buffer's usage",
                 static_cast<std::uint64_t>(binding.access));
        }
      }
      return;
    }
    case CommandKind::Copy:
      check_binding_target(command.source, BufferUsage::TransferSource, command.source_offset, command.bytes, context,
                           queue_ref);
      check_binding_target(command.target, BufferUsage::TransferTarget, command.target_offset, command.bytes, context,
                           queue_ref);
      return;
    case CommandKind::Upload:
      check_binding_target(command.target, BufferUsage::TransferTarget, command.target_offset, command.data.size(),
                           context, queue_ref);
      return;
    case CommandKind::Zero:
      check_binding_target(command.target, BufferUsage::TransferTarget, command.target_offset, command.bytes, context,
                           queue_ref);
      return;
    case CommandKind::Replay: {
      const ExecutableShadow* executable = use_executable(command.executable, Use::Operate);
      if (executable != nullptr && executable->context != context) {
        report(Rule::CallerCrossContext,
               HandleName{HandleKind::ExecutableHandle, command.executable.id, command.executable.epoch}, queue_name,
               "the replay names an executable of another context");
      }
      return;
    }
    case CommandKind::Wait: {
      const EventShadow* event = use_event(command.event, Use::Operate);
      if (event != nullptr && event->context != context) {
        report(Rule::CallerCrossContext, HandleName{HandleKind::EventHandle, command.event.id, command.event.epoch},
               queue_name, "the wait names an event of another context");
      }
      return;
    }
  }
}

void ContractChecker::check_batch(const QueueShadow& queue, QueueRef queue_ref, Batch batch) {
  if (batch.empty()) {
    report(Rule::CallerEmptyBatch, HandleName{HandleKind::QueueHandle, queue_ref.id, queue_ref.epoch}, {},
           "the batch has no commands");
  }
  for (const Command& command : batch) check_command(command, queue.context, queue_ref);
}

void ContractChecker::check_resubmission(QueueShadow& queue, QueueRef queue_ref, Batch batch,
                                         const SubmitOptions& options) {
  const HandleName queue_name{HandleKind::QueueHandle, queue_ref.id, queue_ref.epoch};
  if (options.invocation != 0) {
    if (std::binary_search(indeterminate_invocations_.begin(), indeterminate_invocations_.end(), options.invocation)) {
      report(Rule::CallerResubmitIndeterminate, queue_name, {},
             "an invocation whose earlier submission was indeterminate was submitted again", options.invocation);
    }
    return;
  }
  if (options_.check_identical_resubmit && queue.watching_retry &&
      batch_digest(batch) == queue.indeterminate_batch_digest) {
    report(Rule::CallerResubmitIndeterminate, queue_name, {},
           "the batch is identical to the indeterminate batch submitted just before it on this queue");
  }
}

// ---- pins ----

// `event_queue` is the queue of the pinning event, 0 when an executable or capture window pins.
void ContractChecker::pin(PinRef ref, std::vector<PinRef>& pins, std::uint64_t event_queue) {
  const bool as_event = event_queue != 0;
  std::uint32_t* count = nullptr;
  switch (ref.kind) {
    case HandleKind::BufferHandle: {
      BufferShadow* buffer = buffers_.find(ref.id);
      // A stream-ordered free is ordered behind the work of its own queue (R12): an event there need not
      // be destroyed first, so it does not pin the buffer.
      if (buffer != nullptr && as_event && buffer->ordering_queue == event_queue) return;
      if (buffer != nullptr && buffer->life == Life::Live) count = as_event ? &buffer->event_pins : &buffer->executable_pins;
      break;
    }
    case HandleKind::ProgramHandle: {
      ProgramShadow* program = programs_.find(ref.id);
      if (program != nullptr && program->life == Life::Live) {
        count = as_event ? &program->event_pins : &program->executable_pins;
      }
      break;
    }
    case HandleKind::ExecutableHandle: {
      ExecutableShadow* executable = executables_.find(ref.id);
      if (executable != nullptr && executable->life == Life::Live) {
        count = as_event ? &executable->event_pins : &executable->executable_pins;
      }
      break;
    }
    default: break;
  }
  if (count == nullptr) return;  // an unknown or dead handle (already reported): nothing to keep alive
  if (pins.size() >= PinLists::kPinsPerListMax) {
    report(Rule::ValidatorBoundExceeded, HandleName{ref.kind, ref.id, 0}, {},
           "a pin list is full: later references of this batch are not tracked", PinLists::kPinsPerListMax);
    return;
  }
  ++*count;
  pins.push_back(ref);
}

void ContractChecker::pin_batch(Batch batch, std::vector<PinRef>& pins, std::uint64_t event_queue) {
  for (const Command& command : batch) {
    switch (command.kind) {
      case CommandKind::Launch:
        pin(PinRef{HandleKind::ProgramHandle, command.program.id}, pins, event_queue);
        for (const Binding& binding : command.bindings) pin(PinRef{HandleKind::BufferHandle, binding.buffer.id}, pins, event_queue);
        break;
      case CommandKind::Copy:
        pin(PinRef{HandleKind::BufferHandle, command.source.id}, pins, event_queue);
        pin(PinRef{HandleKind::BufferHandle, command.target.id}, pins, event_queue);
        break;
      case CommandKind::Upload:
      case CommandKind::Zero:
        pin(PinRef{HandleKind::BufferHandle, command.target.id}, pins, event_queue);
        break;
      case CommandKind::Replay: {
        pin(PinRef{HandleKind::ExecutableHandle, command.executable.id}, pins, event_queue);
        const ExecutableShadow* executable = executables_.find(command.executable.id);
        if (event_queue != 0 && executable != nullptr && executable->life == Life::Live && executable->pins != 0) {
          // A replay reads what the executable captured: the event pins those handles directly too. Copy the
          // captured list first: pin() appends to `pins`, which is a different list, but be explicit.
          const std::uint32_t captured = executable->pins;
          const std::size_t captured_count = pin_lists_.at(captured).size();
          for (std::size_t index = 0; index < captured_count; ++index) {
            pin(pin_lists_.at(captured)[index], pins, event_queue);
          }
        }
        break;
      }
      case CommandKind::Wait: break;  // a wait copies the event's state at submit: nothing to pin
    }
  }
}

void ContractChecker::unpin_list(std::uint32_t list, bool as_event) {
  for (const PinRef& ref : pin_lists_.at(list)) {
    std::uint32_t* count = nullptr;
    switch (ref.kind) {
      case HandleKind::BufferHandle: {
        BufferShadow* buffer = buffers_.find(ref.id);
        if (buffer != nullptr) count = as_event ? &buffer->event_pins : &buffer->executable_pins;
        break;
      }
      case HandleKind::ProgramHandle: {
        ProgramShadow* program = programs_.find(ref.id);
        if (program != nullptr) count = as_event ? &program->event_pins : &program->executable_pins;
        break;
      }
      case HandleKind::ExecutableHandle: {
        ExecutableShadow* executable = executables_.find(ref.id);
        if (executable != nullptr) count = as_event ? &executable->event_pins : &executable->executable_pins;
        break;
      }
      default: break;
    }
    if (count != nullptr && *count > 0) --*count;
  }
  pin_lists_.release(list);
}

// ---- submission ----

bool ContractChecker::before_submit(QueueRef queue_ref, Batch batch, const SubmitOptions& options) {
  start(Call::Submit);
  QueueShadow* queue = use_queue(queue_ref, Use::Operate);
  if (queue == nullptr) return forward();
  check_batch(*queue, queue_ref, batch);
  check_resubmission(*queue, queue_ref, batch, options);
  return forward();
}

void ContractChecker::register_event(QueueRef queue_ref, Batch batch, const SubmitOptions& options, const Event& event,
                                     SubmitStatus status) {
  QueueShadow* queue = queues_.find(queue_ref.id);
  if (queue == nullptr || queue->life != Life::Live) return;
  if (!check_created(HandleKind::EventHandle, event.id(), event.epoch(), queue->context)) return;
  const std::uint64_t context = queue->context;
  const std::uint64_t sequence = ++queue->submits;
  queue->live_events++;
  const std::uint32_t list = pin_lists_.acquire();
  pin_batch(batch, pin_lists_.at(list), queue_ref.id);
  EventShadow& record = events_.create(event.id());
  record.epoch = event.epoch();
  record.life = Life::Live;
  record.timing_requested = options.timing;
  record.context = context;
  record.queue = queue_ref.id;
  record.sequence = sequence;
  record.pins = list;
  (void)status;
}

void ContractChecker::after_submit(QueueRef queue_ref, Batch batch, const SubmitOptions& options,
                                   const SubmitResult& result) {
  const HandleName queue_name{HandleKind::QueueHandle, queue_ref.id, queue_ref.epoch};
  const HandleName event_name{HandleKind::EventHandle, result.event.id(), result.event.epoch()};
  const auto batch_size = static_cast<std::uint32_t>(batch.size());
  QueueShadow* queue = queues_.find(queue_ref.id);
  if (queue != nullptr && result.status != SubmitStatus::Submitted) note_error(queue->context, result.error);
  switch (result.status) {
    case SubmitStatus::Rejected:
      if (result.event.valid() || result.commands_enqueued != 0) {
        report(Rule::ProviderRejectedSubmitRetained, queue_name, event_name,
               "a rejected submit returned an event or enqueued commands", result.commands_enqueued);
      }
      return;
    case SubmitStatus::Indeterminate:
      if (!result.event.valid() || result.commands_enqueued > batch_size) {
        report(Rule::ProviderIndeterminateWithoutEvent, queue_name, event_name,
               result.event.valid() ? "an indeterminate submit claims more enqueued commands than the batch has"
                                    : "an indeterminate submit returned no event",
               result.commands_enqueued);
      }
      if (options.invocation != 0 &&
          !std::binary_search(indeterminate_invocations_.begin(), indeterminate_invocations_.end(), options.invocation)) {
        if (indeterminate_invocations_.size() >= options_.indeterminate_invocations_max) {
          report(Rule::ValidatorBoundExceeded, queue_name, {}, "too many indeterminate invocations to remember",
                 options_.indeterminate_invocations_max);
        } else {
          indeterminate_invocations_.insert(
              std::upper_bound(indeterminate_invocations_.begin(), indeterminate_invocations_.end(), options.invocation),
              options.invocation);
        }
      }
      if (queue != nullptr && options_.check_identical_resubmit) {
        queue->watching_retry = true;
        queue->indeterminate_batch_digest = batch_digest(batch);
      }
      break;
    case SubmitStatus::Submitted:
      if (!result.event.valid() || result.commands_enqueued != batch_size) {
        report(Rule::ProviderSubmittedCountMismatch, queue_name, event_name,
               result.event.valid() ? "a submitted batch reports a different number of enqueued commands"
                                    : "a submitted batch returned no event",
               result.commands_enqueued);
      }
      if (queue != nullptr) queue->watching_retry = false;
      break;
  }
  if (result.event.valid()) register_event(queue_ref, batch, options, result.event, result.status);
}

bool ContractChecker::before_synchronize(QueueRef queue_ref) {
  start(Call::Synchronize);
  const QueueShadow* queue = use_queue(queue_ref, Use::Operate);
  if (queue != nullptr && queue->capturing) {
    report(Rule::CallerSyncInsideCapture, HandleName{HandleKind::QueueHandle, queue_ref.id, queue_ref.epoch}, {},
           "synchronize of a queue inside its capture window");
  }
  return forward();
}

void ContractChecker::after_synchronize(QueueRef queue_ref, const Status& status) {
  QueueShadow* queue = queues_.find(queue_ref.id);
  if (queue == nullptr || queue->life != Life::Live) return;
  if (!status.ok()) {
    note_error(queue->context, status.error());
    return;
  }
  queue->synced_through = queue->submits;  // every event submitted so far is known to be terminal
}

// ---- events ----

void ContractChecker::check_observed(EventRef ref, EventShadow& event, EventState state, bool has_timing) {
  const HandleName name{HandleKind::EventHandle, ref.id, ref.epoch};
  if (has_timing && !is_terminal(state)) {
    report(Rule::ProviderTimingWithoutTerminal, name, {}, "a timing receipt came with a non-terminal state");
  }
  if (has_timing && !event.timing_requested) {
    report(Rule::ProviderTimingNotRequested, name, {}, "a timing receipt came for a submission that did not ask");
  }
  if (event.terminal_seen) {
    if (state != event.observed) {
      report(Rule::ProviderTerminalUnstable, name, {}, "a later observation contradicts the observed terminal",
             static_cast<std::uint64_t>(state));
    }
    return;
  }
  if (!is_terminal(state)) return;
  if (state == EventState::Cancelled && event.cancel == CancelDecision::None) {
    report(Rule::ProviderIllegalTransition, name, {}, "the event became Cancelled without a cancel that won");
  }
  if (state == EventState::Cancelled && event.cancel == CancelDecision::Lost) {
    report(Rule::ProviderCancelInconsistent, name, {}, "the event became Cancelled after its cancel answered Busy");
  }
  if (state != EventState::Cancelled && event.cancel == CancelDecision::Won) {
    report(Rule::ProviderCancelInconsistent, name, {}, "a cancel won but the event ended in another terminal",
           static_cast<std::uint64_t>(state));
  }
  event.terminal_seen = true;
  event.observed = state;
}

bool ContractChecker::before_poll_event(EventRef ref) {
  start(Call::PollEvent);
  const EventShadow* event = use_event(ref, Use::Operate);
  const QueueShadow* queue = event == nullptr ? nullptr : queues_.find(event->queue);
  if (queue != nullptr && queue->capturing) {
    report(Rule::CallerSyncInsideCapture, HandleName{HandleKind::EventHandle, ref.id, ref.epoch},
           HandleName{HandleKind::QueueHandle, event->queue, queue->epoch}, "poll of an event of a capturing queue");
  }
  return forward();
}

void ContractChecker::after_poll_event(EventRef ref, const Observation& observation) {
  EventShadow* event = events_.find(ref.id);
  if (event == nullptr || event->life != Life::Live || event->epoch != ref.epoch) return;
  if (observation.state == EventState::Indeterminate || observation.state == EventState::FailedButQuiescent) {
    note_error(event->context, observation.error);
  }
  check_observed(ref, *event, observation.state, observation.timing.has_value());
}

bool ContractChecker::before_wait_event(EventRef ref) {
  start(Call::WaitEvent);
  const EventShadow* event = use_event(ref, Use::Operate);
  const QueueShadow* queue = event == nullptr ? nullptr : queues_.find(event->queue);
  if (queue != nullptr && queue->capturing) {
    report(Rule::CallerSyncInsideCapture, HandleName{HandleKind::EventHandle, ref.id, ref.epoch},
           HandleName{HandleKind::QueueHandle, event->queue, queue->epoch}, "wait on an event of a capturing queue");
  }
  return forward();
}

void ContractChecker::after_wait_event(EventRef ref, const WaitResult& result) {
  EventShadow* event = events_.find(ref.id);
  if (event == nullptr || event->life != Life::Live || event->epoch != ref.epoch) return;
  const HandleName name{HandleKind::EventHandle, ref.id, ref.epoch};
  if (!result.ok()) {
    note_error(event->context, result.error().error);
    if (event->terminal_seen) {
      report(Rule::ProviderTerminalUnstable, name, {}, "a wait on an event observed terminal was indeterminate");
    }
    return;
  }
  const Receipt& receipt = result.value();
  if (receipt.state == EventState::FailedButQuiescent) note_error(event->context, receipt.error);
  if (!is_terminal(receipt.state)) {
    report(Rule::ProviderIllegalTransition, name, {}, "a wait returned a receipt with a non-terminal state",
           static_cast<std::uint64_t>(receipt.state));
    return;
  }
  check_observed(ref, *event, receipt.state, receipt.timing.has_value());
}

bool ContractChecker::before_cancel_event(EventRef ref) {
  start(Call::CancelEvent);
  (void)use_event(ref, Use::Operate);
  return forward();
}

void ContractChecker::after_cancel_event(EventRef ref, const Status& status) {
  EventShadow* event = events_.find(ref.id);
  if (event == nullptr || event->life != Life::Live || event->epoch != ref.epoch) return;
  const HandleName name{HandleKind::EventHandle, ref.id, ref.epoch};
  if (status.ok()) {
    if (event->cancel == CancelDecision::Lost) {
      report(Rule::ProviderCancelInconsistent, name, {}, "a cancel won after an earlier cancel answered Busy");
    }
    if (event->terminal_seen && event->observed != EventState::Cancelled) {
      report(Rule::ProviderCancelInconsistent, name, {}, "a cancel won after another terminal was observed",
             static_cast<std::uint64_t>(event->observed));
    }
    event->cancel = CancelDecision::Won;
    return;
  }
  note_error(event->context, status.error());
  if (status.error().kind == ErrorKind::Busy && event->cancel == CancelDecision::None) {
    event->cancel = CancelDecision::Lost;
  }
}

bool ContractChecker::before_destroy_event(EventRef ref) {
  start(Call::DestroyEvent);
  const EventShadow* event = use_event(ref, Use::Release);
  if (event == nullptr) return forward();
  const QueueShadow* queue = queues_.find(event->queue);
  const bool synced = queue != nullptr && queue->synced_through >= event->sequence;
  if (!event->terminal_seen && !synced) {
    report(Rule::CallerDestroyUnobservedEvent, HandleName{HandleKind::EventHandle, ref.id, ref.epoch},
           HandleName{HandleKind::QueueHandle, event->queue, event->epoch},
           "no terminal state of the event was observed before its destroy");
  }
  return forward();
}

void ContractChecker::after_destroy_event(EventRef ref, const ReleaseAnswer& answer) {
  check_release_answer(HandleName{HandleKind::EventHandle, ref.id, ref.epoch}, answer);
  EventShadow* event = events_.find(ref.id);
  if (event == nullptr || event->life != Life::Live || event->epoch != ref.epoch) return;
  note_error(event->context, answer.error);
  if (answer.status == ReleaseStatus::Rejected) return;
  // Released or indeterminate: the handle is consumed, and what its batch referenced may be released now.
  event->life = answer.status == ReleaseStatus::Released ? Life::Released : Life::Invalidated;
  if (event->pins != 0) unpin_list(event->pins, true);
  event->pins = 0;
  QueueShadow* queue = queues_.find(event->queue);
  if (queue != nullptr && queue->live_events > 0) queue->live_events--;
  events_.retire(ref.id);
}

// ---- finding the related handle of a report (rare paths: scans are fine) ----

HandleName ContractChecker::find_pinning_event(HandleKind kind, std::uint64_t id) {
  HandleName found;
  events_.for_each([&](std::uint64_t event_id, const EventShadow& event) {
    if (found.kind != HandleKind::None || event.life != Life::Live) return;
    if (kind == HandleKind::QueueHandle) {
      if (event.queue == id) found = HandleName{HandleKind::EventHandle, event_id, event.epoch};
      return;
    }
    if (event.pins == 0) return;
    for (const PinRef& ref : pin_lists_.at(event.pins)) {
      if (ref.kind == kind && ref.id == id) found = HandleName{HandleKind::EventHandle, event_id, event.epoch};
    }
  });
  return found;
}

HandleName ContractChecker::find_pinning_executable(HandleKind kind, std::uint64_t id) {
  HandleName found;
  executables_.for_each([&](std::uint64_t executable_id, const ExecutableShadow& executable) {
    if (found.kind != HandleKind::None || executable.life != Life::Live || executable.pins == 0) return;
    for (const PinRef& ref : pin_lists_.at(executable.pins)) {
      if (ref.kind == kind && ref.id == id) found = HandleName{HandleKind::ExecutableHandle, executable_id, executable.epoch};
    }
  });
  if (found.kind != HandleKind::None) return found;
  queues_.for_each([&](std::uint64_t queue_id, const QueueShadow& queue) {
    if (found.kind != HandleKind::None || queue.capture_pins == 0) return;
    for (const PinRef& ref : pin_lists_.at(queue.capture_pins)) {
      if (ref.kind == kind && ref.id == id) found = HandleName{HandleKind::QueueHandle, queue_id, queue.epoch};
    }
  });
  return found;
}

HandleName ContractChecker::find_child(std::uint64_t context) {
  HandleName found;
  auto visit = [&](HandleKind kind) {
    return [&found, context, kind](std::uint64_t id, const auto& record) {
      if (found.kind == HandleKind::None && record.life == Life::Live && record.context == context) {
        found = HandleName{kind, id, record.epoch};
      }
    };
  };
  queues_.for_each(visit(HandleKind::QueueHandle));
  buffers_.for_each(visit(HandleKind::BufferHandle));
  programs_.for_each(visit(HandleKind::ProgramHandle));
  executables_.for_each(visit(HandleKind::ExecutableHandle));
  return found;
}

}  // namespace quiesce

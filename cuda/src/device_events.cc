// cuda::Device: event observation (cuEventQuery), waits with deadlines, timing receipts, event and executable
// release. A terminal observation is cached: once seen, it never changes (R7).
#include <algorithm>
#include <cassert>

#include "device_internal.h"

namespace quiesce::cuda {

using detail::ContextSlot;
using detail::EventSlot;
using detail::ExecutableSlot;
using detail::QueueSlot;

// Timing on the host steady clock: the context's origin event completed at origin_host_ns, and
// cuEventElapsedTime (float milliseconds, about 0.5 µs resolution) places the batch's events after it.
std::optional<TimingReceipt> Device::timing_of(ContextSlot& context, const EventSlot& event) {
  if (event.timing_start == nullptr || context.origin_event == nullptr) return std::nullopt;
  float start_ms = 0;
  float finish_ms = 0;
  if (api().cuEventElapsedTime(&start_ms, context.origin_event, event.timing_start) != CUDA_SUCCESS) return std::nullopt;
  if (api().cuEventElapsedTime(&finish_ms, context.origin_event, event.done) != CUDA_SUCCESS) return std::nullopt;
  if (start_ms < 0 || finish_ms < start_ms) return std::nullopt;
  TimingReceipt receipt;
  receipt.submitted_ns = event.submitted_ns;
  // The two clocks are aligned to within the origin's host-side latency; a start before the submit is that
  // error, so it is clamped (no receipt ever claims the work began before it was submitted).
  receipt.started_ns = std::max(event.submitted_ns, context.origin_host_ns + static_cast<std::uint64_t>(
                                                                                 static_cast<double>(start_ms) * 1e6));
  receipt.finished_ns = std::max(receipt.started_ns, context.origin_host_ns + static_cast<std::uint64_t>(
                                                                                  static_cast<double>(finish_ms) * 1e6));
  return receipt;
}

Observation Device::observe(std::uint64_t event_id, EventSlot& event) {
  (void)event_id;
  if (event.terminal) return event.observed;
  ContextSlot* context = &contexts_.get(event.context_id);
  assert(context != nullptr);
  if (context->lost) return Observation{EventState::Indeterminate, context->lost_error, std::nullopt};
  auto entered = enter(event.context_id);
  if (!entered.ok()) return Observation{EventState::Indeterminate, entered.error(), std::nullopt};
  CUresult result = CUDA_SUCCESS;
  if (event.on_demand) {
    QueueSlot* queue = queues_.find(event.queue_id);
    if (queue == nullptr) {
      return Observation{EventState::Indeterminate,
                         make_error(ErrorKind::Internal, "the batch's queue is gone and its completion was never seen"),
                         std::nullopt};
    }
    if (queue->completed_sequence < event.sequence) {
      if (queue->capturing && (queue->probe == nullptr || queue->probe_sequence < event.sequence)) {
        return Observation{EventState::Indeterminate,
                           make_error(ErrorKind::Internal, "no completion probe covers the batch and its queue is capturing"),
                           std::nullopt};
      }
      const CUresult covered = cover_with_probe(*context, *queue, event.sequence);
      if (covered != CUDA_SUCCESS) {
        return Observation{EventState::Indeterminate, fail(*context, covered, "recording the completion probe failed"),
                           std::nullopt};
      }
      result = api().cuEventQuery(queue->probe);
      if (result == CUDA_SUCCESS) {
        queue->completed_sequence = std::max(queue->completed_sequence, queue->probe_sequence);
        return_event(*context, queue->probe, false);
        queue->probe = nullptr;
      }
    }
  } else if (event.recorded) {
    result = api().cuEventQuery(event.done);
  } else {
    // The record after the batch failed. The stream being idle still proves the prefix is done.
    const QueueSlot* queue = queues_.find(event.queue_id);
    if (queue == nullptr || queue->capturing) {
      return Observation{EventState::Indeterminate,
                         make_error(ErrorKind::Internal, "the batch's event was never recorded and its queue cannot be queried"),
                         std::nullopt};
    }
    result = api().cuStreamQuery(queue->stream);
  }
  if (result == CUDA_ERROR_NOT_READY) return Observation{EventState::Pending, {}, std::nullopt};
  if (result != CUDA_SUCCESS) {
    return Observation{EventState::Indeterminate, fail(*context, result, "cuEventQuery failed"), std::nullopt};
  }
  event.terminal = true;
  event.observed.state = event.partial ? EventState::FailedButQuiescent : EventState::Complete;
  event.observed.error = event.partial ? event.partial_error : Error{};
  event.observed.timing = timing_of(*context, event);
  return event.observed;
}

CUresult Device::cover_with_probe(ContextSlot& context, QueueSlot& queue, std::uint64_t sequence) {
  if (queue.probe != nullptr && queue.probe_sequence >= sequence) return CUDA_SUCCESS;
  CUevent probe = nullptr;
  if (!context.idle_events.empty()) {
    probe = context.idle_events.back();
    context.idle_events.pop_back();
  } else {
    const CUresult created = api().cuEventCreate(&probe, CU_EVENT_DISABLE_TIMING);
    if (created != CUDA_SUCCESS) return created;
  }
  const CUresult recorded = api().cuEventRecord(probe, queue.stream);
  if (recorded != CUDA_SUCCESS) {
    return_event(context, probe, false);
    return recorded;
  }
  return_event(context, queue.probe, false);  // the new probe covers everything the old one did
  queue.probe = probe;
  queue.probe_sequence = queue.submitted_sequence;
  return CUDA_SUCCESS;
}

Observation Device::poll_event(const Event& event) {
  EventSlot* slot = resolve(events_, event.id(), event.epoch());
  if (slot == nullptr) {
    return Observation{EventState::Indeterminate,
                       make_error(ErrorKind::InvalidArgument, "the event handle does not name a live event"), std::nullopt};
  }
  return observe(event.id(), *slot);
}

WaitResult Device::wait_event(const Event& event, std::uint64_t timeout_ns) {
  EventSlot* slot = resolve(events_, event.id(), event.epoch());
  if (slot == nullptr) {
    return FenceIndeterminate{make_error(ErrorKind::InvalidArgument, "the event handle does not name a live event")};
  }
  const PollPacer pacer(options_, timeout_ns);
  // Bounded by the deadline: every pass either returns or pauses toward it.
  for (;;) {
    const Observation observed = observe(event.id(), *slot);
    if (is_terminal(observed.state)) return Receipt{observed.state, observed.error, observed.timing};
    if (observed.state == EventState::Indeterminate) return FenceIndeterminate{observed.error};
    if (!pacer.before_deadline()) {
      return FenceIndeterminate{make_error(ErrorKind::Timeout, "the event was still pending at the wait's deadline", true)};
    }
    pacer.pause();
  }
}

Status Device::cancel_event(const Event& event) {
  (void)event;
  return make_error(ErrorKind::Unsupported, "CUDA cannot cancel enqueued work (Capability::EventCancellation is absent)");
}

ReleaseResult<Event> Device::destroy_event(Event&& event_in) {
  Event event = std::move(event_in);  // consumed on every path; a rejection hands it back
  EventSlot* slot = resolve(events_, event.id(), event.epoch());
  if (slot == nullptr) {
    return ReleaseResult<Event>::rejected(std::move(event),
                                          make_error(ErrorKind::InvalidArgument, "the event handle does not name a live event"));
  }
  ContextSlot* context = &contexts_.get(slot->context_id);
  const std::uint64_t context_id = slot->context_id;
  const std::uint64_t event_id = event.id();
  if (context->lost) {
    events_.erase(event_id);
    release_child(context_id);
    return ReleaseResult<Event>::indeterminate(context->lost_error);
  }
  const Observation observed = observe(event_id, *slot);
  if (!is_terminal(observed.state)) {
    if (context->lost) {
      events_.erase(event_id);
      release_child(context_id);
      return ReleaseResult<Event>::indeterminate(context->lost_error);
    }
    return ReleaseResult<Event>::rejected(std::move(event),
                                          make_error(ErrorKind::Busy, "the event is not terminal: its batch may still run", true));
  }
  return_event(*context, slot->done, slot->timing_start != nullptr);
  return_event(*context, slot->timing_start, true);
  if (QueueSlot* queue = queues_.find(slot->queue_id)) {
    // An id is listed once, and events are mostly destroyed oldest first: the search stops near the front.
    auto& in_flight = queue->in_flight;
    const auto listed = std::find(in_flight.begin(), in_flight.end(), event_id);
    if (listed == in_flight.begin() && listed != in_flight.end()) {
      in_flight.pop_front();  // the common case, without deque::erase's general path
    } else if (listed != in_flight.end()) {
      in_flight.erase(listed);
    }
  }
  events_.erase(event_id);
  release_child(context_id);
  return ReleaseResult<Event>::released();
}

ReleaseResult<Executable> Device::destroy_executable(Executable&& executable_in) {
  Executable executable = std::move(executable_in);  // consumed on every path; a rejection hands it back
  ExecutableSlot* slot = resolve(executables_, executable.id(), executable.epoch());
  if (slot == nullptr) {
    return ReleaseResult<Executable>::rejected(
        std::move(executable), make_error(ErrorKind::InvalidArgument, "the executable handle does not name a live executable"));
  }
  ContextSlot* context = &contexts_.get(slot->context_id);
  const std::uint64_t context_id = slot->context_id;
  const auto unpin = [&] {
    for (const std::uint64_t buffer_id : slot->pinned_buffers) {
      if (detail::BufferSlot* buffer = buffers_.find(buffer_id); buffer != nullptr && buffer->pins > 0) buffer->pins--;
    }
  };
  if (context->lost) {
    unpin();
    executables_.erase(executable.id());
    release_child(context_id);
    return ReleaseResult<Executable>::indeterminate(context->lost_error);
  }
  // The last replay must be terminal: a destroyed graph must not be running (CubeCL syncs first too).
  if (EventSlot* replay = events_.find(slot->last_replay_event)) {
    if (!is_terminal(observe(slot->last_replay_event, *replay).state)) {
      return ReleaseResult<Executable>::rejected(
          std::move(executable), make_error(ErrorKind::Busy, "the executable's last replay is not terminal", true));
    }
  }
  auto entered = enter(context_id);
  if (!entered.ok()) return ReleaseResult<Executable>::rejected(std::move(executable), entered.error());
  const CUresult destroyed = api().cuGraphExecDestroy(slot->graph);
  unpin();
  executables_.erase(executable.id());
  release_child(context_id);
  if (destroyed != CUDA_SUCCESS) {
    return ReleaseResult<Executable>::indeterminate(fail(*context, destroyed, "cuGraphExecDestroy failed"));
  }
  return ReleaseResult<Executable>::released();
}

}  // namespace quiesce::cuda

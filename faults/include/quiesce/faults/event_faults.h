// Fault family Event: what polls and waits report about an event.
//
// What can fail:
// - PollIndeterminate: a poll reports Indeterminate (not terminal; it releases nothing); the inner poll is
//   not called.
// - WaitIndeterminate: a wait reports FenceIndeterminate without calling the inner wait; the event stays
//   live and retains everything reachable from it.
// - DelayedCompletion: the inner event is terminal, yet polls report Pending `parameter` more times; since
//   each queue's events are delayed independently, completions are observed out of order across queues.
//   A blocking wait, or a successful synchronize of the queue, ends the delay.
// - AsyncLaunchFailure: an event whose batch holds a launch and whose inner terminal is Complete is
//   reported FailedButQuiescent with an injected error. The data effects happened; the runtime must surface
//   the error (R14). The device no longer touches the batch's resources, so the state is still quiescent.
// What must still hold: once the injector reported a terminal for an event it reports that same
// observation forever (R7); an event the injector never saw submitted is passed through untouched; no
// delay is told after a cancellation the inner backend accepted.
#pragma once

#include <cstdint>

#include "quiesce/core/backend.h"
#include "quiesce/faults/device_loss.h"
#include "quiesce/faults/state.h"

namespace quiesce::faults::detail {

inline Receipt receipt_of(const Observation& observation) {
  return Receipt{observation.state, observation.error, observation.timing};
}

inline Observation observation_of(const Receipt& receipt) {
  return Observation{receipt.state, receipt.error, receipt.timing};
}

// The first terminal the inner backend showed for an event, as the injector will report it.
inline void adopt_terminal(InjectorState& state, EventTrack& track, Observation observed) {
  if (observed.state == EventState::Complete && track.has_launch &&
      state.decider.consider(FaultKind::AsyncLaunchFailure)) {
    observed.state = EventState::FailedButQuiescent;
    observed.error = state.decider.record(FaultKind::AsyncLaunchFailure, 0);
  }
  track.terminal = observed;
}

inline Observation report_terminal(EventTrack& track) {
  track.terminal_reported = true;
  track.delay_polls_left = 0;
  return *track.terminal;
}

template <Backend B>
Observation poll_with_faults(B& inner, InjectorState& state, const Event& event) {
  EventTrack* track = state.tracker.event(event.id());
  if (track == nullptr) return inner.poll_event(event);
  if (track->terminal_reported) return *track->terminal;
  if (lost_now(state, track->context_id)) {
    return Observation{EventState::Indeterminate, Decider::lost_error(), std::nullopt};
  }
  if (track->terminal.has_value()) {
    if (track->delay_polls_left == 0) return report_terminal(*track);
    track->delay_polls_left--;
    return Observation{};
  }
  if (state.decider.consider(FaultKind::PollIndeterminate)) {
    return Observation{EventState::Indeterminate, state.decider.record(FaultKind::PollIndeterminate, 0),
                       std::nullopt};
  }
  const Observation observed = inner.poll_event(event);
  if (!is_terminal(observed.state)) return observed;
  adopt_terminal(state, *track, observed);
  if (!track->cancel_won && !track->settled) {
    if (const auto verdict = state.decider.consider(FaultKind::DelayedCompletion)) {
      const std::uint64_t delay_max = state.decider.plan().delay_polls_max;
      const std::uint64_t delay_polls = state.decider.choose(*verdict, 1, delay_max < 1 ? 1 : delay_max);
      track->delay_polls_left = static_cast<std::uint32_t>(delay_polls - 1);
      (void)state.decider.record(FaultKind::DelayedCompletion, delay_polls);
      return Observation{};
    }
  }
  return report_terminal(*track);
}

template <Backend B>
WaitResult wait_with_faults(B& inner, InjectorState& state, const Event& event, std::uint64_t timeout_ns) {
  EventTrack* track = state.tracker.event(event.id());
  if (track == nullptr) return inner.wait_event(event, timeout_ns);
  if (track->terminal_reported) return receipt_of(*track->terminal);
  if (lost_now(state, track->context_id)) return FenceIndeterminate{Decider::lost_error()};
  if (track->terminal.has_value()) return receipt_of(report_terminal(*track));  // a wait ends the delay
  if (state.decider.consider(FaultKind::WaitIndeterminate)) {
    return FenceIndeterminate{state.decider.record(FaultKind::WaitIndeterminate, 0)};
  }
  WaitResult waited = inner.wait_event(event, timeout_ns);
  if (!waited.ok()) return waited;
  adopt_terminal(state, *track, observation_of(waited.value()));
  return receipt_of(report_terminal(*track));
}

template <Backend B>
Status synchronize_with_faults(B& inner, InjectorState& state, const Queue& queue, std::uint64_t timeout_ns) {
  const std::uint64_t context_id = state.tracker.context_of(HandleKind::Queue, queue.id());
  if (lost_now(state, context_id)) return Decider::lost_error();
  Status status = inner.synchronize(queue, timeout_ns);
  if (status.ok()) state.tracker.settle_queue(queue.id());
  return status;
}

}  // namespace quiesce::faults::detail

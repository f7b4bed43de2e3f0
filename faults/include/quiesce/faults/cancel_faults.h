// Fault family Cancel: cancellation losing the race.
//
// What can fail: CancelLost answers Busy without calling the inner cancel, as if the work had already
// started; every later cancel of that event answers Busy again, still without the inner backend.
// What must still hold: cancellation is decided exactly once (R8): after a lost race the event reaches a
// normal terminal (the inner work was never cancelled), never Cancelled; a cancel of an event whose inner
// terminal the injector is still hiding behind a delay also loses, because that work has finished.
#pragma once

#include "quiesce/core/backend.h"
#include "quiesce/faults/device_loss.h"
#include "quiesce/faults/state.h"

namespace quiesce::faults::detail {

template <Backend B>
Status cancel_with_faults(B& inner, InjectorState& state, const Event& event) {
  EventTrack* track = state.tracker.event(event.id());
  if (track == nullptr) return inner.cancel_event(event);
  if (lost(state, track->context_id)) return Decider::lost_error();
  if (track->cancel_lost) return Decider::error_of(FaultKind::CancelLost);
  if (track->terminal.has_value() && !track->terminal_reported) {
    // The delay hides a finished event: its cancellation has lost, as a consequence of that fault.
    track->cancel_lost = true;
    return Decider::error_of(FaultKind::CancelLost);
  }
  if (!track->terminal_reported && !track->cancel_won && state.decider.consider(FaultKind::CancelLost)) {
    track->cancel_lost = true;
    return state.decider.record(FaultKind::CancelLost, 0);
  }
  Status status = inner.cancel_event(event);
  if (status.ok()) track->cancel_won = true;
  return status;
}

}  // namespace quiesce::faults::detail

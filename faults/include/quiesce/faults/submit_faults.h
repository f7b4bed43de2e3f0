// Fault family Submit: what a submission reports.
//
// What can fail:
// - SubmitRejected: Rejected{Busy, retryable}; the inner backend is not called, so nothing ran.
// - AdmissionTimeout: Rejected{Timeout, retryable}, as a full queue past its admission deadline; the inner
//   backend is not called.
// - SubmitIndeterminate: the whole batch is really submitted through the inner backend, and its event is
//   returned inside Indeterminate with commands_enqueued = 0 (the answer was "lost").
// - PartialSubmit: a strict prefix of k commands (1 <= k < batch size, the parameter) is really submitted
//   through the inner backend and reported Indeterminate with the prefix's event and commands_enqueued = k.
//   A batch of one command has no strict prefix: plain SubmitIndeterminate is told instead.
// What must still hold: Rejected means the inner backend never saw the batch (R3); an Indeterminate result
// always carries a live event that reaches a terminal, so the runtime can retain the whole batch until then
// (R2, R5); when the inner backend itself does not answer Submitted, its own answer is returned unchanged.
#pragma once

#include <cstdint>
#include <utility>

#include "quiesce/core/backend.h"
#include "quiesce/faults/device_loss.h"
#include "quiesce/faults/state.h"

namespace quiesce::faults::detail {

inline bool batch_has_launch(Batch batch) {
  for (const Command& command : batch) {
    if (command.kind == CommandKind::Launch && command.mode == LaunchMode::Normal) return true;
  }
  return false;
}

inline void track_submitted(InjectorState& state, const SubmitResult& result, std::uint64_t context_id,
                            std::uint64_t queue_id, Batch submitted) {
  if (!result.event.valid()) return;
  (void)state.tracker.adopt_event(result.event.id(), context_id, queue_id, batch_has_launch(submitted));
}

// Submits `submitted` through the inner backend; a Submitted answer becomes Indeterminate of `kind`.
template <Backend B>
SubmitResult submit_indeterminately(B& inner, InjectorState& state, const Queue& queue, Batch submitted,
                                    SubmitOptions options, FaultKind kind, std::uint64_t parameter) {
  const std::uint64_t context_id = state.tracker.context_of(HandleKind::Queue, queue.id());
  SubmitResult result = inner.submit(queue, submitted, options);
  track_submitted(state, result, context_id, queue.id(), submitted);
  if (result.status != SubmitStatus::Submitted) return result;
  const Error error = state.decider.record(kind, parameter);
  return SubmitResult::indeterminate(std::move(result.event), error, static_cast<std::uint32_t>(parameter));
}

template <Backend B>
SubmitResult submit_with_faults(B& inner, InjectorState& state, const Queue& queue, Batch batch,
                                SubmitOptions options) {
  const std::uint64_t context_id = state.tracker.context_of(HandleKind::Queue, queue.id());
  if (lost_now(state, context_id)) return SubmitResult::rejected(Decider::lost_error());
  if (state.decider.consider(FaultKind::SubmitRejected)) {
    return SubmitResult::rejected(state.decider.record(FaultKind::SubmitRejected, 0));
  }
  if (state.decider.consider(FaultKind::AdmissionTimeout)) {
    return SubmitResult::rejected(state.decider.record(FaultKind::AdmissionTimeout, 0));
  }
  if (!batch.empty()) {
    if (const auto verdict = state.decider.consider(FaultKind::PartialSubmit)) {
      if (batch.size() == 1) {
        return submit_indeterminately(inner, state, queue, batch, options, FaultKind::SubmitIndeterminate, 0);
      }
      const std::uint64_t prefix = state.decider.choose(*verdict, 1, batch.size() - 1);
      return submit_indeterminately(inner, state, queue, batch.first(prefix), options, FaultKind::PartialSubmit,
                                    prefix);
    }
    if (state.decider.consider(FaultKind::SubmitIndeterminate)) {
      return submit_indeterminately(inner, state, queue, batch, options, FaultKind::SubmitIndeterminate, 0);
    }
  }
  SubmitResult result = inner.submit(queue, batch, options);
  track_submitted(state, result, context_id, queue.id(), batch);
  return result;
}

}  // namespace quiesce::faults::detail

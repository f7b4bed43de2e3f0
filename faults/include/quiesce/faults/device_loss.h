// Fault family DeviceLoss: a sticky device loss, as after CUDA_ERROR_ILLEGAL_ADDRESS (CUDA-FACTS.md).
//
// What can fail: at a submit, poll, wait or synchronize on a context the injector may declare that context
// lost. From that call on, every call on the context fails with DeviceLost: submits are Rejected (the inner
// backend is not called, so nothing ran and nothing was retained), polls are Indeterminate, waits are
// FenceIndeterminate, releases are Indeterminate (nothing is released now), every other call returns the
// error; destroy_context of a lost context is Indeterminate and the injector discards the inner context.
// What must still hold: a terminal already reported stays reported (R7); other contexts are untouched
// (R11); discard_context really discards the inner context and ends the loss; a fresh context works; nothing
// leaks in the inner backend, because the inner discard takes every child the runtime could no longer free.
#pragma once

#include <cstdint>
#include <utility>

#include "quiesce/core/backend.h"
#include "quiesce/faults/state.h"

namespace quiesce::faults::detail {

// Whether the context is lost, declaring it lost now if the plan says so (a DeviceLost fault site).
inline bool lost_now(InjectorState& state, std::uint64_t context_id) {
  if (context_id == 0) return false;  // a handle the injector never saw created: not ours to lie about
  if (state.tracker.lost(context_id)) return true;
  if (!state.decider.consider(FaultKind::DeviceLost)) return false;
  state.tracker.mark_lost(context_id);
  (void)state.decider.record(FaultKind::DeviceLost, 0);
  return true;
}

// Whether the context is lost already (calls that are not DeviceLost sites).
inline bool lost(const InjectorState& state, std::uint64_t context_id) {
  return context_id != 0 && state.tracker.lost(context_id);
}

template <Backend B>
Status discard_with_faults(B& inner, InjectorState& state, Context&& context) {
  const std::uint64_t context_id = context.id();
  Status status = inner.discard_context(std::move(context));
  // The inner discard abandoned every child, the ones held in limbo included.
  state.tracker.forget_context(context_id);
  return status;
}

}  // namespace quiesce::faults::detail

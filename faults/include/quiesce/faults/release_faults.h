// Fault family Release: rejected and indeterminate releases of every handle kind.
//
// What can fail:
// - ReleaseRejected: the inner backend is not called; Rejected{Busy, retryable} hands the same live handle
//   back, so the caller may retry (R6).
// - ReleaseIndeterminate: the inner release is really done or not, chosen by the Prng (the parameter, 1 or
//   0) and hidden from the caller, who only sees Indeterminate: the handle is invalidated for good.
// What must still hold: a handle the injector did not release stays alive in the inner backend in *limbo*,
// and is really released before its queue or context is destroyed, at discard_context, or when the
// Injector ends, so nothing leaks in the inner backend. When the inner release itself answers otherwise
// than Released, its own answer is returned and no fault is logged.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "quiesce/core/backend.h"
#include "quiesce/faults/device_loss.h"
#include "quiesce/faults/state.h"

namespace quiesce::faults::detail {

template <class H>
constexpr HandleKind handle_kind_of() {
  if constexpr (std::is_same_v<H, Context>) return HandleKind::Context;
  if constexpr (std::is_same_v<H, Buffer>) return HandleKind::Buffer;
  if constexpr (std::is_same_v<H, Program>) return HandleKind::Program;
  if constexpr (std::is_same_v<H, Queue>) return HandleKind::Queue;
  if constexpr (std::is_same_v<H, Event>) return HandleKind::Event;
  if constexpr (std::is_same_v<H, Executable>) return HandleKind::Executable;
}

// Really releases one limbo entry through the inner backend. False when the inner backend refused (Rejected).
template <Backend B>
bool release_limbo_entry(B& inner, const LimboEntry& entry) {
  ReleaseStatus status = ReleaseStatus::Released;
  switch (entry.kind) {
    case HandleKind::Context: status = inner.destroy_context(Context(entry.id, entry.epoch)).status; break;
    case HandleKind::Buffer: status = inner.free_buffer(Buffer(entry.id, entry.epoch)).status; break;
    case HandleKind::Program: status = inner.unload_program(Program(entry.id, entry.epoch)).status; break;
    case HandleKind::Queue: status = inner.destroy_queue(Queue(entry.id, entry.epoch)).status; break;
    case HandleKind::Event: status = inner.destroy_event(Event(entry.id, entry.epoch)).status; break;
    case HandleKind::Executable:
      status = inner.destroy_executable(Executable(entry.id, entry.epoch)).status;
      break;
  }
  return status != ReleaseStatus::Rejected;
}

// Releases what limbo holds for one context before its queue or the context itself is destroyed. An entry
// the inner backend refuses stays in limbo for a later attempt.
template <Backend B>
void flush_limbo(B& inner, InjectorState& state, std::uint64_t context_id) {
  if (state.tracker.limbo_size() == 0) return;
  const std::vector<LimboEntry> entries = state.tracker.take_limbo(context_id);
  for (const LimboEntry& entry : entries) {
    if (!release_limbo_entry(inner, entry)) state.tracker.to_limbo(entry);
  }
}

// The Injector's end: everything still in limbo is released; a context the inner backend refuses to
// destroy (children it still counts) is discarded instead, so the inner backend ends with nothing leaked.
template <Backend B>
void drain_limbo(B& inner, InjectorState& state) {
  const std::vector<LimboEntry> entries = state.tracker.take_all_limbo();
  for (const LimboEntry& entry : entries) {
    if (release_limbo_entry(inner, entry)) continue;
    if (entry.kind == HandleKind::Context) (void)inner.discard_context(Context(entry.id, entry.epoch));
  }
}

template <Backend B, class H, class ReleaseInner>
ReleaseResult<H> release_with_faults(B& inner, InjectorState& state, H&& handle, ReleaseInner release_inner) {
  constexpr HandleKind kind = handle_kind_of<H>();
  const std::uint64_t id = handle.id();
  const std::uint64_t context_id = kind == HandleKind::Context ? id : state.tracker.context_of(kind, id);
  if (lost(state, context_id)) {
    // Nothing is released now; the discard of the lost context takes it. A lost context the caller gives
    // up is discarded here, since the caller no longer holds a handle to discard.
    if constexpr (kind == HandleKind::Context) {
      (void)inner.discard_context(std::move(handle));
      state.tracker.forget_context(id);
    } else {
      state.tracker.forget(kind, id);
    }
    return ReleaseResult<H>::indeterminate(Decider::lost_error());
  }
  if (kind == HandleKind::Queue || kind == HandleKind::Context) flush_limbo(inner, state, context_id);
  if (state.decider.consider(FaultKind::ReleaseRejected)) {
    return ReleaseResult<H>::rejected(std::move(handle), state.decider.record(FaultKind::ReleaseRejected, 0));
  }
  if (const auto verdict = state.decider.consider(FaultKind::ReleaseIndeterminate)) {
    const std::uint64_t really_released = state.decider.choose(*verdict, 0, 1);
    if (really_released == 0) {
      state.tracker.forget(kind, id);
      state.tracker.to_limbo(LimboEntry{kind, id, handle.epoch(), context_id});
      return ReleaseResult<H>::indeterminate(state.decider.record(FaultKind::ReleaseIndeterminate, 0));
    }
    ReleaseResult<H> result = release_inner(std::move(handle));
    if (result.status != ReleaseStatus::Released) return result;  // the inner's own answer is the truth
    state.tracker.forget(kind, id);
    return ReleaseResult<H>::indeterminate(state.decider.record(FaultKind::ReleaseIndeterminate, 1));
  }
  ReleaseResult<H> result = release_inner(std::move(handle));
  if (result.status != ReleaseStatus::Rejected) state.tracker.forget(kind, id);
  return result;
}

}  // namespace quiesce::faults::detail

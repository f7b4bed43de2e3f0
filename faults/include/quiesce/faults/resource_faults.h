// Fault family Resource: allocation and program-load failures, and the bookkeeping of created handles.
//
// What can fail:
// - AllocationFailure: allocate_buffer answers OutOfMemory (retryable) without calling the inner backend.
// - ProgramLoadFailure: load_program answers Internal without calling the inner backend.
// What must still hold: a failed allocation or load retains nothing, in the inner backend or here; a handle
// that is really created is recorded with its context, so a later device loss finds it.
#pragma once

#include <cstdint>
#include <utility>

#include "quiesce/core/backend.h"
#include "quiesce/faults/device_loss.h"
#include "quiesce/faults/state.h"

namespace quiesce::faults::detail {

template <Backend B>
Result<Buffer> allocate_with_faults(B& inner, InjectorState& state, const Context& context,
                                    const AllocationPermit& permit) {
  if (lost(state, context.id())) return Decider::lost_error();
  if (state.decider.consider(FaultKind::AllocationFailure)) {
    return state.decider.record(FaultKind::AllocationFailure, 0);
  }
  Result<Buffer> buffer = inner.allocate_buffer(context, permit);
  if (buffer.ok()) state.tracker.adopt(HandleKind::Buffer, buffer->id(), context.id());
  return buffer;
}

template <Backend B>
Result<Program> load_with_faults(B& inner, InjectorState& state, const Context& context,
                                 const ArtifactRef& artifact) {
  if (lost(state, context.id())) return Decider::lost_error();
  if (state.decider.consider(FaultKind::ProgramLoadFailure)) {
    return state.decider.record(FaultKind::ProgramLoadFailure, 0);
  }
  Result<Program> program = inner.load_program(context, artifact);
  if (program.ok()) state.tracker.adopt(HandleKind::Program, program->id(), context.id());
  return program;
}

template <Backend B>
Result<Queue> create_queue_tracked(B& inner, InjectorState& state, const Context& context, QueueDesc desc) {
  if (lost(state, context.id())) return Decider::lost_error();
  Result<Queue> queue = inner.create_queue(context, desc);
  if (queue.ok()) state.tracker.adopt(HandleKind::Queue, queue->id(), context.id());
  return queue;
}

}  // namespace quiesce::faults::detail

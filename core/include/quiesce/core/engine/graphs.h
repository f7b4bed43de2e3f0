// Engine graphs: prepare, capture, replay and destroy reusable executables (ComputeServer graphs, CUDA
// stream capture).
//
// What can fail, and what must still hold (R13):
// - begin_capture, capture or end_capture fails: every begin is still ended, on every path; an executable
//   that end_capture yields after a failed capture is destroyed through the deferred path.
// - nothing else runs inside the capture window: the engine holds its mutex from begin to end, so no query,
//   sync or allocation can reach the capturing queue.
// - every buffer and program the executable captured stays pinned for the executable's whole lifetime.
// - replays of one executable never overlap: a replay on another queue waits for the unfinished ones.
// - destroy is deferred until no replay is unfinished; an indeterminate destroy retains the captured
//   resources for good.
#pragma once

#include "quiesce/core/engine.h"

namespace quiesce {

template <Backend B, Env E>
Status Engine<B, E>::prepare_graph(QueueIndex queue) {
  Lock lock(mutex_);
  QUIESCE_TRY(ready_locked());
  if (!has_capability(device_info_.capabilities, Capability::ReusableExecutables)) {
    return make_error(ErrorKind::Unsupported, "the device has no reusable executables (graphs)");
  }
  if (queue >= queues_.size()) return make_error(ErrorKind::InvalidArgument, "the queue index is out of range");
  queues_[queue].prepared = true;
  return ok_status();
}

template <Backend B, Env E>
Result<GraphId> Engine<B, E>::capture_graph(QueueIndex queue, std::span<const EngineOp> ops) {
  Lock lock(mutex_);
  QUIESCE_TRY(ready_locked());
  if (!has_capability(device_info_.capabilities, Capability::ReusableExecutables)) {
    return make_error(ErrorKind::Unsupported, "the device has no reusable executables (graphs)");
  }
  if (queue >= queues_.size()) return make_error(ErrorKind::InvalidArgument, "the queue index is out of range");
  if (!queues_[queue].prepared) {
    return make_error(ErrorKind::InvalidArgument, "the queue was not prepared for capture; call prepare_graph first");
  }
  if (ops.empty()) return make_error(ErrorKind::InvalidArgument, "a graph needs at least one command");
  if (graphs_.size() >= options_.live_resources_max) {
    return make_error(ErrorKind::OutOfMemory, "the engine's bound on live graphs is reached");
  }
  PreparedBatch batch;
  prepare_batch_locked(ops, batch);
  for (std::size_t index = 0; index < ops.size(); ++index) QUIESCE_TRY(translate_op_locked(ops[index], index, batch, true));

  const Queue& handle = queues_[queue].handle;
  const Status begun = backend_.begin_capture(handle);
  if (!begun.ok()) {
    note_error_locked(begun.error());
    return begun.error();
  }
  const Status captured = backend_.capture(handle, Batch(batch.commands));
  Result<Executable> ended = backend_.end_capture(handle);  // reached on every path after a begin
  if (!captured.ok()) note_error_locked(captured.error());
  if (!ended.ok()) {
    note_error_locked(ended.error());
    return captured.ok() ? ended.error() : captured.error();
  }
  const std::uint64_t serial = next_serial();
  GraphSlot slot;
  slot.handle = std::move(ended).value();
  slot.queue = queue;
  for (const engine_detail::BufferAccess& use : batch.uses) {
    auto merged = std::find_if(slot.accesses.begin(), slot.accesses.end(),
                               [&](const engine_detail::BufferAccess& access) { return access.buffer == use.buffer; });
    if (merged != slot.accesses.end()) {
      merged->reads = merged->reads || use.reads;
      merged->writes = merged->writes || use.writes;
      continue;
    }
    slot.accesses.push_back(use);
    slot.buffers.push_back(use.buffer);
    buffers_.at(use.buffer).graph_pins++;
  }
  for (const auto& [program, program_slot] : batch.programs) {
    slot.programs.push_back(program);
    program_slot->graph_pins++;
  }
  slot.destroy_requested = !captured.ok();
  if (slot.destroy_requested) note_release_request_locked();
  graphs_.emplace(serial, std::move(slot));
  tally(ResourceKind::Executables).created++;
  if (!captured.ok()) {
    progress_locked(false);
    return captured.error();
  }
  counters_.graphs_captured++;
  return GraphId{serial, epoch_};
}

template <Backend B, Env E>
Result<SubmissionId> Engine<B, E>::replay(GraphId graph, QueueIndex queue) {
  const EngineOp op = EngineOp::replay(graph);
  Lock lock(mutex_);
  Result<SubmissionId> submitted = submit_locked(queue, std::span<const EngineOp>(&op, 1), SubmitRequest{}, true);
  if (submitted.ok()) counters_.replays++;
  if (!lost_ && progress_after_submit_locked()) progress_locked(false);
  return submitted;
}

template <Backend B, Env E>
Status Engine<B, E>::destroy_graph(GraphId graph) {
  Lock lock(mutex_);
  QUIESCE_TRY(ready_locked());
  Result<GraphSlot*> slot = resolve_locked(graph);
  if (!slot.ok()) return slot.error();
  slot.value()->destroy_requested = true;
  note_release_request_locked();
  progress_locked(false);
  return ok_status();
}

}  // namespace quiesce

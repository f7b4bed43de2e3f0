// Engine admission and host transfers: buffers under permits, all-or-nothing imports, explicit reads and
// writes, program load with its resident_bytes bound, and release requests.
//
// Every allocation goes through a ResourceTransaction against the engine's MemoryBudget, which issues the
// AllocationPermit for the exact request. An import publishes no id before every buffer is allocated and
// written; after a failure its staged buffers go through the ordinary release path (retried, quarantined
// if indeterminate), so nothing is left behind (R17). A host transfer first waits until no unfinished
// submission conflicts with it; a release request is carried out only once nothing pins the resource.
#pragma once

#include "quiesce/core/engine.h"

namespace quiesce {

template <Backend B, Env E>
Result<engine_detail::BufferSlot*> Engine<B, E>::resolve_locked(BufferId buffer, bool allow_released) {
  if (buffer.epoch != epoch_) {
    return make_error(ErrorKind::Incompatible, "the buffer belongs to an earlier epoch, lost with its context");
  }
  auto found = buffers_.find(buffer.serial);
  if (found == buffers_.end()) return make_error(ErrorKind::InvalidArgument, "the buffer id is not live");
  if (found->second.release_requested && !allow_released) {
    return make_error(ErrorKind::InvalidArgument, "the buffer was already released");
  }
  return &found->second;
}

template <Backend B, Env E>
Result<engine_detail::ProgramSlot*> Engine<B, E>::resolve_locked(ProgramId program) {
  if (program.epoch != epoch_) {
    return make_error(ErrorKind::Incompatible, "the program belongs to an earlier epoch, lost with its context");
  }
  auto found = programs_.find(program.serial);
  if (found == programs_.end() || found->second.release_requested) {
    return make_error(ErrorKind::InvalidArgument, "the program id is not live or was already released");
  }
  return &found->second;
}

template <Backend B, Env E>
Result<engine_detail::GraphSlot*> Engine<B, E>::resolve_locked(GraphId graph) {
  if (graph.epoch != epoch_) {
    return make_error(ErrorKind::Incompatible, "the graph belongs to an earlier epoch, lost with its context");
  }
  auto found = graphs_.find(graph.serial);
  if (found == graphs_.end() || found->second.destroy_requested) {
    return make_error(ErrorKind::InvalidArgument, "the graph id is not live or was already destroyed");
  }
  return &found->second;
}

template <Backend B, Env E>
Result<BufferId> Engine<B, E>::create_buffer(const BufferRequest& request) {
  const ImportRequest import{request, ByteSource{}};
  Result<std::vector<BufferId>> ids = import_buffers(std::span<const ImportRequest>(&import, 1));
  if (!ids.ok()) return ids.error();
  assert(ids->size() == 1);
  return ids->front();
}

template <Backend B, Env E>
Result<std::vector<BufferId>> Engine<B, E>::import_buffers(std::span<const ImportRequest> requests) {
  Lock lock(mutex_);
  QUIESCE_TRY(ready_locked());
  if (requests.empty()) return make_error(ErrorKind::InvalidArgument, "an import needs at least one buffer");
  if (buffers_.size() + requests.size() > options_.live_resources_max) {
    return make_error(ErrorKind::OutOfMemory, "the engine's bound on live buffers would be exceeded");
  }
  for (const ImportRequest& request : requests) {
    if (request.data.size() > request.buffer.bytes) {
      return make_error(ErrorKind::InvalidArgument, "import data is larger than the buffer it fills");
    }
    if (request.buffer.queue >= queues_.size()) {
      return make_error(ErrorKind::InvalidArgument, "the ordering queue index of a buffer is out of range");
    }
    if (request.buffer.mode == AllocationMode::StreamOrdered &&
        !has_capability(device_info_.capabilities, Capability::StreamOrderedAllocation)) {
      return make_error(ErrorKind::Unsupported, "the device has no stream-ordered allocation");
    }
  }
  Result<std::vector<BufferId>> imported = import_locked(requests);
  progress_locked(false);
  return imported;
}

template <Backend B, Env E>
Result<std::vector<BufferId>> Engine<B, E>::import_locked(std::span<const ImportRequest> requests) {
  ResourceTransaction<B> transaction(backend_, context_, budget_, ++transaction_counter_);
  std::optional<Error> failure;
  std::vector<BufferRequest> staged_requests;
  for (const ImportRequest& request : requests) {
    BufferDesc desc{request.buffer.bytes, request.buffer.usage, request.buffer.mode, QueueRef{}};
    if (desc.mode == AllocationMode::StreamOrdered) desc.queue = queues_[request.buffer.queue].handle.ref();
    Result<BufferRef> allocated = transaction.allocate(desc);
    if (!allocated.ok()) {
      failure = allocated.error();
      break;
    }
    staged_requests.push_back(request.buffer);
    if (request.data.size() == 0) continue;
    const Status written = transaction.write(allocated.value(), 0, request.data);
    if (!written.ok()) {
      failure = written.error();
      break;
    }
  }
  // Committing hands the staged buffers to the engine; on failure they are never published and go
  // straight to the release path.
  std::vector<Buffer> staged = transaction.commit();
  assert(staged.size() == staged_requests.size());
  std::vector<BufferId> ids;
  for (std::size_t index = 0; index < staged.size(); ++index) {
    const std::uint64_t serial = next_serial();
    BufferSlot slot;
    slot.handle = std::move(staged[index]);
    slot.request = staged_requests[index];
    slot.charged_bytes = staged_requests[index].bytes;
    slot.release_requested = failure.has_value();
    if (slot.release_requested) {
      note_release_request_locked();
      note_requested(requested_buffers_, serial);
    }
    buffers_.emplace(serial, std::move(slot));
    tally(ResourceKind::Buffers).created++;
    ids.push_back(BufferId{serial, epoch_});
  }
  if (failure.has_value()) {
    note_error_locked(*failure);
    counters_.imports_rolled_back++;
    return *failure;
  }
  return ids;
}

// Waits until no unfinished submission conflicts with a host access: writers only for a read, every user
// for a write. A fence that cannot be proven quiescent fails the access; nothing is transferred.
template <Backend B, Env E>
Status Engine<B, E>::await_uses_locked(BufferSlot& slot, bool writers_only, std::uint64_t timeout_ns) {
  std::vector<std::uint64_t> blocking;
  for (const engine_detail::BufferUse& use : slot.uses) {
    if (writers_only && !use.writes) continue;
    if (!use.reads && !use.writes) continue;
    auto found = submissions_.find(use.submission);
    if (found != submissions_.end() && !found->second.terminal) blocking.push_back(use.submission);
  }
  for (const std::uint64_t serial : blocking) {
    auto found = submissions_.find(serial);
    if (found == submissions_.end()) continue;
    if (!wait_terminal_locked(serial, found->second, timeout_ns)) {
      if (lost_) return loss_error_;
      return make_error(ErrorKind::Timeout,
                        "a submission that uses the buffer could not be proven quiescent in time");
    }
  }
  return ok_status();
}

template <Backend B, Env E>
Status Engine<B, E>::write(BufferId buffer, std::uint64_t offset, ByteSource source) {
  Lock lock(mutex_);
  QUIESCE_TRY(ready_locked());
  Result<BufferSlot*> slot = resolve_locked(buffer);
  if (!slot.ok()) return slot.error();
  BufferSlot& target = *slot.value();
  if (!has_usage(target.request.usage, BufferUsage::TransferTarget)) {
    return make_error(ErrorKind::PermissionDenied, "the buffer's usage does not include TransferTarget");
  }
  if (offset > target.request.bytes || source.size() > target.request.bytes - offset) {
    return make_error(ErrorKind::InvalidArgument, "the write runs past the end of the buffer");
  }
  QUIESCE_TRY(await_uses_locked(target, false, options_.host_access_timeout_ns));
  const Status written = backend_.write_buffer(target.handle, offset, source);
  if (!written.ok()) note_error_locked(written.error());
  return written;
}

template <Backend B, Env E>
Status Engine<B, E>::read(BufferId buffer, std::uint64_t offset, ByteSink sink) {
  Lock lock(mutex_);
  QUIESCE_TRY(ready_locked());
  Result<BufferSlot*> slot = resolve_locked(buffer);
  if (!slot.ok()) return slot.error();
  BufferSlot& source = *slot.value();
  if (!has_usage(source.request.usage, BufferUsage::TransferSource)) {
    return make_error(ErrorKind::PermissionDenied, "the buffer's usage does not include TransferSource");
  }
  if (offset > source.request.bytes || sink.size() > source.request.bytes - offset) {
    return make_error(ErrorKind::InvalidArgument, "the read runs past the end of the buffer");
  }
  QUIESCE_TRY(await_uses_locked(source, true, options_.host_access_timeout_ns));
  const Status read_status = backend_.read_buffer(source.handle, offset, sink);
  if (!read_status.ok()) note_error_locked(read_status.error());
  return read_status;
}

template <Backend B, Env E>
Result<ProgramId> Engine<B, E>::load_program(const ArtifactRef& artifact) {
  Lock lock(mutex_);
  QUIESCE_TRY(ready_locked());
  if (programs_.size() >= options_.live_resources_max) {
    return make_error(ErrorKind::OutOfMemory, "the engine's bound on live programs is reached");
  }
  // The program may retain at most resident_bytes (R17): that is what admission charges.
  if (!budget_.try_charge(artifact.resident_bytes)) {
    return make_error(ErrorKind::OutOfMemory, "the memory budget cannot admit the program's resident bytes", true);
  }
  Result<Program> program = backend_.load_program(context_, artifact);
  if (!program.ok()) {
    budget_.discharge(artifact.resident_bytes);
    note_error_locked(program.error());
    return program.error();
  }
  const std::uint64_t serial = next_serial();
  ProgramSlot slot;
  slot.handle = std::move(program).value();
  slot.resident_bytes = artifact.resident_bytes;
  programs_.emplace(serial, std::move(slot));
  tally(ResourceKind::Programs).created++;
  return ProgramId{serial, epoch_};
}

template <Backend B, Env E>
Status Engine<B, E>::release(BufferId buffer) {
  Lock lock(mutex_);
  QUIESCE_TRY(ready_locked());
  Result<BufferSlot*> slot = resolve_locked(buffer);
  if (!slot.ok()) return slot.error();
  slot.value()->release_requested = true;
  note_requested(requested_buffers_, buffer.serial);
  note_release_request_locked();
  if (slot.value()->pins() != 0) counters_.releases_deferred++;
  progress_locked(false);
  return ok_status();
}

template <Backend B, Env E>
Status Engine<B, E>::release(ProgramId program) {
  Lock lock(mutex_);
  QUIESCE_TRY(ready_locked());
  Result<ProgramSlot*> slot = resolve_locked(program);
  if (!slot.ok()) return slot.error();
  slot.value()->release_requested = true;
  note_requested(requested_programs_, program.serial);
  note_release_request_locked();
  if (slot.value()->pins() != 0) counters_.releases_deferred++;
  progress_locked(false);
  return ok_status();
}

}  // namespace quiesce

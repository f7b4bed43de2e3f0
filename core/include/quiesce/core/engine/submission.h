// Engine submission: validation before the backend, cross-queue ordering, exact retry of rejected submits.
//
// Each batch is checked against buffer usage and bounds before the backend is called (R16): a violation
// retains nothing. The engine orders conflicting work across queues itself: a batch that touches a buffer
// an unfinished batch of another queue writes (or, for a write, touches at all) waits for that batch's
// event (Command::wait), as do replays of one executable on different queues (R13). Every logical
// submission carries a fresh nonzero invocation id; a Rejected submit is retried with exactly the same
// batch and id (R3); an Indeterminate one, partial or not, is never retried (R4, R5): its event owns the
// whole batch until a terminal is observed (R2).
#pragma once

#include "quiesce/core/engine.h"

namespace quiesce {

template <Backend B, Env E>
Status Engine<B, E>::check_range_locked(BufferId id, BufferUsage needed, std::uint64_t offset,
                                        std::uint64_t bytes, std::size_t index, PreparedBatch& batch,
                                        bool reads, bool writes) {
  (void)index;
  Result<BufferSlot*> slot = resolve_locked(id);
  if (!slot.ok()) return slot.error();
  const BufferSlot& buffer = *slot.value();
  if (!has_usage(buffer.request.usage, needed)) {
    return make_error(ErrorKind::PermissionDenied, "a command needs a buffer usage the buffer was not created with");
  }
  if (bytes == 0 || offset > buffer.request.bytes || bytes > buffer.request.bytes - offset) {
    return make_error(ErrorKind::InvalidArgument, "a command's byte range is empty or runs past its buffer");
  }
  engine_detail::append_access(batch.uses, id.serial, reads, writes, slot.value());
  return ok_status();
}

template <Backend B, Env E>
Status Engine<B, E>::translate_launch_locked(const EngineOp& op, std::size_t index, PreparedBatch& batch) {
  ProgramSlot* program = batch.last_program_slot;
  if (program == nullptr || !(op.program == batch.last_program)) {
    Result<ProgramSlot*> resolved = resolve_locked(op.program);
    if (!resolved.ok()) return resolved.error();
    program = resolved.value();
    batch.last_program = op.program;
    batch.last_program_slot = program;
    engine_detail::push_unique(batch.programs, std::pair{op.program.serial, program});
  }
  if (op.dims.grid_x == 0 || op.dims.grid_y == 0 || op.dims.grid_z == 0 || op.dims.threads_per_block() == 0) {
    return make_error(ErrorKind::InvalidArgument, "a launch has an empty grid or block");
  }
  const std::size_t first_binding = batch.bindings.size();
  // A dry run touches no bytes (R18); it still pins what it names.
  const bool touches = op.mode == LaunchMode::Normal;
  for (const EngineBinding& binding : op.bindings) {
    const bool reads = touches && access_reads(binding.access);
    const bool writes = touches && access_writes(binding.access);
    // The buffer of the use before, resolved already in this batch: its slot again, and one use for both.
    // Ordering and pinning see the union of the accesses, which is what they would make of the two.
    engine_detail::BufferAccess* same = nullptr;
    if (!batch.uses.empty() && batch.uses.back().buffer == binding.buffer.serial && binding.buffer.epoch == epoch_) {
      same = &batch.uses.back();
    }
    BufferSlot* slot = same != nullptr ? same->slot : nullptr;
    if (slot == nullptr) {
      Result<BufferSlot*> resolved = resolve_locked(binding.buffer);
      if (!resolved.ok()) return resolved.error();
      slot = resolved.value();
    }
    // R16: access modes are checked against usage before the backend sees the launch.
    if (!access_allowed(binding.access, slot->request.usage)) {
      return make_error(ErrorKind::PermissionDenied, "a binding's access mode is not allowed by its buffer's usage");
    }
    assert(batch.bindings.size() < batch.bindings.capacity());  // reserved: earlier launches' spans stay valid
    batch.bindings.push_back(Binding{slot->handle.ref(), binding.access});
    if (same != nullptr) {
      same->reads = same->reads || reads;
      same->writes = same->writes || writes;
    } else {
      engine_detail::append_access(batch.uses, binding.buffer.serial, reads, writes, slot);
    }
  }
  const std::span<const Binding> bindings(batch.bindings.data() + first_binding, op.bindings.size());
  // Built in place from a blank launch: a Command is large, and zeroing it field by field (or a temporary
  // initialised and then copied) cost more than copying a ready one.
  static constexpr Command kBlankLaunch = {};
  Command& command = batch.commands.emplace_back(kBlankLaunch);
  command.mode = op.mode;
  command.program = program->handle.ref();
  command.dims = op.dims;
  command.bindings = bindings;
  command.data = op.data;
  (void)index;
  return ok_status();
}

// Empties the batch and reserves its storage for `ops`: every binding of every launch, so that no span a
// translated launch holds into `bindings` is invalidated by a later one.
template <Backend B, Env E>
void Engine<B, E>::prepare_batch_locked(std::span<const EngineOp> ops, PreparedBatch& batch) {
  batch.clear();
  std::size_t bindings = 0;
  for (const EngineOp& op : ops) {
    if (op.kind == OpKind::Launch) bindings += op.bindings.size();
  }
  batch.bindings.reserve(bindings);
  batch.commands.reserve(ops.size());
}

template <Backend B, Env E>
Status Engine<B, E>::translate_op_locked(const EngineOp& op, std::size_t index, PreparedBatch& batch,
                                         bool capturing) {
  switch (op.kind) {
    case OpKind::Launch:
      return translate_launch_locked(op, index, batch);
    case OpKind::Copy: {
      QUIESCE_TRY(check_range_locked(op.source, BufferUsage::TransferSource, op.source_offset, op.bytes, index,
                                     batch, true, false));
      const BufferRef source = batch.uses.back().slot->handle.ref();
      QUIESCE_TRY(check_range_locked(op.target, BufferUsage::TransferTarget, op.target_offset, op.bytes, index,
                                     batch, false, true));
      const BufferRef target = batch.uses.back().slot->handle.ref();
      batch.commands.push_back(Command::copy(source, op.source_offset, target, op.target_offset, op.bytes));
      return ok_status();
    }
    case OpKind::Upload:
    case OpKind::Zero: {
      const std::uint64_t bytes = op.kind == OpKind::Upload ? op.data.size() : op.bytes;
      QUIESCE_TRY(check_range_locked(op.target, BufferUsage::TransferTarget, op.target_offset, bytes, index, batch,
                                     false, true));
      const BufferRef target = batch.uses.back().slot->handle.ref();
      batch.commands.push_back(op.kind == OpKind::Upload ? Command::upload(op.data, target, op.target_offset)
                                                         : Command::zero(target, op.target_offset, bytes));
      return ok_status();
    }
    case OpKind::Replay: {
      if (capturing) return make_error(ErrorKind::InvalidArgument, "a graph cannot capture the replay of another");
      Result<GraphSlot*> graph = resolve_locked(op.graph);
      if (!graph.ok()) return graph.error();
      for (const engine_detail::BufferAccess& access : graph.value()->accesses) {
        batch.uses.push_back(access);
      }
      engine_detail::push_unique(batch.graphs, op.graph.serial);
      batch.commands.push_back(Command::replay(graph.value()->handle.ref()));
      return ok_status();
    }
  }
  return make_error(ErrorKind::InvalidArgument, "an operation has an unknown kind");
}

// Adds a wait on every unfinished submission of another queue that this batch must be ordered after.
template <Backend B, Env E>
void Engine<B, E>::add_dependencies_locked(QueueIndex queue, std::span<const SubmissionId> explicit_dependencies,
                                           PreparedBatch& batch) {
  auto needs_wait = [&](std::uint64_t serial) {
    auto found = submissions_.find(serial);
    return found != submissions_.end() && found->second.submitted && !found->second.terminal &&
           found->second.queue != queue;
  };
  for (const SubmissionId& dependency : explicit_dependencies) {
    if (dependency.epoch == epoch_ && needs_wait(dependency.serial)) {
      engine_detail::push_unique(batch.waits_on, dependency.serial);
    }
  }
  for (const engine_detail::BufferAccess& use : batch.uses) {
    if (!use.reads && !use.writes) continue;
    const BufferSlot& slot = *use.slot;
    // When every unfinished use is this queue's own, stream order covers them all: nothing to scan.
    if (!slot.used_by_other_queues(queue)) continue;
    for (const engine_detail::BufferUse& earlier : slot.uses) {
      const bool conflicts = earlier.writes || (use.writes && earlier.reads);
      // Work of the same queue is ordered already; the queue test spares the lookup of most uses.
      if (conflicts && earlier.queue != queue && needs_wait(earlier.submission)) {
        engine_detail::push_unique(batch.waits_on, earlier.submission);
      }
    }
  }
  // Replays of one executable never overlap (R13): order after its unfinished replays elsewhere.
  for (const std::uint64_t graph : batch.graphs) {
    for (const std::uint64_t replay : graphs_.at(graph).live_replays) {
      if (needs_wait(replay)) engine_detail::push_unique(batch.waits_on, replay);
    }
  }
  if (batch.waits_on.size() > 1) std::sort(batch.waits_on.begin(), batch.waits_on.end());
}

// Whether add_dependencies_locked could find a wait: an explicit dependency, a replay, or a buffer with an
// unfinished use on another queue. False means it would find none, so the common batch skips the call.
template <Backend B, Env E>
bool Engine<B, E>::may_wait_locked(QueueIndex queue, std::span<const SubmissionId> explicit_dependencies,
                                   const PreparedBatch& batch) const {
  if (!explicit_dependencies.empty() || !batch.graphs.empty()) return true;
  for (const engine_detail::BufferAccess& use : batch.uses) {
    if ((use.reads || use.writes) && use.slot->used_by_other_queues(queue)) return true;
  }
  return false;
}

template <Backend B, Env E>
void Engine<B, E>::pin_locked(std::uint64_t serial, Submission& submission, const PreparedBatch& batch) {
  for (const engine_detail::BufferAccess& use : batch.uses) {
    BufferSlot& slot = *use.slot;
    // The serial is new, so a use of it can only be one this loop appended: the last of the slot's uses.
    if (slot.uses.empty() || slot.uses.back().submission != serial) {
      engine_detail::BufferUse& added = slot.uses.emplace_back();  // in place, as append_access does
      added.submission = serial;
      added.queue = submission.queue;
      added.reads = use.reads;
      added.writes = use.writes;
      if (slot.uses_per_queue.size() <= submission.queue) slot.uses_per_queue.resize(submission.queue + 1U, 0);
      slot.uses_per_queue[submission.queue]++;
      submission.buffers.push_back(use.slot);
    } else {
      slot.uses.back().reads = slot.uses.back().reads || use.reads;
      slot.uses.back().writes = slot.uses.back().writes || use.writes;
    }
  }
  for (const auto& [program, slot] : batch.programs) {
    slot->submission_pins++;
    submission.programs.push_back(slot);
  }
  for (const std::uint64_t graph : batch.graphs) {
    graphs_.at(graph).live_replays.push_back(serial);
    submission.graphs.push_back(graph);
  }
  for (const std::uint64_t dependency : batch.waits_on) {
    submissions_.at(dependency).dependents++;
    submission.waits_on.push_back(dependency);
  }
}

template <Backend B, Env E>
void Engine<B, E>::unpin_locked(std::uint64_t serial, Submission& submission) {
  for (BufferSlot* pinned : submission.buffers) {
    BufferSlot& slot = *pinned;
    // pin_locked lists a submission once per buffer, in serial order, and submissions mostly retire oldest
    // first: the search stops near the front.
    auto& uses = slot.uses;
    const auto listed = std::find_if(uses.begin(), uses.end(),
                                     [&](const engine_detail::BufferUse& use) { return use.submission == serial; });
    if (listed == uses.end()) continue;
    assert(slot.uses_per_queue.at(submission.queue) > 0);
    uses.erase(listed);
    slot.uses_per_queue[submission.queue]--;
  }
  for (ProgramSlot* program : submission.programs) {
    assert(program->submission_pins > 0);
    program->submission_pins--;
  }
  for (const std::uint64_t graph : submission.graphs) engine_detail::erase_value(graphs_.at(graph).live_replays, serial);
  for (const std::uint64_t dependency : submission.waits_on) {
    auto found = submissions_.find(dependency);
    if (found != submissions_.end()) {
      assert(found->second.dependents > 0);
      found->second.dependents--;
    }
  }
  submission.buffers.clear();
  submission.programs.clear();
  submission.graphs.clear();
  submission.waits_on.clear();
}

template <Backend B, Env E>
void Engine<B, E>::queue_failure_locked(std::uint64_t serial, Submission& submission, FailureCause cause,
                                        const Error& error) {
  assert(!submission.failure_queued);
  submission.failure_queued = true;
  failures_.push_back(AsyncFailure{SubmissionId{serial, submission.epoch}, submission.queue, cause, error});
  counters_.failures_queued++;
}

template <Backend B, Env E>
Result<SubmissionId> Engine<B, E>::submit_locked(QueueIndex queue, std::span<const EngineOp> ops,
                                                 const SubmitRequest& request, bool fire_and_forget) {
  QUIESCE_TRY(ready_locked());
  if (queue >= queues_.size()) return make_error(ErrorKind::InvalidArgument, "the queue index is out of range");
  if (ops.empty()) return make_error(ErrorKind::InvalidArgument, "a batch needs at least one command");
  if (submissions_.size() >= options_.live_submissions_max) {
    return make_error(ErrorKind::Busy, "the engine's bound on live submissions is reached; flush or drain first");
  }
  if (failures_.size() >= options_.fate_history_max) {
    return make_error(ErrorKind::Busy, "too many asynchronous failures are queued; call flush() to take them");
  }
  // Scratch storage reused by every submit: the mutex is held and nothing below translates another batch.
  PreparedBatch& batch = scratch_batch_;
  prepare_batch_locked(ops, batch);
  for (std::size_t index = 0; index < ops.size(); ++index) QUIESCE_TRY(translate_op_locked(ops[index], index, batch, false));
  if (may_wait_locked(queue, request.depends_on, batch)) add_dependencies_locked(queue, request.depends_on, batch);
  // The waits go first; a batch that waits for nothing is submitted as translated, without a copy.
  if (!batch.waits_on.empty()) {
    std::vector<Command>& waits = scratch_commands_;
    waits.clear();
    waits.reserve(batch.waits_on.size() + batch.commands.size());
    for (const std::uint64_t dependency : batch.waits_on) waits.push_back(Command::wait(submissions_.at(dependency).event.ref()));
    waits.insert(waits.end(), batch.commands.begin(), batch.commands.end());
  }
  const std::vector<Command>& commands = batch.waits_on.empty() ? batch.commands : scratch_commands_;
  counters_.cross_queue_waits += batch.waits_on.size();

  const std::uint64_t serial = next_serial();
  Submission& submission = emplace_submission_locked(serial);
  submission.queue = queue;
  submission.epoch = epoch_;
  submission.fire_and_forget = fire_and_forget;
  submission.invocation = options_.invocation_base + ++invocation_counter_;
  submission.timing_requested = (request.timing || !profiles_.empty()) &&
                                has_capability(device_info_.capabilities, Capability::Profiling);
  // Written before pinning: the call below reads it whole, which is slow while its field stores are in flight.
  const SubmitOptions options{request.admission_timeout_ns, submission.timing_requested, submission.invocation};
  // Pinned before the first attempt so that progress between retries cannot release what the batch names.
  pin_locked(serial, submission, batch);
  SubmitResult result = options_.submit_attempts_max == 0
                            ? SubmitResult::rejected(make_error(ErrorKind::Internal, "no submit attempt was made"))
                            : backend_.submit(queues_[queue].handle, Batch(commands), options);
  for (std::uint32_t attempt = 0; attempt < options_.submit_attempts_max && result.status == SubmitStatus::Rejected;) {
    note_error_locked(result.error);
    if (lost_ || attempt + 1 == options_.submit_attempts_max) break;
    progress_locked(false);  // completions free queue slots before the exact retry
    if (lost_) break;
    ++attempt;
    counters_.submit_retries++;
    result = backend_.submit(queues_[queue].handle, Batch(commands), options);
  }
  if (result.status == SubmitStatus::Rejected) {
    // R3: nothing ran and nothing was retained.
    counters_.submits_rejected++;
    unpin_locked(serial, submission);
    erase_submission_locked(submissions_.find(serial));
    return result.error;
  }
  assert(result.event.valid());
  submission.event = std::move(result.event);
  submission.submitted = true;
  tally(ResourceKind::Events).created++;
  counters_.submissions++;
  for (auto& [token, window] : profiles_) window.submissions.push_back(serial);
  if (result.status == SubmitStatus::Indeterminate) {
    counters_.submits_indeterminate++;
    if (result.commands_enqueued < commands.size()) {
      counters_.submits_partial++;
      submission.partial = true;
    }
    submission.indeterminate = true;
    submission.error = result.error;
    note_error_locked(result.error);
    if (fire_and_forget) queue_failure_locked(serial, submission, FailureCause::IndeterminateSubmit, result.error);
  }
  return SubmissionId{serial, epoch_};
}

template <Backend B, Env E>
Result<SubmissionId> Engine<B, E>::submit(QueueIndex queue, std::span<const EngineOp> ops,
                                          const SubmitRequest& request) {
  Lock lock(mutex_);
  Result<SubmissionId> submitted = submit_locked(queue, ops, request, false);
  if (!lost_ && progress_after_submit_locked()) progress_locked(false);
  return submitted;
}

template <Backend B, Env E>
Result<SubmissionId> Engine<B, E>::launch(QueueIndex queue, ProgramId program, LaunchDims dims,
                                          std::span<const EngineBinding> bindings,
                                          std::span<const std::byte> parameters, LaunchMode mode) {
  const EngineOp op = EngineOp::launch(program, dims, bindings, parameters, mode);
  Lock lock(mutex_);
  Result<SubmissionId> submitted = submit_locked(queue, std::span<const EngineOp>(&op, 1), SubmitRequest{}, true);
  if (!lost_ && progress_after_submit_locked()) progress_locked(false);
  return submitted;
}

// A new submission record, at the back of the table since serials only grow.
template <Backend B, Env E>
engine_detail::Submission& Engine<B, E>::emplace_submission_locked(std::uint64_t serial) {
  return submissions_.emplace_back(serial);
}

// Removes a submission record (its event already destroyed, moved to quarantine, or never created). Returns
// the iterator after it.
template <Backend B, Env E>
typename Engine<B, E>::SubmissionTable::iterator Engine<B, E>::erase_submission_locked(
    typename SubmissionTable::iterator it) {
  return submissions_.erase(it);
}

template <Backend B, Env E>
bool Engine<B, E>::progress_after_submit_locked() {
  if (options_.submit_progress == SubmitProgress::EverySubmit) return true;
  if (release_requests_hint_ != 0 ||
      submissions_.size() * 2 >= static_cast<std::size_t>(options_.live_submissions_max)) {
    return true;
  }
  counters_.submits_unobserved++;
  return false;
}

template <Backend B, Env E>
SubmissionFate Engine<B, E>::poll(SubmissionId submission) {
  Lock lock(mutex_);
  auto live = submissions_.find(submission.serial);
  if (live != submissions_.end() && live->second.epoch == submission.epoch) {
    if (!live->second.terminal && !lost_ && has_context_) {
      observe_locked(submission.serial, live->second, backend_.poll_event(live->second.event));
      auto again = submissions_.find(submission.serial);
      if (again != submissions_.end()) return again->second.fate();
    } else {
      return live->second.fate();
    }
  }
  const engine_detail::FateRecord* record = fates_.find(submission.serial);
  return record == nullptr ? SubmissionFate::Unknown : record->fate;
}

template <Backend B, Env E>
Result<SubmissionReceipt> Engine<B, E>::wait(SubmissionId submission, std::uint64_t timeout_ns) {
  Lock lock(mutex_);
  auto live = submissions_.find(submission.serial);
  if (live != submissions_.end() && live->second.epoch == submission.epoch && has_context_ && !lost_) {
    Submission& found = live->second;
    if (!wait_terminal_locked(submission.serial, found, timeout_ns)) {
      if (lost_) return loss_error_;
      return make_error(ErrorKind::Timeout, "the submission's fence could not be proven quiescent in time");
    }
    return SubmissionReceipt{found.state, found.error, found.timing};
  }
  const engine_detail::FateRecord* record = fates_.find(submission.serial);
  if (record == nullptr) {
    return make_error(ErrorKind::InvalidArgument, "the submission is unknown, or its record was forgotten");
  }
  if (record->fate == SubmissionFate::Lost) return record->receipt.error;
  return record->receipt;
}

}  // namespace quiesce

// sim::Device: queues, batch validation, admission and staging.
//
// A submission is validated whole before anything is enqueued, so Rejected always means that nothing ran
// and nothing was retained (R3). Staging copies what the batch borrows (bindings, parameters, upload bytes)
// into the queue's ring, resolves every buffer to its address and stamps each command with its vector clock.
#include <cassert>
#include <cstring>

#include "device_internal.h"
#include "quiesce/sim/device.h"

namespace quiesce::sim {

using namespace internal;  // NOLINT(google-build-using-namespace)

namespace {

constexpr Error kOutOfRange =
    sim_error(ErrorKind::InvalidArgument, Code::InvalidValue, "a command's byte range does not fit inside its buffer");

}  // namespace

Result<Queue> Device::create_queue(const Context& context, const QueueDesc& desc) {
  ++operations_;
  const auto fail = [&](const Error& error) -> Result<Queue> {
    note(kCallCreateQueue, context.id(), &error);
    return error;
  };
  ContextRecord* record = find_context(context.id(), context.epoch());
  if (record == nullptr) return fail(kInvalidHandle);
  if (record->lost) return fail(kDeviceLost);
  if (desc.flags != 0) return fail(sim_error(ErrorKind::Unsupported, Code::NotSupported, "queue flags are not supported"));
  const auto used = static_cast<std::uint32_t>(__builtin_popcount(agents_in_use_)) - 1;
  if (used >= config_.queues_max) {
    return fail(sim_error(ErrorKind::OutOfMemory, Code::QueuesExhausted, "the device already has queues_max queues", true));
  }
  const auto agent = static_cast<std::uint32_t>(__builtin_ctz(~agents_in_use_));
  agents_in_use_ |= 1U << agent;
  const std::uint64_t id = queues_.acquire();
  QueueRecord& queue = queues_.at(SlotTable<QueueRecord>::slot_of(id));
  queue.context_id = context.id();
  queue.agent = agent;
  if (queue.ring.size() != config_.queue_depth_max) queue.ring.resize(config_.queue_depth_max);
  for (BatchRecord& batch : queue.ring) batch.store.clear();
  queue.head = queue.count = 0;
  queue.batches_submitted = queue.batches_retired = 0;
  queue.run = QueueRun::Idle;
  queue.granted = false;
  queue.pump_pending = false;
  queue.clock = host_clock_;
  queue.clock.ticks[agent] = agent_ticks_[agent];
  queue.capturing = queue.capture_invalidated = false;
  queue.capture.clear();
  record->queues++;
  note(kCallCreateQueue, id, nullptr);
  return Queue(id, record->epoch);
}

ReleaseResult<Queue> Device::destroy_queue(Queue&& queue) {
  ++operations_;
  QueueRecord* record = find_queue(queue.ref());
  if (record == nullptr) {
    note(kCallDestroyQueue, queue.id(), &kInvalidHandle);
    return ReleaseResult<Queue>::rejected(std::move(queue), kInvalidHandle);
  }
  ContextRecord* context = &context_of(record->context_id);
  if (context->lost) {
    note(kCallDestroyQueue, queue.id(), &kDeviceLost);
    Queue consumed = std::move(queue);
    return ReleaseResult<Queue>::indeterminate(kDeviceLost);
  }
  if (record->count != 0 || record->capturing) {
    note(kCallDestroyQueue, queue.id(), &kChildrenLive);
    return ReleaseResult<Queue>::rejected(std::move(queue), kChildrenLive);
  }
  agents_in_use_ &= ~(1U << record->agent);
  queues_.release(SlotTable<QueueRecord>::slot_of(queue.id()));
  context->queues--;
  note(kCallDestroyQueue, queue.id(), nullptr);
  Queue consumed = std::move(queue);
  return ReleaseResult<Queue>::released();
}

QueueState Device::queue_state(const Queue& queue) {
  ++operations_;
  const QueueRecord* record = find_queue(queue.ref());
  if (record == nullptr) {
    note(kCallQueueState, queue.id(), &kInvalidHandle);
    return QueueState{};
  }
  note(kCallQueueState, queue.id(), nullptr);
  return QueueState{record->count, record->capturing, context_of(record->context_id).lost};
}

SubmitResult Device::submit(const Queue& queue, Batch batch, SubmitOptions options) {
  ++operations_;
  // The host cost comes first: what follows sees the state after it, with no virtual time in between.
  charge_host_ns(config_.costs.event_record_ns);
  const auto reject = [&](const Error& error) {
    note(kCallSubmit, queue.id(), &error);
    return SubmitResult::rejected(error);
  };
  QueueRecord* record = find_queue(queue.ref());
  if (record == nullptr) return reject(kInvalidHandle);
  if (context_of(record->context_id).lost) return reject(kDeviceLost);
  if (record->capturing) return reject(kQueueCapturing);
  if (options.timing && !has_capability(Capability::Profiling)) {
    return reject(sim_error(ErrorKind::Unsupported, Code::NotSupported, "profiling is switched off on this device"));
  }
  const std::uint64_t context_id = record->context_id;
  if (const Status valid = validate_batch(context_id, *record, batch, false); !valid.ok()) return reject(valid.error());
  if (record->count == config_.queue_depth_max) {
    if (const Status admitted = admit(queue, options.admission_timeout_ns); !admitted.ok()) {
      return reject(admitted.error());
    }
    record = &queues_.get(queue.id());  // admit() proved it still resolves
    // Virtual time passed: what the batch names may have changed.
    if (const Status valid = validate_batch(context_id, *record, batch, false); !valid.ok()) return reject(valid.error());
  }
  assert(record != nullptr && record->count < config_.queue_depth_max);
  const std::uint64_t event_id = stage_batch(queue.id(), *record, batch, options);
  note(kCallSubmit, event_id, nullptr);
  schedule_pump(queue.id());
  drain();
  return SubmitResult::submitted(Event(event_id, context_of(context_id).epoch),
                                 static_cast<std::uint32_t>(batch.size()));
}

// Enqueues a validated batch behind the queue's others and creates its event; returns the event's id.
std::uint64_t Device::stage_batch(std::uint64_t queue_id, QueueRecord& queue, Batch batch, SubmitOptions options) {
  const std::uint64_t context_id = queue.context_id;
  const std::uint64_t event_id = events_.acquire();
  EventRecord& event = events_.at(SlotTable<EventRecord>::slot_of(event_id));
  event.context_id = context_id;
  event.queue_id = queue_id;
  event.state = quiesce::EventState::Pending;
  event.error = {};
  event.timing = options.timing;
  event.started = false;
  event.receipt = TimingReceipt{clock_.now_ns(), 0, 0};
  context_of(context_id).events++;

  const std::uint32_t index = (queue.head + queue.count) % config_.queue_depth_max;
  BatchRecord& slot = queue.ring[index];
  slot.event_id = event_id;
  slot.invocation = options.invocation;
  slot.store.clear();
  slot.next = slot.replay_cursor = 0;
  slot.started = slot.cancelled = false;
  queue.clock.join(host_clock_);  // everything the host knows happened before this batch
  for (const Command& command : batch) stage_command(command, slot.store, &queue, false);
  event.end_clock = queue.clock;
  queue.count++;
  queue.batches_submitted++;
  assert(queue.count <= config_.queue_depth_max);
  return event_id;
}

// Waits (through the Waiter) up to `timeout_ns` for the full queue to drop below its depth limit.
Status Device::admit(const Queue& queue, std::uint64_t timeout_ns) {
  struct Admission {
    const Device* device;
    std::uint64_t queue_id;
  } admission{this, queue.id()};
  const auto admitted = [](const void* raw) {
    const auto* self = static_cast<const Admission*>(raw);
    const QueueRecord* waiting = self->device->queues_.find(self->queue_id);
    return waiting == nullptr || waiting->count < self->device->config_.queue_depth_max ||
           self->device->context_lost(waiting->context_id);
  };
  (void)waiter_->wait_until(saturating_add(clock_.now_ns(), timeout_ns), admitted, &admission);
  const QueueRecord* record = find_queue(queue.ref());
  if (record == nullptr) return kInvalidHandle;
  if (context_lost(record->context_id)) return kDeviceLost;
  if (record->count == config_.queue_depth_max) {
    return sim_error(ErrorKind::Timeout, Code::QueueFull,
                     "the queue stayed at its depth limit for the whole admission timeout", true);
  }
  assert(record->count < config_.queue_depth_max);
  return ok_status();
}

Status Device::validate_batch(std::uint64_t context_id, const QueueRecord& /*queue*/, Batch batch, bool capturing) {
  if (batch.empty()) return sim_error(ErrorKind::InvalidArgument, Code::InvalidValue, "a batch must not be empty");
  if (batch.size() > config_.batch_commands_max) {
    return sim_error(ErrorKind::InvalidArgument, Code::InvalidValue, "the batch has more than batch_commands_max commands");
  }
  for (const Command& command : batch) QUIESCE_TRY(validate_command(context_id, command, capturing));
  return ok_status();
}

Status Device::validate_buffer_range(std::uint64_t context_id, BufferRef ref, BufferUsage needed, std::uint64_t offset,
                                     std::uint64_t bytes) {
  const BufferRecord* buffer = find_buffer(ref);
  if (buffer == nullptr || buffer->context_id != context_id) return kInvalidHandle;
  if (!has_usage(buffer->usage, needed)) {
    return sim_error(ErrorKind::PermissionDenied, Code::InvalidValue,
                     "a transfer needs TransferSource usage on its source and TransferTarget on its target");
  }
  if (offset > buffer->bytes || bytes > buffer->bytes - offset) return kOutOfRange;
  return ok_status();
}

Status Device::validate_command(std::uint64_t context_id, const Command& command, bool capturing) {
  switch (command.kind) {
    case CommandKind::Launch: {
      const ProgramRecord* program = find_program(command.program);
      if (program == nullptr || program->context_id != context_id) return kInvalidHandle;
      const LaunchDims& dims = command.dims;
      if (dims.grid_x == 0 || dims.grid_y == 0 || dims.grid_z == 0 || dims.block_x == 0 || dims.block_y == 0 ||
          dims.block_z == 0 || dims.threads_per_block() > config_.launch_threads_max) {
        return sim_error(ErrorKind::InvalidArgument, Code::InvalidValue,
                         "the launch configuration is invalid: a zero dimension or too many threads per block");
      }
      if (command.bindings.size() > config_.bindings_max || command.data.size() > config_.parameter_bytes_max) {
        return sim_error(ErrorKind::InvalidArgument, Code::InvalidValue,
                         "the launch has more bindings or parameter bytes than the device allows");
      }
      binding_sizes_.clear();
      for (const Binding& binding : command.bindings) {
        const BufferRecord* buffer = find_buffer(binding.buffer);
        if (buffer == nullptr || buffer->context_id != context_id) return kInvalidHandle;
        if (!access_allowed(binding.access, buffer->usage)) {
          return sim_error(ErrorKind::PermissionDenied, Code::InvalidValue,
                           "a binding's access mode is not allowed by its buffer's usage");
        }
        binding_sizes_.push_back(buffer->bytes);
      }
      if (const char* problem = check_kernel_abi(program->kernel, binding_sizes_, command.data.size())) {
        return sim_error(ErrorKind::InvalidArgument, Code::InvalidValue, problem);
      }
      return ok_status();
    }
    case CommandKind::Copy:
      QUIESCE_TRY(validate_buffer_range(context_id, command.source, BufferUsage::TransferSource, command.source_offset,
                                        command.bytes));
      return validate_buffer_range(context_id, command.target, BufferUsage::TransferTarget, command.target_offset,
                                   command.bytes);
    case CommandKind::Upload:
      if (command.data.size() > config_.upload_bytes_max) {
        return sim_error(ErrorKind::InvalidArgument, Code::InvalidValue, "the upload exceeds upload_bytes_max");
      }
      return validate_buffer_range(context_id, command.target, BufferUsage::TransferTarget, command.target_offset,
                                   command.data.size());
    case CommandKind::Zero:
      return validate_buffer_range(context_id, command.target, BufferUsage::TransferTarget, command.target_offset,
                                   command.bytes);
    case CommandKind::Replay: {
      if (!has_capability(Capability::ReusableExecutables)) {
        return sim_error(ErrorKind::Unsupported, Code::NotSupported, "reusable executables are switched off");
      }
      if (capturing) {
        return sim_error(ErrorKind::InvalidArgument, Code::StreamCaptureUnsupported, "a capture cannot record a replay");
      }
      const ExecutableRecord* executable = find_executable(command.executable);
      if (executable == nullptr || executable->context_id != context_id) return kInvalidHandle;
      return ok_status();
    }
    case CommandKind::Wait: {
      if (capturing) {
        return sim_error(ErrorKind::InvalidArgument, Code::StreamCaptureUnsupported,
                         "a capture cannot record a wait for an event outside it");
      }
      const EventRecord* event = find_event(command.event);
      if (event == nullptr || event->context_id != context_id) return kInvalidHandle;
      return ok_status();
    }
  }
  return sim_error(ErrorKind::InvalidArgument, Code::InvalidValue, "the command kind is unknown");
}

ResolvedBuffer Device::resolve_buffer(BufferRef ref) {
  if (!ref.valid()) return ResolvedBuffer{};
  const BufferRecord* buffer = find_buffer(ref);
  return buffer == nullptr ? ResolvedBuffer{} : ResolvedBuffer{ref.id, buffer->address, buffer->bytes};
}

// Copies a validated command into `store`. With a queue it is real work: resources count it as in flight
// and it gets a tick and clock. Without one it is being captured: `pin` pins its resources instead.
void Device::stage_command(const Command& command, CommandStore& store, QueueRecord* queue, bool pin) {
  // Built where it is kept: a staged command is some 270 bytes, and a copy of one just written on the stack
  // cost a block move and a stalled load. Nothing below appends to store.commands.
  StagedCommand& staged = store.commands.emplace_back(StagedCommand::UnsetClock{});
  staged.kind = command.kind;
  staged.mode = command.mode;
  staged.source = resolve_buffer(command.source);
  staged.target = resolve_buffer(command.target);
  staged.source_offset = command.source_offset;
  staged.target_offset = command.target_offset;
  staged.bytes = command.kind == CommandKind::Upload ? command.data.size() : command.bytes;
  const auto reference = [&](std::uint64_t buffer_id) {
    BufferRecord* buffer = buffers_.find(buffer_id);
    if (buffer == nullptr) return;
    if (pin) buffer->pins++; else buffer->in_flight++;
  };
  if (command.kind == CommandKind::Launch) {
    ProgramRecord& program = programs_.get(command.program.id);
    staged.kernel = program.kernel;
    staged.program_id = command.program.id;
    if (pin) program.pins++; else program.in_flight++;
    staged.bindings_begin = static_cast<std::uint32_t>(store.bindings.size());
    staged.bindings_count = static_cast<std::uint32_t>(command.bindings.size());
    for (const Binding& binding : command.bindings) {
      store.bindings.push_back(ResolvedBinding{resolve_buffer(binding.buffer), binding.access});
      reference(binding.buffer.id);
    }
  }
  if (command.kind == CommandKind::Launch || command.kind == CommandKind::Upload) {
    staged.data_begin = store.data.size();
    staged.data_size = command.data.size();
    store.data.insert(store.data.end(), command.data.begin(), command.data.end());
  }
  reference(staged.source.id);
  reference(staged.target.id);
  if (queue != nullptr) {
    if (command.kind == CommandKind::Wait) {
      staged.wait_event_id = command.event.id;
      queue->clock.join(events_.get(command.event.id).end_clock);
    }
    if (command.kind == CommandKind::Replay) {
      ExecutableRecord& executable = executables_.get(command.executable.id);
      staged.executable_id = command.executable.id;
      staged.replay_ticket = executable.tickets_issued++;
      executable.replays_in_flight++;
      queue->clock.join(executable.last_replay_clock);
    }
    staged.tick = ++agent_ticks_[queue->agent];
    // The clock is copied before the queue's own tick is stored into it, and the tick set in both: a copy
    // right after that one narrow store would wait for it.
    staged.clock = queue->clock;
    staged.clock.ticks[queue->agent] = staged.tick;
    queue->clock.ticks[queue->agent] = staged.tick;
    if (command.kind == CommandKind::Replay) executables_.get(command.executable.id).last_replay_clock = queue->clock;
  } else {
    staged.clock = VectorClock{};  // a captured command runs with the clock of the Replay that runs it
  }
}

// Drops a staged command's references when it finishes or is skipped (pinned: when its capture dies).
void Device::unreference(const StagedCommand& command, const CommandStore& store, bool pinned) {
  const auto drop = [&](std::uint64_t buffer_id) {
    BufferRecord* buffer = buffers_.find(buffer_id);
    if (buffer == nullptr) return;
    if (pinned) buffer->pins--; else buffer->in_flight--;
  };
  drop(command.source.id);
  drop(command.target.id);
  for (std::uint32_t index = 0; index < command.bindings_count; ++index) {
    drop(store.bindings[command.bindings_begin + index].buffer.id);
  }
  if (command.kind == CommandKind::Launch) {
    if (ProgramRecord* program = programs_.find(command.program_id)) {
      if (pinned) program->pins--; else program->in_flight--;
    }
  }
  if (!pinned && command.kind == CommandKind::Replay) {
    if (ExecutableRecord* executable = executables_.find(command.executable_id)) executable->replays_in_flight--;
  }
}

}  // namespace quiesce::sim

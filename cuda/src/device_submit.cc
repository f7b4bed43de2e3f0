// cuda::Device: queues (non-blocking streams), command validation and enqueue, submit with partial-submit
// detection, queue synchronization, and graphs by stream capture.
#include <algorithm>
#include <cassert>

#include "device_internal.h"
#include "quiesce/cuda/kernels.h"

namespace quiesce::cuda {

using detail::BufferSlot;
using detail::ContextSlot;
using detail::EventSlot;
using detail::ExecutableSlot;
using detail::ProgramSlot;
using detail::QueueSlot;

// ---- queues ----

Result<Queue> Device::create_queue(const Context& context, QueueDesc desc) {
  ContextSlot* owner = live_context(context.id(), context.epoch());
  if (owner == nullptr) return make_error(ErrorKind::InvalidArgument, "the context handle does not name an open context");
  if (desc.flags != 0) return make_error(ErrorKind::Unsupported, "queue flags are not supported by the CUDA backend");
  QUIESCE_TRY(enter(context.id()));
  int least = 0;
  int greatest = 0;
  if (api().cuCtxGetStreamPriorityRange(&least, &greatest) != CUDA_SUCCESS) least = greatest = 0;
  // CUDA's priorities run from `least` (0) down to `greatest` (negative): a hint, clamped into range.
  const int priority = std::clamp(desc.priority, std::min(least, greatest), std::max(least, greatest));
  QueueSlot slot;
  slot.context_id = context.id();
  const CUresult created = api().cuStreamCreateWithPriority(&slot.stream, CU_STREAM_NON_BLOCKING, priority);
  if (created != CUDA_SUCCESS) return fail(*owner, created, "cuStreamCreateWithPriority failed");
  CUstream stream = slot.stream;
  const std::optional<std::uint64_t> id = queues_.insert(std::move(slot));
  if (!id) {
    (void)api().cuStreamDestroy(stream);
    return make_error(ErrorKind::OutOfMemory, "the CUDA backend's queue table is full (queues_max)");
  }
  owner->children++;
  return Queue(*id, context.epoch());
}

ReleaseResult<Queue> Device::destroy_queue(Queue&& queue_in) {
  Queue queue = std::move(queue_in);  // consumed on every path; a rejection hands it back
  QueueSlot* slot = resolve(queues_, queue.id(), queue.epoch());
  if (slot == nullptr) {
    return ReleaseResult<Queue>::rejected(std::move(queue),
                                          make_error(ErrorKind::InvalidArgument, "the queue handle does not name a live queue"));
  }
  ContextSlot* context = &contexts_.get(slot->context_id);
  const std::uint64_t context_id = slot->context_id;
  if (context->lost) {
    queues_.erase(queue.id());
    release_child(context_id);
    return ReleaseResult<Queue>::indeterminate(context->lost_error);
  }
  if (slot->capturing) {
    return ReleaseResult<Queue>::rejected(std::move(queue),
                                          make_error(ErrorKind::Busy, "the queue is capturing: end the capture first", true));
  }
  prune_in_flight(*slot);
  if (!slot->in_flight.empty()) {
    // cuStreamDestroy returns at once with work pending, which would prove nothing about quiescence.
    return ReleaseResult<Queue>::rejected(std::move(queue),
                                          make_error(ErrorKind::Busy, "the queue has batches in flight", true));
  }
  bool orders_buffers = false;
  const std::uint64_t queue_id = queue.id();
  buffers_.for_each([&](std::uint64_t, const BufferSlot& buffer) { orders_buffers |= buffer.queue_id == queue_id; });
  if (orders_buffers) {
    return ReleaseResult<Queue>::rejected(
        std::move(queue), make_error(ErrorKind::Busy, "stream-ordered buffers are still ordered on this queue", true));
  }
  auto entered = enter(context_id);
  if (!entered.ok()) return ReleaseResult<Queue>::rejected(std::move(queue), entered.error());
  return_event(*context, slot->probe, false);
  slot->probe = nullptr;
  const CUresult destroyed = api().cuStreamDestroy(slot->stream);
  queues_.erase(queue_id);
  release_child(context_id);
  if (destroyed != CUDA_SUCCESS) return ReleaseResult<Queue>::indeterminate(fail(*context, destroyed, "cuStreamDestroy failed"));
  return ReleaseResult<Queue>::released();
}

void Device::prune_in_flight(QueueSlot& queue) {
  std::size_t kept = 0;
  for (const std::uint64_t event_id : queue.in_flight) {
    EventSlot* event = events_.find(event_id);
    const bool done = event == nullptr || is_terminal(observe(event_id, *event).state);
    if (!done) queue.in_flight[kept++] = event_id;
  }
  queue.in_flight.resize(kept);
}

QueueState Device::queue_state(const Queue& queue) {
  QueueSlot* slot = resolve(queues_, queue.id(), queue.epoch());
  if (slot == nullptr) return QueueState{0, false, true};
  const ContextSlot* context = &contexts_.get(slot->context_id);
  if (!context->lost) prune_in_flight(*slot);
  return QueueState{static_cast<std::uint32_t>(slot->in_flight.size()), slot->capturing, context->lost};
}

// ---- validation: everything that can be checked is checked before anything is enqueued ----

Status Device::validate_launch(const QueueSlot& queue, std::uint32_t queue_epoch, const Command& command) {
  const ProgramSlot* program = child_of(programs_, queue, queue_epoch, command.program.id, command.program.epoch);
  if (program == nullptr) return make_error(ErrorKind::InvalidArgument, "the launch names no loaded program of the queue's context");
  if (command.bindings.size() > info_.limits.bindings_max) {
    return make_error(ErrorKind::InvalidArgument, "the launch has more bindings than bindings_max");
  }
  if (command.data.size() > info_.limits.parameter_bytes_max) {
    return make_error(ErrorKind::InvalidArgument, "the launch's parameter bytes exceed parameter_bytes_max");
  }
  if (command.dims.grid_x == 0 || command.dims.grid_y == 0 || command.dims.grid_z == 0 ||
      command.dims.threads_per_block() == 0) {
    return make_error(ErrorKind::InvalidArgument, "a launch dimension is zero");
  }
  const BuiltinKernel* kernel = program->builtin;
  for (std::size_t index = 0; index < command.bindings.size(); ++index) {
    const Binding& binding = command.bindings[index];
    const BufferSlot* buffer = child_of(buffers_, queue, queue_epoch, binding.buffer.id, binding.buffer.epoch);
    if (buffer == nullptr) return make_error(ErrorKind::InvalidArgument, "a binding names no live buffer of the queue's context");
    if (!access_allowed(binding.access, buffer->info.usage)) {
      return make_error(ErrorKind::PermissionDenied, "a binding's access mode is not allowed by its buffer's usage");
    }
    if (kernel != nullptr && index < kBuiltinBindingsMax) {
      const bool reads = ((kernel->reads_mask >> index) & 1U) != 0;
      const bool writes = ((kernel->writes_mask >> index) & 1U) != 0;
      if ((reads && !access_reads(binding.access)) || (writes && !access_writes(binding.access))) {
        return make_error(ErrorKind::PermissionDenied, "a binding's access mode does not cover what the builtin kernel does with it");
      }
      if (buffer->info.bytes < kernel->binding_bytes_min[index]) {
        return make_error(ErrorKind::InvalidArgument, "a binding is smaller than the builtin kernel needs");
      }
    }
  }
  if (kernel != nullptr) {
    if (!kernel->any_binding_count && command.bindings.size() != kernel->binding_count) {
      return make_error(ErrorKind::InvalidArgument, "the builtin kernel takes a different number of bindings");
    }
    if (command.data.size() != kernel->parameter_bytes) {
      return make_error(ErrorKind::InvalidArgument, "the builtin kernel takes a different number of parameter bytes");
    }
  } else if (program->parameter_bytes_known && 16 * command.bindings.size() + command.data.size() != program->parameter_bytes) {
    return make_error(ErrorKind::InvalidArgument, "the bindings and parameter bytes do not match the kernel's parameter block");
  }
  return ok_status();
}

Status Device::validate_command(const QueueSlot& queue, std::uint32_t queue_epoch, const Command& command,
                                bool capturing) {
  const auto live_buffer = [&](BufferRef ref) -> const BufferSlot* {
    return child_of(buffers_, queue, queue_epoch, ref.id, ref.epoch);
  };
  switch (command.kind) {
    case CommandKind::Launch:
      return validate_launch(queue, queue_epoch, command);
    case CommandKind::Copy: {
      const BufferSlot* source = live_buffer(command.source);
      const BufferSlot* target = live_buffer(command.target);
      if (source == nullptr || target == nullptr) return make_error(ErrorKind::InvalidArgument, "a copy names a buffer that is not live in the queue's context");
      if (!has_usage(source->info.usage, BufferUsage::TransferSource) || !has_usage(target->info.usage, BufferUsage::TransferTarget)) {
        return make_error(ErrorKind::PermissionDenied, "a copy needs TransferSource on its source and TransferTarget on its target");
      }
      if (!range_within(command.source_offset, command.bytes, source->info.bytes) ||
          !range_within(command.target_offset, command.bytes, target->info.bytes)) {
        return make_error(ErrorKind::InvalidArgument, "a copy reaches past the end of a buffer");
      }
      return ok_status();
    }
    case CommandKind::Upload:
    case CommandKind::Zero: {
      if (capturing && command.kind == CommandKind::Upload) {
        return make_error(ErrorKind::Unsupported, "an upload cannot be captured: its host bytes would be read again at every replay");
      }
      const BufferSlot* target = live_buffer(command.target);
      if (target == nullptr) return make_error(ErrorKind::InvalidArgument, "the command's target is not a live buffer of the queue's context");
      if (!has_usage(target->info.usage, BufferUsage::TransferTarget)) {
        return make_error(ErrorKind::PermissionDenied, "the command's target lacks TransferTarget usage");
      }
      const std::uint64_t bytes = command.kind == CommandKind::Upload ? command.data.size() : command.bytes;
      if (!range_within(command.target_offset, bytes, target->info.bytes)) {
        return make_error(ErrorKind::InvalidArgument, "the command reaches past the end of its target buffer");
      }
      return ok_status();
    }
    case CommandKind::Replay: {
      if (capturing) return make_error(ErrorKind::Unsupported, "replaying an executable inside a capture is not supported");
      const ExecutableSlot* executable =
          child_of(executables_, queue, queue_epoch, command.executable.id, command.executable.epoch);
      if (executable == nullptr) {
        return make_error(ErrorKind::InvalidArgument, "the replay names no live executable of the queue's context");
      }
      return ok_status();
    }
    case CommandKind::Wait: {
      if (capturing) return make_error(ErrorKind::Unsupported, "waiting on an outside event inside a capture is not supported");
      const EventSlot* event = child_of(events_, queue, queue_epoch, command.event.id, command.event.epoch);
      if (event == nullptr) {
        return make_error(ErrorKind::InvalidArgument, "the wait names no live event of the queue's context");
      }
      if (!event->terminal && !event->recorded && !event->on_demand) {
        return make_error(ErrorKind::InvalidArgument, "the waited-on event was never recorded, so there is nothing to wait on");
      }
      return ok_status();
    }
  }
  return make_error(ErrorKind::InvalidArgument, "the command kind is unknown");
}

// ---- enqueue: one command onto the queue's stream; the caller validated it ----

CUresult Device::enqueue_command(QueueSlot& queue, const Command& command) {
  const DriverFunctions& f = api();
  switch (command.kind) {
    case CommandKind::Launch: {
      if (command.mode == LaunchMode::DryRun) return CUDA_SUCCESS;  // validated and resolved; no bytes change
      const ProgramSlot* program = &programs_.get(command.program.id);
      // delay ignores its bindings, and its parameter block holds its parameters alone.
      const bool pack_bindings = program->builtin == nullptr || !program->builtin->any_binding_count;
      const std::size_t binding_bytes = pack_bindings ? 16 * command.bindings.size() : 0;
      std::size_t block_bytes = binding_bytes + command.data.size();
      launch_parameters_.resize(std::max<std::size_t>(block_bytes, 16));
      std::byte* cursor = launch_parameters_.data();
      for (const Binding& binding : pack_bindings ? command.bindings : std::span<const Binding>{}) {
        const BufferSlot* buffer = &buffers_.get(binding.buffer.id);
        // Two words stored one at a time: a pair built on the stack and copied whole stalls on the read.
        const std::uint64_t pointer = buffer->pointer;
        const std::uint64_t bytes = buffer->info.bytes;
        std::memcpy(cursor, &pointer, sizeof(pointer));
        std::memcpy(cursor + sizeof(pointer), &bytes, sizeof(bytes));
        cursor += 2 * sizeof(std::uint64_t);
      }
      if (!command.data.empty()) std::memcpy(cursor, command.data.data(), command.data.size());
      void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, launch_parameters_.data(), CU_LAUNCH_PARAM_BUFFER_SIZE,
                       &block_bytes, CU_LAUNCH_PARAM_END};
      const LaunchDims& dims = command.dims;
      return f.cuLaunchKernel(program->function, dims.grid_x, dims.grid_y, dims.grid_z, dims.block_x, dims.block_y,
                              dims.block_z, 0, queue.stream, nullptr, block_bytes != 0 ? extra : nullptr);
    }
    case CommandKind::Copy: {
      if (command.bytes == 0) return CUDA_SUCCESS;
      const BufferSlot* source = &buffers_.get(command.source.id);
      const BufferSlot* target = &buffers_.get(command.target.id);
      return f.cuMemcpyDtoDAsync(target->pointer + command.target_offset, source->pointer + command.source_offset,
                                 command.bytes, queue.stream);
    }
    case CommandKind::Upload: {
      if (command.data.empty()) return CUDA_SUCCESS;
      const BufferSlot* target = &buffers_.get(command.target.id);
      // From pageable memory the driver stages the bytes before returning: captured at submit, as promised.
      return f.cuMemcpyHtoDAsync(target->pointer + command.target_offset, command.data.data(), command.data.size(),
                                 queue.stream);
    }
    case CommandKind::Zero: {
      if (command.bytes == 0) return CUDA_SUCCESS;
      const BufferSlot* target = &buffers_.get(command.target.id);
      return f.cuMemsetD8Async(target->pointer + command.target_offset, 0, command.bytes, queue.stream);
    }
    case CommandKind::Replay: {
      const ExecutableSlot* executable = &executables_.get(command.executable.id);
      return f.cuGraphLaunch(executable->graph, queue.stream);
    }
    case CommandKind::Wait: {
      const EventSlot* event = &events_.get(command.event.id);
      if (event->terminal) return CUDA_SUCCESS;  // the dependency is already met
      if (event->on_demand) {
        QueueSlot* source = queues_.find(event->queue_id);
        if (source == nullptr) return CUDA_ERROR_INVALID_HANDLE;
        if (source->completed_sequence >= event->sequence) return CUDA_SUCCESS;
        const CUresult covered = cover_with_probe(contexts_.get(queue.context_id), *source, event->sequence);
        if (covered != CUDA_SUCCESS) return covered;
        return f.cuStreamWaitEvent(queue.stream, source->probe, 0);  // its state now: later records do not matter
      }
      return f.cuStreamWaitEvent(queue.stream, event->done, 0);
    }
  }
  return CUDA_ERROR_INVALID_VALUE;
}

// ---- submit ----

// Waits (polling, paced by PollPacer) until the queue has room for one more batch or the admission timeout passes.
bool Device::admit(QueueSlot& queue, std::uint64_t admission_timeout_ns) {
  if (queue.in_flight.size() < options_.queue_depth_max) return true;
  const PollPacer pacer(options_, admission_timeout_ns);
  for (;;) {
    prune_in_flight(queue);
    if (queue.in_flight.size() < options_.queue_depth_max) return true;
    if (!pacer.before_deadline()) return false;
    pacer.pause();
  }
}

SubmitResult Device::submit(const Queue& queue, Batch batch, SubmitOptions options) {
  // resolve() and enter() in one: the queue's context is looked up once.
  QueueSlot* slot = queues_.find(queue.id());
  ContextSlot* owner = slot != nullptr ? contexts_.find(slot->context_id) : nullptr;
  if (owner == nullptr || owner->epoch != queue.epoch()) {
    return SubmitResult::rejected(make_error(ErrorKind::InvalidArgument, "the queue handle does not name a live queue"));
  }
  if (batch.empty()) return SubmitResult::rejected(make_error(ErrorKind::InvalidArgument, "a batch must hold at least one command"));
  if (batch.size() > info_.limits.batch_commands_max) {
    return SubmitResult::rejected(make_error(ErrorKind::InvalidArgument, "the batch holds more commands than batch_commands_max"));
  }
  if (slot->capturing) {
    return SubmitResult::rejected(make_error(ErrorKind::Busy, "the queue is capturing: submit after end_capture", true));
  }
  const Status entered = make_current(*owner);
  if (!entered.ok()) return SubmitResult::rejected(entered.error());
  ContextSlot& context = *owner;
  bool replays = false;  // whether an executable's last replay must be noted below
  for (const Command& command : batch) {
    const Status valid = validate_command(*slot, queue.epoch(), command, false);
    if (!valid.ok()) return SubmitResult::rejected(valid.error());
    replays = replays || command.kind == CommandKind::Replay;
  }
  if (slot->in_flight.size() >= options_.queue_depth_max && !admit(*slot, options.admission_timeout_ns)) {
    return SubmitResult::rejected(make_error(ErrorKind::Busy, "the queue stayed full until the admission timeout", true));
  }

  // The event's slot is taken first, so running out of slots is a rejection, never lost work. On-demand
  // completion takes no CUDA event here (a partial submit takes one below).
  const bool timing = options.timing;
  const bool on_demand = options_.completion == CompletionSignal::OnDemand && !timing;
  CUevent done = nullptr;
  if (!on_demand) {
    Result<CUevent> taken = take_event(context, timing);
    if (!taken.ok()) return SubmitResult::rejected(taken.error());
    done = *taken;
  }
  const std::optional<std::uint64_t> id = events_.insert_default();  // filled in place: no slot is copied
  if (!id) {
    return_event(context, done, timing);
    return SubmitResult::rejected(make_error(ErrorKind::OutOfMemory, "the CUDA backend's event table is full", true));
  }
  EventSlot& event = *events_.find(*id);
  event.context_id = slot->context_id;
  event.queue_id = queue.id();
  event.stream = slot->stream;
  event.submitted_ns = timing ? host_now_ns() : 0;  // read by timing receipts alone
  event.done = done;
  const auto give_up = [&](const Error& why) {
    return_event(context, event.done, timing);
    return_event(context, event.timing_start, true);
    events_.erase(*id);
    return SubmitResult::rejected(why);
  };
  if (timing) {
    Result<CUevent> start = take_event(context, true);
    if (!start.ok()) return give_up(start.error());
    event.timing_start = *start;
    const CUresult recorded = api().cuEventRecord(*start, slot->stream);
    if (recorded != CUDA_SUCCESS) return give_up(fail(context, recorded, "recording the timing start event failed"));
  }

  // Enqueue in order. `really_enqueued` counts commands that reached the stream (dry runs do not).
  std::uint32_t processed = 0;
  std::uint32_t really_enqueued = 0;
  Error enqueue_error{};
  bool failed = false;
  for (const Command& command : batch) {
    const CUresult result = enqueue_command(*slot, command);
    if (result != CUDA_SUCCESS) {
      enqueue_error = fail(context, result, "a command of the batch failed to enqueue");
      failed = true;
      break;
    }
    processed++;
    if (!(command.kind == CommandKind::Launch && command.mode == LaunchMode::DryRun)) really_enqueued++;
  }
  if (failed && really_enqueued == 0) return give_up(enqueue_error);  // nothing reached the stream

  event.sequence = ++slot->submitted_sequence;
  CUresult recorded = CUDA_SUCCESS;
  if (on_demand && !failed) {
    event.on_demand = true;  // nothing recorded: the first poll that needs it records the queue's probe
  } else {
    if (event.done == nullptr) {  // an on-demand partial submit: its terminal needs an event of its own
      Result<CUevent> taken = take_event(context, false);
      if (taken.ok()) event.done = *taken;
    }
    recorded = event.done != nullptr ? api().cuEventRecord(event.done, slot->stream) : CUDA_ERROR_OUT_OF_MEMORY;
  }
  event.recorded = recorded == CUDA_SUCCESS && !event.on_demand;
  if (failed) {  // the slot came out of the table reset: a batch that enqueued whole leaves these as they are
    event.partial = true;
    event.partial_error = enqueue_error;
  }
  context.children++;
  slot->in_flight.push_back(*id);
  if (replays) {
    for (std::uint32_t index = 0; index < processed; ++index) {
      if (batch[index].kind != CommandKind::Replay) continue;
      if (ExecutableSlot* executable = executables_.find(batch[index].executable.id)) executable->last_replay_event = *id;
    }
  }
  Event handle(*id, queue.epoch());
  // A partial submit: the prefix may run, so the event owns the whole batch until it is terminal.
  if (failed) return SubmitResult::indeterminate(std::move(handle), enqueue_error, processed);
  if (recorded != CUDA_SUCCESS) {
    return SubmitResult::indeterminate(std::move(handle), fail(context, recorded, "cuEventRecord after the batch failed"),
                                       processed);
  }
  return SubmitResult::submitted(std::move(handle), processed);
}

Status Device::synchronize(const Queue& queue, std::uint64_t timeout_ns) {
  QueueSlot* slot = resolve(queues_, queue.id(), queue.epoch());
  if (slot == nullptr) return make_error(ErrorKind::InvalidArgument, "the queue handle does not name a live queue");
  if (slot->capturing) {
    // CUDA answers a sync on a capturing stream with STREAM_CAPTURE_UNSUPPORTED and invalidates the capture
    // (CUDA-FACTS.md). The Device does not make the call, but keeps that meaning: end_capture yields nothing.
    slot->capture.failed = true;
    slot->capture.failure = cuda_error(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "synchronize on a capturing queue invalidated the capture");
    return cuda_error(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "synchronize on a capturing queue is not allowed");
  }
  auto entered = enter(slot->context_id);
  if (!entered.ok()) return entered.error();
  const PollPacer pacer(options_, timeout_ns);
  for (;;) {
    const CUresult result = api().cuStreamQuery(slot->stream);
    if (result == CUDA_SUCCESS) {
      slot->completed_sequence = slot->submitted_sequence;  // the stream is idle: every batch is done
      prune_in_flight(*slot);
      return ok_status();
    }
    if (result != CUDA_ERROR_NOT_READY) return fail(**entered, result, "cuStreamQuery failed while synchronizing");
    if (!pacer.before_deadline()) {
      return make_error(ErrorKind::Timeout, "the queue still had work in flight at the deadline", true);
    }
    pacer.pause();
  }
}

// ---- capture ----

Status Device::begin_capture(const Queue& queue) {
  QueueSlot* slot = resolve(queues_, queue.id(), queue.epoch());
  if (slot == nullptr) return make_error(ErrorKind::InvalidArgument, "the queue handle does not name a live queue");
  if (slot->capturing) return make_error(ErrorKind::InvalidArgument, "the queue is already capturing");
  auto entered = enter(slot->context_id);
  if (!entered.ok()) return entered.error();
  // On-demand completion: record the probe for every batch submitted so far now, since nothing can be
  // recorded on the stream (outside the graph) while it captures.
  if (slot->submitted_sequence > slot->completed_sequence) {
    const CUresult covered = cover_with_probe(**entered, *slot, slot->submitted_sequence);
    if (covered != CUDA_SUCCESS) return fail(**entered, covered, "recording the queue's completion probe before the capture failed");
  }
  const CUresult begun = api().cuStreamBeginCapture(slot->stream, CU_STREAM_CAPTURE_MODE_GLOBAL);
  if (begun != CUDA_SUCCESS) return fail(**entered, begun, "cuStreamBeginCapture failed");
  slot->capturing = true;
  slot->capture = detail::CaptureState{};
  (*entered)->capturing_queues++;
  return ok_status();
}

Status Device::capture(const Queue& queue, Batch batch) {
  QueueSlot* slot = resolve(queues_, queue.id(), queue.epoch());
  if (slot == nullptr) return make_error(ErrorKind::InvalidArgument, "the queue handle does not name a live queue");
  if (!slot->capturing) return make_error(ErrorKind::InvalidArgument, "the queue is not capturing: call begin_capture first");
  if (batch.empty()) return make_error(ErrorKind::InvalidArgument, "a batch must hold at least one command");
  auto entered = enter(slot->context_id);
  if (!entered.ok()) return entered.error();
  for (const Command& command : batch) QUIESCE_TRY(validate_command(*slot, queue.epoch(), command, true));
  for (const Command& command : batch) {
    const CUresult result = enqueue_command(*slot, command);
    if (result != CUDA_SUCCESS) {
      // The capture is now unusable; end_capture will still end it and report that no graph came out.
      slot->capture.failed = true;
      slot->capture.failure = fail(**entered, result, "a command failed to enqueue into the capture");
      return slot->capture.failure;
    }
    // Pin every buffer the graph bakes an address of: it must outlive the executable.
    const auto pin = [&](BufferRef ref) { if (ref.valid()) slot->capture.pinned_buffers.push_back(ref.id); };
    pin(command.source);
    pin(command.target);
    for (const Binding& binding : command.bindings) pin(binding.buffer);
  }
  return ok_status();
}

Result<Executable> Device::end_capture(const Queue& queue) {
  QueueSlot* slot = resolve(queues_, queue.id(), queue.epoch());
  if (slot == nullptr) return make_error(ErrorKind::InvalidArgument, "the queue handle does not name a live queue");
  if (!slot->capturing) return make_error(ErrorKind::InvalidArgument, "the queue is not capturing");
  ContextSlot* context = &contexts_.get(slot->context_id);
  slot->capturing = false;
  context->capturing_queues--;
  detail::CaptureState captured = std::move(slot->capture);
  slot->capture = detail::CaptureState{};
  if (context->lost) return context->lost_error;
  auto entered = enter(slot->context_id);
  if (!entered.ok()) return entered.error();
  // Always reached, on every path that began a capture: an invalidated capture must still be ended.
  CUgraph graph = nullptr;
  const CUresult ended = api().cuStreamEndCapture(slot->stream, &graph);
  if (ended != CUDA_SUCCESS || graph == nullptr || captured.failed) {
    if (graph != nullptr) (void)api().cuGraphDestroy(graph);
    if (captured.failed) return captured.failure;
    return fail(*context, ended != CUDA_SUCCESS ? ended : CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "cuStreamEndCapture produced no graph");
  }
  CUgraphExec executable = nullptr;
  const CUresult instantiated = api().cuGraphInstantiateWithFlags(&executable, graph, 0);
  (void)api().cuGraphDestroy(graph);  // the executable graph is independent of its template
  if (instantiated != CUDA_SUCCESS) return fail(*context, instantiated, "cuGraphInstantiate failed");
  // Upload it now, on its own stream, so that the first replay does not pay for the upload.
  const CUresult uploaded = api().cuGraphUpload(executable, slot->stream);
  if (uploaded != CUDA_SUCCESS) {
    (void)api().cuGraphExecDestroy(executable);
    return fail(*context, uploaded, "cuGraphUpload failed");
  }
  std::sort(captured.pinned_buffers.begin(), captured.pinned_buffers.end());
  captured.pinned_buffers.erase(std::unique(captured.pinned_buffers.begin(), captured.pinned_buffers.end()),
                                captured.pinned_buffers.end());
  ExecutableSlot executable_slot;
  executable_slot.context_id = slot->context_id;
  executable_slot.graph = executable;
  executable_slot.pinned_buffers = std::move(captured.pinned_buffers);
  for (const std::uint64_t buffer_id : executable_slot.pinned_buffers) {
    if (BufferSlot* buffer = buffers_.find(buffer_id)) buffer->pins++;
  }
  std::vector<std::uint64_t> pinned = executable_slot.pinned_buffers;
  const std::optional<std::uint64_t> id = executables_.insert(std::move(executable_slot));
  if (!id) {
    for (const std::uint64_t buffer_id : pinned) {
      if (BufferSlot* buffer = buffers_.find(buffer_id)) buffer->pins--;
    }
    (void)api().cuGraphExecDestroy(executable);
    return make_error(ErrorKind::OutOfMemory, "the CUDA backend's executable table is full");
  }
  context->children++;
  return Executable(*id, queue.epoch());
}

}  // namespace quiesce::cuda

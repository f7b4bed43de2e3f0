// sim::Device: buffers, synchronous transfers, stream-ordered and implicit-wait frees, pools and reports.
#include <algorithm>
#include <cassert>
#include <cstring>

#include "device_internal.h"
#include "quiesce/sim/device.h"

namespace quiesce::sim {

using namespace internal;  // NOLINT(google-build-using-namespace)

namespace {

bool range_fits(std::uint64_t offset, std::uint64_t bytes, std::uint64_t size) {
  return offset <= size && bytes <= size - offset;
}

constexpr Error kOutOfRange =
    sim_error(ErrorKind::InvalidArgument, Code::InvalidValue, "the byte range does not fit inside the buffer");

}  // namespace

Result<Buffer> Device::allocate_buffer(const Context& context, const AllocationPermit& permit) {
  ++operations_;
  charge_host_ns(config_.costs.allocation_ns);  // first: the checks below see the state after it
  const BufferDesc& desc = permit.desc();
  const auto fail = [&](const Error& error) -> Result<Buffer> {
    note(kCallAllocateBuffer, desc.bytes, &error);
    return error;
  };
  ContextRecord* record = find_context(context.id(), context.epoch());
  if (record == nullptr) return fail(kInvalidHandle);
  if (record->lost) return fail(kDeviceLost);
  if (desc.bytes == 0) {
    return fail(sim_error(ErrorKind::InvalidArgument, Code::InvalidValue, "a buffer of zero bytes was requested"));
  }
  if (desc.mode == AllocationMode::StreamOrdered) {
    if (!has_capability(Capability::StreamOrderedAllocation)) {
      return fail(sim_error(ErrorKind::Unsupported, Code::NotSupported,
                            "stream-ordered allocation is switched off on this simulated device"));
    }
    const QueueRecord* queue = find_queue(desc.queue);
    if (queue == nullptr || queue->context_id != context.id()) {
      return fail(sim_error(ErrorKind::InvalidArgument, Code::InvalidHandle,
                            "a stream-ordered buffer needs a live queue of the same context"));
    }
  }
  constexpr Error kOutOfMemory =
      sim_error(ErrorKind::OutOfMemory, Code::OutOfMemory, "no free range of device memory fits the request", true);
  if (desc.bytes > config_.memory_bytes) return fail(kOutOfMemory);

  const std::uint64_t aligned = allocator_.round_up(desc.bytes);
  const std::uint32_t pool = record->pools.route(aligned);
  const std::uint64_t backing_bytes = record->pools.is_large(pool) ? aligned : record->pools.block_bytes(pool);
  std::uint64_t address = record->pools.take_cached(pool);
  const bool newly_reserved = address == AddressAllocator::kNoAddress;
  if (newly_reserved) {
    address = allocator_.allocate(backing_bytes);
    if (address == AddressAllocator::kNoAddress) {
      // Like a caching allocator: give the context's cached blocks back and try once more.
      (void)record->pools.release_cached(allocator_);
      address = allocator_.allocate(backing_bytes);
    }
    if (address == AddressAllocator::kNoAddress) return fail(kOutOfMemory);
  }
  record->pools.note_allocated(pool, backing_bytes, newly_reserved);
  backing_.mark_unwritten(address, backing_bytes);

  const std::uint64_t id = buffers_.acquire();
  BufferRecord& buffer = buffers_.at(SlotTable<BufferRecord>::slot_of(id));
  buffer = BufferRecord{context.id(), BufferPhase::Live, address, desc.bytes, backing_bytes, pool, desc.usage,
                        desc.mode, desc.queue.id, 0, 0};
  oracle_.reset_buffer(SlotTable<BufferRecord>::slot_of(id), id);
  record->buffers++;
  note(kCallAllocateBuffer, id, nullptr);
  return Buffer(id, record->epoch);
}

Result<BufferInfo> Device::buffer_info(const Buffer& buffer) {
  ++operations_;
  const BufferRecord* record = find_buffer(buffer.ref());
  if (record == nullptr || context_lost(record->context_id)) {
    const Error& error = record == nullptr ? kInvalidHandle : kDeviceLost;
    note(kCallBufferInfo, buffer.id(), &error);
    return error;
  }
  note(kCallBufferInfo, buffer.id(), nullptr);
  return BufferInfo{record->bytes, record->backing_bytes, config_.buffer_alignment, record->usage, record->mode};
}

Status Device::write_buffer(Buffer& buffer, std::uint64_t offset, ByteSource source) {
  ++operations_;
  const auto fail = [&](const Error& error) -> Status {
    note(kCallWriteBuffer, buffer.id(), &error);
    return error;
  };
  BufferRecord* record = find_buffer(buffer.ref());
  if (record == nullptr) return fail(kInvalidHandle);
  if (context_of(record->context_id).lost) return fail(kDeviceLost);
  if (!has_usage(record->usage, BufferUsage::TransferTarget)) {
    return fail(sim_error(ErrorKind::PermissionDenied, Code::InvalidValue,
                          "write_buffer needs a buffer with TransferTarget usage"));
  }
  const std::uint64_t bytes = source.size();
  if (!range_fits(offset, bytes, record->bytes)) return fail(kOutOfRange);
  std::uint64_t cursor = record->address + offset;
  for (const auto& segment : source.segments) {
    if (!segment.empty()) std::memcpy(backing_.bytes(cursor, segment.size()).data(), segment.data(), segment.size());
    cursor += segment.size();
  }
  host_clock_.ticks[kHostAgent]++;
  const Accessor host{kHostAgent, host_clock_.ticks[kHostAgent], &host_clock_, 0, 0};
  device_write(ResolvedBuffer{buffer.id(), record->address, record->bytes}, offset, bytes, host);
  charge_host_ns(transfer_ns(bytes, config_.costs.upload_bytes_per_us));
  note(kCallWriteBuffer, buffer.id(), nullptr);
  return ok_status();
}

Status Device::read_buffer(const Buffer& buffer, std::uint64_t offset, ByteSink sink) {
  ++operations_;
  const auto fail = [&](const Error& error) -> Status {
    note(kCallReadBuffer, buffer.id(), &error);
    return error;
  };
  const BufferRecord* record = find_buffer(buffer.ref());
  if (record == nullptr) return fail(kInvalidHandle);
  if (context_of(record->context_id).lost) return fail(kDeviceLost);
  if (!has_usage(record->usage, BufferUsage::TransferSource)) {
    return fail(sim_error(ErrorKind::PermissionDenied, Code::InvalidValue,
                          "read_buffer needs a buffer with TransferSource usage"));
  }
  const std::uint64_t bytes = sink.size();
  if (!range_fits(offset, bytes, record->bytes)) return fail(kOutOfRange);
  host_clock_.ticks[kHostAgent]++;
  const Accessor host{kHostAgent, host_clock_.ticks[kHostAgent], &host_clock_, 0, 0};
  device_read(ResolvedBuffer{buffer.id(), record->address, record->bytes}, offset, bytes, host);
  std::uint64_t cursor = record->address + offset;
  for (const auto& segment : sink.segments) {
    if (!segment.empty()) std::memcpy(segment.data(), backing_.bytes(cursor, segment.size()).data(), segment.size());
    cursor += segment.size();
  }
  charge_host_ns(transfer_ns(bytes, config_.costs.upload_bytes_per_us));
  note(kCallReadBuffer, buffer.id(), nullptr);
  return ok_status();
}

ReleaseResult<Buffer> Device::free_buffer(Buffer&& buffer) {
  ++operations_;
  charge_host_ns(config_.costs.free_ns);  // first, so that the checks below see the state after it
  BufferRecord* record = find_buffer(buffer.ref());
  if (record == nullptr) {
    note(kCallFreeBuffer, buffer.id(), &kInvalidHandle);
    return ReleaseResult<Buffer>::rejected(std::move(buffer), kInvalidHandle);
  }
  ContextRecord* context = &context_of(record->context_id);
  if (context->lost) {
    note(kCallFreeBuffer, buffer.id(), &kDeviceLost);
    Buffer consumed = std::move(buffer);
    return ReleaseResult<Buffer>::indeterminate(kDeviceLost);
  }
  if (record->pins != 0) {
    constexpr Error kPinned = sim_error(ErrorKind::Busy, Code::ResourceBusy,
                                        "the buffer is pinned by an executable or an open capture", true);
    note(kCallFreeBuffer, buffer.id(), &kPinned);
    return ReleaseResult<Buffer>::rejected(std::move(buffer), kPinned);
  }
  const std::uint64_t id = buffer.id();
  if (record->mode == AllocationMode::StreamOrdered) {
    const QueueRecord* queue = queues_.find(record->queue_id);
    if (queue != nullptr && queue->batches_retired < queue->batches_submitted) {
      // Ordered on its queue: reusable only once the queue reaches this point (R12).
      record->phase = BufferPhase::FreePending;
      deferred_frees_.push_back(DeferredFree{id, record->queue_id, queue->batches_submitted});
      context->buffers--;
      note(kCallFreeBuffer, id, nullptr);
      Buffer consumed = std::move(buffer);
      return ReleaseResult<Buffer>::released();
    }
  } else if (config_.free_synchronizes && !device_idle()) {
    // Like the measured cuMemFree: even an unrelated buffer's free waits for the whole device.
    const Status waited = implicit_device_wait();
    if (!waited.ok()) {
      note(kCallFreeBuffer, id, &waited.error());
      return ReleaseResult<Buffer>::rejected(std::move(buffer), waited.error());
    }
    // The wait passed virtual time, in which other simulated threads may have run: resolve again.
    record = find_buffer(buffer.ref());
    if (record == nullptr) {
      note(kCallFreeBuffer, id, &kInvalidHandle);
      return ReleaseResult<Buffer>::rejected(std::move(buffer), kInvalidHandle);
    }
    if (context_lost(record->context_id)) {
      note(kCallFreeBuffer, id, &kDeviceLost);
      Buffer consumed = std::move(buffer);
      return ReleaseResult<Buffer>::indeterminate(kDeviceLost);
    }
  } else if (record->in_flight != 0 && running_command_touches(id)) {
    oracle_.report(Finding{FindingKind::UseAfterFree, clock_.now_ns(), id, 0, 0, 0, 0,
                           "buffer " + std::to_string(id) +
                               " was freed while a running device command was still touching it."});
  }
  assert(record->phase == BufferPhase::Live);
  release_buffer_memory(id);
  context_of(record->context_id).buffers--;
  buffers_.release(SlotTable<BufferRecord>::slot_of(id));
  note(kCallFreeBuffer, id, nullptr);
  Buffer consumed = std::move(buffer);
  return ReleaseResult<Buffer>::released();
}

// Returns the buffer's range to its pool or the address space; the slot itself is released by the caller.
void Device::release_buffer_memory(std::uint64_t buffer_id) {
  const BufferRecord* record = buffers_.find(buffer_id);
  if (record == nullptr) return;
  assert(record->backing_bytes >= record->bytes && record->address % config_.buffer_alignment == 0);
  ContextRecord* context = &context_of(record->context_id);
  context->pools.note_freed(record->pool, record->address, record->backing_bytes);
  if (context->pools.is_large(record->pool)) allocator_.release(record->address, record->backing_bytes);
}

void Device::process_deferred_frees(std::uint64_t queue_id) {
  const QueueRecord* queue = queues_.find(queue_id);
  std::size_t kept = 0;
  for (std::size_t index = 0; index < deferred_frees_.size(); ++index) {
    const DeferredFree entry = deferred_frees_[index];
    const bool reached = entry.queue_id == queue_id && (queue == nullptr || queue->batches_retired >= entry.retire_threshold);
    if (!reached) {
      deferred_frees_[kept++] = entry;
      continue;
    }
    release_buffer_memory(entry.buffer_id);
    if (buffers_.find(entry.buffer_id) != nullptr) buffers_.release(SlotTable<BufferRecord>::slot_of(entry.buffer_id));
  }
  deferred_frees_.resize(kept);
}

bool Device::running_command_touches(std::uint64_t buffer_id) const {
  for (std::uint32_t slot = 0; slot < queues_.slots(); ++slot) {
    if (!queues_.live(slot)) continue;
    const QueueRecord& queue = queues_.at(slot);
    if (queue.run != QueueRun::Running || queue.count == 0) continue;
    const BatchRecord& batch = queue.ring[queue.head];
    const CommandStore* store = &batch.store;
    const StagedCommand* command = &batch.store.commands[batch.next];
    if (command->kind == CommandKind::Replay) {
      const ExecutableRecord* executable = executables_.find(command->executable_id);
      if (executable == nullptr) continue;
      store = &executable->store;
      command = &executable->store.commands[batch.replay_cursor];
    }
    if (command->source.id == buffer_id || command->target.id == buffer_id) return true;
    for (std::uint32_t index = 0; index < command->bindings_count; ++index) {
      if (store->bindings[command->bindings_begin + index].buffer.id == buffer_id) return true;
    }
  }
  return false;
}

Status Device::implicit_device_wait() {
  const std::uint64_t deadline_ns = saturating_add(clock_.now_ns(), config_.implicit_wait_max_ns);
  const bool idle = waiter_->wait_until(
      deadline_ns, [](const void* self) { return static_cast<const Device*>(self)->device_idle(); }, this);
  if (!idle) {
    return sim_error(ErrorKind::Timeout, Code::Timeout,
                     "the free's implicit device-wide wait did not see the device go idle in time", true);
  }
  return ok_status();
}

// ---- pools and reports ----

Result<MemoryUsage> Device::memory_usage(const Context& context) {
  ++operations_;
  const ContextRecord* record = find_context(context.id(), context.epoch());
  if (record == nullptr || record->lost) {
    const Error& error = record == nullptr ? kInvalidHandle : kDeviceLost;
    note(kCallMemoryUsage, context.id(), &error);
    return error;
  }
  note(kCallMemoryUsage, context.id(), nullptr);
  return record->pools.usage();
}

Result<MemoryReport> Device::memory_report(const Context& context) {
  ++operations_;
  const ContextRecord* record = find_context(context.id(), context.epoch());
  if (record == nullptr || record->lost) {
    const Error& error = record == nullptr ? kInvalidHandle : kDeviceLost;
    note(kCallMemoryReport, context.id(), &error);
    return error;
  }
  note(kCallMemoryReport, context.id(), nullptr);
  return record->pools.report();
}

Status Device::install_pools(const Context& context, const PoolLayout& layout) {
  ++operations_;
  const auto fail = [&](const Error& error) -> Status {
    note(kCallInstallPools, context.id(), &error);
    return error;
  };
  if (!has_capability(Capability::MemoryPools)) {
    return fail(sim_error(ErrorKind::Unsupported, Code::NotSupported, "memory pools are switched off on this device"));
  }
  ContextRecord* record = find_context(context.id(), context.epoch());
  if (record == nullptr) return fail(kInvalidHandle);
  if (record->lost) return fail(kDeviceLost);
  const std::vector<std::uint64_t>& classes = layout.block_bytes;
  const bool ascending = std::adjacent_find(classes.begin(), classes.end(), std::greater_equal<>()) == classes.end();
  if (classes.size() > PoolSet::kClassesMax || !ascending ||
      (!classes.empty() && (classes.front() == 0 || classes.back() > config_.memory_bytes))) {
    return fail(sim_error(ErrorKind::InvalidArgument, Code::InvalidValue,
                          "a pool layout needs at most 32 strictly ascending, nonzero classes within device memory"));
  }
  if (record->pools.live_blocks() != 0) {
    return fail(sim_error(ErrorKind::Busy, Code::PoolsInUse,
                          "pools are rebuilt only when nothing is live in them (R18)", true));
  }
  record->pools.install(layout, config_.buffer_alignment, allocator_);
  note(kCallInstallPools, context.id(), nullptr);
  return ok_status();
}

Status Device::memory_cleanup(const Context& context) {
  ++operations_;
  ContextRecord* record = find_context(context.id(), context.epoch());
  if (record == nullptr || record->lost) {
    const Error& error = record == nullptr ? kInvalidHandle : kDeviceLost;
    note(kCallMemoryCleanup, context.id(), &error);
    return error;
  }
  (void)record->pools.release_cached(allocator_);
  note(kCallMemoryCleanup, context.id(), nullptr);
  return ok_status();
}

}  // namespace quiesce::sim

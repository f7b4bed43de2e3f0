// sim::Device: discarding a context, the whole-device recovery after a sticky fault.
//
// Everything of the context goes at once, whatever its state: queued work is dropped (its timers go stale),
// engines it held are freed, its memory returns to the address space. Handles of its epoch never resolve
// again because their ids are never reused; a new create_context gets a new epoch.
#include "device_internal.h"
#include "quiesce/sim/device.h"

namespace quiesce::sim {

using namespace internal;  // NOLINT(google-build-using-namespace)

namespace {

template <class Record, class Visit>
void for_each_of_context(SlotTable<Record>& table, std::uint64_t context_id, Visit visit) {
  for (std::uint32_t slot = 0; slot < table.slots(); ++slot) {
    if (table.live(slot) && table.at(slot).context_id == context_id) visit(slot, table.at(slot));
  }
}

}  // namespace

Status Device::discard_context(Context&& context) {
  ++operations_;
  ContextRecord* record = find_context(context.id(), context.epoch());
  if (record == nullptr) {
    note(kCallDiscardContext, context.id(), &kInvalidHandle);
    return kInvalidHandle;
  }
  const std::uint64_t context_id = context.id();
  for_each_of_context(queues_, context_id, [&](std::uint32_t slot, QueueRecord& queue) {
    if (!record->lost) stop_queue(queue);
    agents_in_use_ &= ~(1U << queue.agent);
    for (BatchRecord& batch : queue.ring) batch.store.clear();
    queue.capture.clear();
    queue.count = 0;
    queues_.release(slot);
  });
  std::size_t kept = 0;
  for (const DeferredFree& entry : deferred_frees_) {
    const BufferRecord* buffer = buffers_.find(entry.buffer_id);
    if (buffer != nullptr && buffer->context_id != context_id) deferred_frees_[kept++] = entry;
  }
  deferred_frees_.resize(kept);
  for_each_of_context(buffers_, context_id, [&](std::uint32_t slot, BufferRecord& buffer) {
    if (record->pools.is_large(buffer.pool)) allocator_.release(buffer.address, buffer.backing_bytes);
    else record->pools.note_freed(buffer.pool, buffer.address, buffer.backing_bytes);
    buffers_.release(slot);
  });
  (void)record->pools.release_cached(allocator_);
  for_each_of_context(programs_, context_id, [&](std::uint32_t slot, ProgramRecord& program) {
    allocator_.release(program.address, kProgramResidentBytes);
    programs_.release(slot);
  });
  for_each_of_context(events_, context_id, [&](std::uint32_t slot, EventRecord&) { events_.release(slot); });
  for_each_of_context(executables_, context_id, [&](std::uint32_t slot, ExecutableRecord& executable) {
    executable.store.clear();
    executables_.release(slot);
  });
  contexts_.release(SlotTable<ContextRecord>::slot_of(context_id));
  note(kCallDiscardContext, context_id, nullptr);
  Context consumed = std::move(context);
  // Queues of other contexts may have been waiting for the engines this context held.
  drain();
  return ok_status();
}

}  // namespace quiesce::sim

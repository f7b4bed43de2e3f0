// The raw workload, part 1: context lifetime, device loss and recovery, and the safety phase's single
// operations on buffers (allocate, write, read, free) with their release bookkeeping.
// Member definitions of raw_detail::RawWorkload (raw_workload_impl.h), which includes this header at its end.
#pragma once

#include "quiesce/properties/raw_workload_impl.h"

namespace quiesce::properties::raw_detail {

template <Backend B>
bool RawWorkload<B>::open_context() {
  Result<Context> context = backend_.create_context(ContextDesc{});
  note(1, context.ok());
  if (!context.ok()) return false;
  context_ = std::move(context).value();
  queues_.clear();
  for (std::uint32_t q = 0; q < options_.queues; ++q) {
    Result<Queue> queue = backend_.create_queue(context_, QueueDesc{});
    note(2, queue.ok());
    if (queue.ok()) queues_.push_back(std::move(queue).value());
    else if (lost(queue.error())) return false;
  }
  for (std::size_t k = 0; k < programs_.size(); ++k) {
    ArtifactRef artifact;
    artifact.kernel_name = kernel_name(kBuiltinKernels[k]);
    artifact.resident_bytes = 1U << 20U;
    Result<Program> program = backend_.load_program(context_, artifact);
    note(3, program.ok());
    programs_[k] = program.ok() ? std::move(program).value() : Program{};
  }
  return !queues_.empty();
}

template <Backend B>
bool RawWorkload<B>::lost(const Error& error) {
  if (mutated(Mutation::IgnoreDeviceLoss)) return false;
  if (error.kind == ErrorKind::DeviceLost) device_lost_ = true;
  return device_lost_;
}

template <Backend B>
void RawWorkload<B>::recover() {
  stats_.device_losses++;
  if (mutated(Mutation::ReleaseOnLostContext)) {
    for (auto& slot : buffers_) {
      if (!slot.dead && slot.handle.valid()) (void)backend_.free_buffer(std::move(slot.handle));
    }
  }
  for (auto& slot : buffers_) forget(slot.dead, slot.handle.valid());
  for (auto& slot : events_) forget(slot.dead, slot.handle.valid());
  for (auto& slot : executables_) forget(slot.dead, slot.handle.valid());
  for (auto& queue : queues_) stats_.quarantined_handles += queue.valid() ? 1 : 0;
  for (auto& program : programs_) stats_.quarantined_handles += program.valid() ? 1 : 0;
  buffers_.clear();
  events_.clear();
  executables_.clear();
  queues_.clear();
  for (auto& program : programs_) program = Program{};
  budget_ = MemoryBudget(options_.memory_budget_bytes);
  note(4, backend_.discard_context(std::move(context_)).ok());
  device_lost_ = false;
  context_tainted_ = false;
  if (!open_context()) stats_.problems.push_back("no new context could be created after a device loss.");
}

template <Backend B>
void RawWorkload<B>::forget(bool& dead, bool valid) {
  if (!dead && valid) stats_.quarantined_handles++;
  dead = true;
}

template <Backend B>
void RawWorkload<B>::step() {
  const std::uint64_t pick = prng_.below(100);
  std::string_view kind;
  if (pick < 10) allocate(), kind = "allocate";
  else if (pick < 17) write(), kind = "write";
  else if (pick < 45) submit_batch(), kind = "submit";
  else if (pick < 60) poll(), kind = "poll";
  else if (pick < 67) wait(), kind = "wait";
  else if (pick < 75) destroy_terminal_events(), kind = "destroy-events";
  else if (pick < 83) read(), kind = "read";
  else if (pick < 88) free_buffer(), kind = "free";
  else if (pick < 90) cancel(), kind = "cancel";
  else if (pick < 93) capture(), kind = "capture";
  else if (pick < 97) replay(), kind = "replay";
  else if (pick < 98) destroy_executable(), kind = "destroy-executable";
  else synchronize(), kind = "synchronize";
  if (options_.after_operation) options_.after_operation(stats_.operations, kind);
}

template <Backend B>
std::uint32_t RawWorkload<B>::live_buffers() const {
  std::uint32_t count = 0;
  for (const auto& slot : buffers_) count += slot.dead ? 0 : 1;
  return count;
}

template <Backend B>
void RawWorkload<B>::allocate() {
  if (live_buffers() >= options_.buffers_max) return;
  static constexpr std::array<BufferUsage, 3> kUsages = {
      kAllBufferUsage, BufferUsage::ProgramInput | BufferUsage::TransferSource | BufferUsage::TransferTarget,
      BufferUsage::ProgramOutput | BufferUsage::TransferSource | BufferUsage::TransferTarget};
  BufferDesc desc;
  desc.bytes = 8 + 4 * prng_.below(options_.buffer_bytes_max / 4);
  desc.usage = kUsages[prng_.below(kUsages.size())];
  if (mutated(Mutation::StreamOrderedFreeUnordered) && !queues_.empty()) {
    desc.mode = AllocationMode::StreamOrdered;
    desc.queue = queues_.front().ref();
  }
  ResourceTransaction<B> transaction(backend_, context_, budget_, ++transactions_);
  Result<BufferRef> staged = transaction.allocate(desc);
  note(5, staged.ok());
  if (!staged.ok()) {
    stats_.allocation_failures++;
    lost(staged.error());
    return;
  }
  std::vector<Buffer> committed = transaction.commit();
  BufferSlot slot;
  slot.handle = std::move(committed.front());
  slot.usage = desc.usage;
  slot.bytes = desc.bytes;
  slot.model.assign(desc.bytes, 0);
  slot.initialized = mutated(Mutation::UnwrittenBufferRead);
  buffers_.push_back(std::move(slot));
  stats_.allocations++;
}

template <Backend B>
template <class Accept>
std::uint32_t RawWorkload<B>::pick_buffer(Accept accept, const std::vector<std::uint32_t>& exclude) {
  const auto candidate = [&](std::uint32_t i) {
    const BufferSlot& slot = buffers_[i];
    if (slot.dead || slot.pins != 0 || !accept(slot)) return false;
    return std::find(exclude.begin(), exclude.end(), i) == exclude.end();
  };
  return pick_index(static_cast<std::uint32_t>(buffers_.size()), candidate);
}

template <Backend B>
std::uint32_t RawWorkload<B>::pick_any_live_buffer() {
  return pick_index(static_cast<std::uint32_t>(buffers_.size()), [&](std::uint32_t i) { return !buffers_[i].dead; });
}

// Seeded bytes (core/seeded_bytes.h): a trace stores such a payload as its length and seed. The draws that
// byte-by-byte filling took are still made, so every later decision of the run is what it was.
template <Backend B>
std::vector<std::byte> RawWorkload<B>::random_bytes(std::uint64_t count) {
  std::vector<std::byte> bytes(count);
  if (count == 0) return bytes;
  fill_seeded_bytes(prng_.next(), bytes);
  Prng local = prng_;  // a local copy keeps the generator's state in registers for the skipped draws
  for (std::uint64_t draw = 1; draw < count; ++draw) (void)local.next();
  prng_ = local;
  return bytes;
}

template <Backend B>
void RawWorkload<B>::write() {
  const std::uint32_t index = pick_buffer([](const BufferSlot& slot) {
    return has_usage(slot.usage, BufferUsage::TransferTarget);
  });
  if (index == kNone) return;
  BufferSlot& slot = buffers_[index];
  const std::uint64_t offset = slot.initialized ? 4 * prng_.below(slot.bytes / 4) : 0;
  const std::vector<std::byte> data = random_bytes(slot.bytes - offset);
  const std::span<const std::byte> segment(data);
  const ByteSource source{std::span<const std::span<const std::byte>>(&segment, 1)};
  const Status status = backend_.write_buffer(slot.handle, offset, source);
  note(6, status.ok());
  stats_.writes++;
  if (status.ok()) {
    std::memcpy(slot.model.data() + offset, data.data(), data.size());
    slot.initialized = slot.initialized || offset == 0;
  } else {
    slot.initialized = false;  // a write failing part-way leaves the range partially modified
    lost(status.error());
  }
}

template <Backend B>
void RawWorkload<B>::read() {
  const std::uint32_t index = pick_buffer([](const BufferSlot& slot) {
    return slot.initialized && has_usage(slot.usage, BufferUsage::TransferSource);
  });
  if (index == kNone) return;
  BufferSlot& slot = buffers_[index];
  std::vector<std::byte> data(slot.bytes, std::byte{0xA5});
  const std::span<std::byte> segment(data);
  const ByteSink sink{std::span<const std::span<std::byte>>(&segment, 1)};
  const Status status = backend_.read_buffer(slot.handle, 0, sink);
  note(7, status.ok());
  if (!status.ok()) {
    lost(status.error());
    return;
  }
  digest_.add(hash_bytes(data));
  stats_.reads_checked++;
  if (std::memcmp(data.data(), slot.model.data(), data.size()) != 0) {
    stats_.data_mismatches++;
    stats_.problems.push_back("read of buffer " + std::to_string(slot.handle.id()) +
                              " differs from the host model of its bytes.");
  }
}

template <Backend B>
void RawWorkload<B>::free_buffer() {
  const bool ignore_pins = mutated(Mutation::FreeWhilePinned) || mutated(Mutation::StreamOrderedFreeUnordered);
  const std::uint32_t index = ignore_pins ? pick_any_live_buffer() : pick_buffer([](const BufferSlot&) { return true; });
  if (index == kNone) return;
  release_buffer(buffers_[index]);
}

template <Backend B>
void RawWorkload<B>::release_buffer(BufferSlot& slot) {
  const std::uint64_t bytes = slot.bytes;
  const BufferRef ref = slot.handle.ref();
  ReleaseResult<Buffer> released = backend_.free_buffer(std::move(slot.handle));
  if (mutated(Mutation::ReuseAfterIndeterminateRelease) && released.status == ReleaseStatus::Indeterminate) {
    slot.handle = Buffer(ref.id, ref.epoch);  // the bug: the invalidated handle is kept as if live
    return;
  }
  if (mutated(Mutation::DropRejectedRelease) && released.status == ReleaseStatus::Rejected) {
    slot.dead = true;  // the bug: the live handle that came back is dropped
    return;
  }
  if (settle_release(released, slot.handle)) {
    slot.dead = true;
    if (released.status == ReleaseStatus::Released) budget_.discharge(bytes);
    else budget_.quarantine(bytes);
  }
}

template <Backend B>
template <class H>
bool RawWorkload<B>::settle_release(ReleaseResult<H>& released, H& handle) {
  note(8, static_cast<std::uint8_t>(released.status));
  switch (released.status) {
    case ReleaseStatus::Released:
      stats_.releases++;
      return true;
    case ReleaseStatus::Rejected:
      stats_.releases_rejected++;
      handle = std::move(released.handle);
      lost(released.error);
      return false;
    case ReleaseStatus::Indeterminate:
      // The inner release may not have happened, so the parent may still hold the child: like
      // virtio-accel's indeterminate release, this context can only end by a whole-device discard.
      stats_.releases_indeterminate++;
      stats_.quarantined_handles++;
      context_tainted_ = true;
      lost(released.error);
      return true;
  }
  return false;
}

}  // namespace quiesce::properties::raw_detail

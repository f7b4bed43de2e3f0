// sim::Device: what a starting command does to device bytes, what the oracle learns, and what it costs.
//
// Effects happen at the command's start time. A command touching a released buffer still reads and writes
// the bytes at the address it was given, which may now belong to another buffer, exactly as on hardware;
// the oracle reports the use after free and leaves the new occupant's access history alone.
#include <array>
#include <cassert>
#include <cstring>

#include "device_internal.h"
#include "quiesce/sim/device.h"

namespace quiesce::sim {

using namespace internal;  // NOLINT(google-build-using-namespace)

std::uint64_t Device::apply_command(std::uint64_t queue_id, const QueueRecord& queue, const StagedCommand& command,
                                    const StagedCommand& stamp, const CommandStore& store, bool replayed,
                                    bool& faulted) {
  const BatchRecord& batch = queue.ring[queue.head];
  const Accessor accessor{queue.agent, stamp.tick, &stamp.clock, queue_id, batch.event_id};
  const CostProfile& costs = config_.costs;
  const std::uint64_t fixed_ns = replayed ? costs.graph_node_ns : costs.copy_latency_ns;
  switch (command.kind) {
    case CommandKind::Launch:
      if (command.mode == LaunchMode::DryRun) return replayed ? costs.graph_node_ns : costs.launch_latency_ns;
      return apply_launch(queue_id, command, store, accessor, faulted) + (replayed ? costs.graph_node_ns : costs.launch_latency_ns);
    case CommandKind::Copy: {
      const bool source_alive = check_alive(command.source, queue_id, accessor);
      const bool target_alive = check_alive(command.target, queue_id, accessor);
      if (source_alive) device_read(command.source, command.source_offset, command.bytes, accessor);
      if (command.bytes > 0) {
        std::memmove(backing_.bytes(command.target.address + command.target_offset, command.bytes).data(),
                     backing_.bytes(command.source.address + command.source_offset, command.bytes).data(), command.bytes);
      }
      if (target_alive) device_write(command.target, command.target_offset, command.bytes, accessor);
      else backing_.mark_written(command.target.address + command.target_offset, command.bytes);
      return fixed_ns + transfer_ns(command.bytes, costs.copy_bytes_per_us);
    }
    case CommandKind::Upload: {
      const bool alive = check_alive(command.target, queue_id, accessor);
      if (command.bytes > 0) {
        std::memcpy(backing_.bytes(command.target.address + command.target_offset, command.bytes).data(),
                    store.data.data() + command.data_begin, command.bytes);
      }
      if (alive) device_write(command.target, command.target_offset, command.bytes, accessor);
      else backing_.mark_written(command.target.address + command.target_offset, command.bytes);
      return fixed_ns + transfer_ns(command.bytes, costs.upload_bytes_per_us);
    }
    case CommandKind::Zero: {
      const bool alive = check_alive(command.target, queue_id, accessor);
      if (command.bytes > 0) {
        std::memset(backing_.bytes(command.target.address + command.target_offset, command.bytes).data(), 0, command.bytes);
      }
      if (alive) device_write(command.target, command.target_offset, command.bytes, accessor);
      else backing_.mark_written(command.target.address + command.target_offset, command.bytes);
      return fixed_ns + transfer_ns(command.bytes, costs.zero_bytes_per_us);
    }
    case CommandKind::Replay:
    case CommandKind::Wait:
      break;
  }
  return 0;  // replays and waits are expanded by pump, never started themselves
}

std::uint64_t Device::apply_launch(std::uint64_t queue_id, const StagedCommand& command, const CommandStore& store,
                                   const Accessor& accessor, bool& faulted) {
  binding_sizes_.clear();
  binding_spans_.clear();
  std::uint64_t alive_mask = 0;
  for (std::uint32_t index = 0; index < command.bindings_count; ++index) {
    const ResolvedBinding& binding = store.bindings[command.bindings_begin + index];
    binding_sizes_.push_back(binding.buffer.bytes);
    binding_spans_.push_back(backing_.bytes(binding.buffer.address, binding.buffer.bytes));
    if (check_alive(binding.buffer, queue_id, accessor)) alive_mask |= 1ULL << index;
  }
  // Each binding's touch is worked out once (binding_touch switches on the kernel): its write is kept for
  // after the kernel, and the bytes of every touch add up to the cost (docs/kernels.md: bytes_touched).
  // Config::bindings_max is at most 64, as alive_mask already relies on.
  assert(command.bindings_count <= 64);
  std::array<std::uint64_t, 64> write_bytes;  // NOLINT(cppcoreguidelines-pro-type-member-init): set below
  std::uint64_t bytes_touched = 0;
  for (std::uint32_t index = 0; index < command.bindings_count; ++index) {
    const ResolvedBinding& binding = store.bindings[command.bindings_begin + index];
    const BindingTouch touch = binding_touch(command.kernel, binding_sizes_, index);
    write_bytes[index] = touch.write_bytes;
    bytes_touched += touch.read_bytes + touch.write_bytes;
    if ((alive_mask & (1ULL << index)) != 0) device_read(binding.buffer, 0, touch.read_bytes, accessor);
    if (touch.write_bytes > 0 && binding.access == Access::Read) {
      oracle_.report(Finding{FindingKind::ReadOnlyWrite, clock_.now_ns(), binding.buffer.id, queue_id, 0,
                             accessor.event_id, 0,
                             "the " + std::string(kernel_name(command.kernel)) + " kernel wrote binding " +
                                 std::to_string(index) + " (buffer " + std::to_string(binding.buffer.id) +
                                 "), which was bound with Access::Read."});
    }
  }
  const std::span<const std::byte> parameters(store.data.data() + command.data_begin, command.data_size);
  faulted = run_kernel(command.kernel, binding_spans_, parameters);
  if (faulted) return 0;
  for (std::uint32_t index = 0; index < command.bindings_count; ++index) {
    if (write_bytes[index] == 0) continue;
    const ResolvedBinding& binding = store.bindings[command.bindings_begin + index];
    if ((alive_mask & (1ULL << index)) != 0) device_write(binding.buffer, 0, write_bytes[index], accessor);
    else backing_.mark_written(binding.buffer.address, write_bytes[index]);
  }
  return transfer_ns(bytes_touched, config_.costs.kernel_bytes_per_us) + kernel_delay_ns(command.kernel, parameters);
}

}  // namespace quiesce::sim

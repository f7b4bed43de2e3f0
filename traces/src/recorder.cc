// The non-template half of the Recorder: turning batches, byte segments and query results into records.
#include "quiesce/traces/recorder.h"

#include <optional>

#include "quiesce/core/seeded_bytes.h"

namespace quiesce::traces::detail {
namespace {

// Seeded bytes (core/seeded_bytes.h) are held as their seed and length, as the binary reader holds them: the
// bytes are looked at once, here, and not copied; comparing the record with a decoded one is then comparing
// two seeds, and writing it writes the seed without looking at the bytes again. Any other bytes are copied.
void hold(std::span<const std::byte> bytes, Payload& data) {
  const std::optional<std::uint64_t> seed = seed_of_seeded_bytes(bytes);
  if (seed.has_value()) return data.assign_seeded(*seed, bytes.size());
  data.assign(bytes);
}

}  // namespace

// Every field of every command is written: `commands` may hold an earlier batch's, reused for their storage.
void record_commands(Batch batch, std::vector<CommandRecord>& commands) {
  commands.resize(batch.size());
  for (std::size_t index = 0; index < batch.size(); ++index) {
    const Command& command = batch[index];
    CommandRecord& record = commands[index];
    record.kind = command.kind;
    record.mode = command.mode;
    record.program = command.program.id;
    record.executable = command.executable.id;
    record.event = command.event.id;
    record.source = command.source.id;
    record.target = command.target.id;
    record.source_offset = command.source_offset;
    record.target_offset = command.target_offset;
    record.bytes = command.bytes;
    record.dims = command.dims;
    record.bindings.resize(command.bindings.size());
    for (std::size_t binding = 0; binding < command.bindings.size(); ++binding) {
      record.bindings[binding] = BindingRecord{command.bindings[binding].buffer.id, command.bindings[binding].access};
    }
    hold(command.data, record.data);
  }
}

std::uint64_t hash_segments(std::span<const std::span<const std::byte>> segments) {
  if (segments.size() == 1) return hash_bytes(segments[0]);
  Digest digest;
  for (const auto& segment : segments) digest.add_bytes(segment.data(), segment.size());
  return digest.value();
}

std::uint64_t hash_segments(std::span<const std::span<std::byte>> segments) {
  if (segments.size() == 1) return hash_bytes(segments[0]);
  Digest digest;
  for (const auto& segment : segments) digest.add_bytes(segment.data(), segment.size());
  return digest.value();
}

void copy_segments(std::span<const std::span<const std::byte>> segments, Payload& data) {
  if (segments.size() == 1) return hold(segments[0], data);
  data.clear();
  std::vector<std::byte>& bytes = data.expand();
  for (const auto& segment : segments) bytes.insert(bytes.end(), segment.begin(), segment.end());
}

void record_device_info(const DeviceInfo& info, CallRecord& call) {
  call.output_text = info.name;
  const DeviceLimits& limits = info.limits;
  call.outputs = {info.vendor_id,
                  info.compute_major,
                  info.compute_minor,
                  static_cast<std::uint64_t>(info.capabilities),
                  limits.memory_bytes,
                  limits.buffer_alignment,
                  limits.queue_depth_max,
                  limits.queues_max,
                  limits.batch_commands_max,
                  limits.bindings_max,
                  limits.parameter_bytes_max,
                  limits.launch_threads_max};
}

void record_memory_report(const MemoryReport& report, CallRecord& call) {
  call.outputs.clear();
  for (const PoolReport& pool : report.pools) {
    call.outputs.insert(call.outputs.end(), {pool.block_bytes, pool.blocks_reserved, pool.blocks_in_use,
                                             pool.bytes_reserved, pool.bytes_in_use, pool.bytes_in_use_max});
  }
}

}  // namespace quiesce::traces::detail

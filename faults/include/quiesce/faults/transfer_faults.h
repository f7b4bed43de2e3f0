// Fault family Transfer: host transfers that fail part-way.
//
// What can fail:
// - PartialWrite: the first `parameter` bytes of the source (fewer than all) are really written through
//   the inner backend, then the write answers an injected Internal error (retryable: a write is idempotent).
// - PartialRead: the first `parameter` bytes are really copied into the sink through the inner backend,
//   then the read answers an injected error; the rest of the sink is untouched.
// What must still hold: bytes beyond the prefix are neither written to the buffer nor copied to the sink;
// a failed read is never taken as having initialised the sink; a retried write rewrites every byte.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "quiesce/core/backend.h"
#include "quiesce/faults/device_loss.h"
#include "quiesce/faults/state.h"

namespace quiesce::faults::detail {

// The segments that cover exactly the first `bytes` bytes of `segments`.
template <class Segment>
std::vector<Segment> prefix_segments(std::span<const Segment> segments, std::uint64_t bytes) {
  std::vector<Segment> prefix;
  prefix.reserve(segments.size());
  for (const Segment& segment : segments) {
    if (bytes == 0) break;
    const std::uint64_t taken = bytes < segment.size() ? bytes : segment.size();
    if (taken > 0) prefix.push_back(segment.first(taken));
    bytes -= taken;
  }
  return prefix;
}

template <Backend B>
Status write_with_faults(B& inner, InjectorState& state, Buffer& buffer, std::uint64_t offset,
                         ByteSource source) {
  if (lost(state, state.tracker.context_of(HandleKind::Buffer, buffer.id()))) return Decider::lost_error();
  const std::uint64_t size = source.size();
  if (size > 0) {
    if (const auto verdict = state.decider.consider(FaultKind::PartialWrite)) {
      const std::uint64_t written = state.decider.choose(*verdict, 0, size - 1);
      if (written > 0) {
        const std::vector<std::span<const std::byte>> prefix = prefix_segments(source.segments, written);
        Status status = inner.write_buffer(buffer, offset, ByteSource{prefix});
        if (!status.ok()) return status;  // the inner refused the prefix: its own answer is the truth
      }
      return state.decider.record(FaultKind::PartialWrite, written);
    }
  }
  return inner.write_buffer(buffer, offset, source);
}

template <Backend B>
Status read_with_faults(B& inner, InjectorState& state, const Buffer& buffer, std::uint64_t offset,
                        ByteSink sink) {
  if (lost(state, state.tracker.context_of(HandleKind::Buffer, buffer.id()))) return Decider::lost_error();
  const std::uint64_t size = sink.size();
  if (size > 0) {
    if (const auto verdict = state.decider.consider(FaultKind::PartialRead)) {
      const std::uint64_t copied = state.decider.choose(*verdict, 0, size - 1);
      if (copied > 0) {
        const std::vector<std::span<std::byte>> prefix = prefix_segments(sink.segments, copied);
        Status status = inner.read_buffer(buffer, offset, ByteSink{prefix});
        if (!status.ok()) return status;
      }
      return state.decider.record(FaultKind::PartialRead, copied);
    }
  }
  return inner.read_buffer(buffer, offset, sink);
}

}  // namespace quiesce::faults::detail

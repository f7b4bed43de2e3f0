// Engine memory and profiling: usage with high-water marks, per-pool reports, pool layouts installed only
// when nothing is live (R18), and profile windows whose durations come from timing receipts only (R15).
//
// A profile never reports zero for timing it does not have: a window whose submissions did not all end
// with a timing receipt answers Unsupported, and an empty window answers InvalidArgument.
#pragma once

#include "quiesce/core/engine.h"

namespace quiesce {

template <Backend B, Env E>
Result<ProfileToken> Engine<B, E>::start_profile() {
  Lock lock(mutex_);
  QUIESCE_TRY(ready_locked());
  if (!has_capability(device_info_.capabilities, Capability::Profiling)) {
    return make_error(ErrorKind::Unsupported, "the device cannot time submissions, so a profile has no durations");
  }
  if (profiles_.size() >= kProfilesMax) {
    return make_error(ErrorKind::Busy, "too many profile windows are open; end one first");
  }
  const std::uint64_t serial = next_serial();
  profiles_.emplace(serial, engine_detail::ProfileWindow{});
  return ProfileToken{serial};
}

template <Backend B, Env E>
Result<ProfileDuration> Engine<B, E>::end_profile(ProfileToken token, std::uint64_t timeout_ns) {
  Lock lock(mutex_);
  auto window = profiles_.find(token.serial);
  if (window == profiles_.end()) return make_error(ErrorKind::InvalidArgument, "the profile token is not open");
  const std::vector<std::uint64_t> members = std::move(window->second.submissions);
  profiles_.erase(window);
  if (members.empty()) return make_error(ErrorKind::InvalidArgument, "the profile window holds no submission");
  ProfileDuration duration;
  std::uint64_t first_start_ns = UINT64_MAX;
  std::uint64_t last_finish_ns = 0;
  for (const std::uint64_t serial : members) {
    std::optional<TimingReceipt> timing;
    auto live = submissions_.find(serial);
    if (live != submissions_.end()) {
      if (!wait_terminal_locked(serial, live->second, timeout_ns)) {
        return make_error(ErrorKind::Timeout, "a submission of the profile window did not finish in time");
      }
      timing = live->second.timing;
    } else if (const engine_detail::FateRecord* record = fates_.find(serial)) {
      timing = record->receipt.timing;
    }
    if (!timing.has_value() || timing->finished_ns < timing->started_ns) {
      return make_error(ErrorKind::Unsupported, "a submission of the profile window has no timing receipt");
    }
    duration.submissions++;
    duration.busy_ns += timing->elapsed_ns();
    if (timing->started_ns < first_start_ns) first_start_ns = timing->started_ns;
    if (timing->finished_ns > last_finish_ns) last_finish_ns = timing->finished_ns;
  }
  duration.span_ns = last_finish_ns - first_start_ns;
  assert(duration.submissions == members.size());
  return duration;
}

template <Backend B, Env E>
EngineMemory Engine<B, E>::memory_usage() {
  Lock lock(mutex_);
  EngineMemory memory;
  memory.capacity_bytes = budget_.capacity_bytes();
  memory.charged_bytes = budget_.charged_bytes();
  memory.quarantined_bytes = budget_.quarantined_bytes();
  memory.charged_bytes_max = budget_.charged_bytes_max();
  memory.live_buffers = buffers_.size();
  memory.live_programs = programs_.size();
  if (has_context_ && !lost_) {
    Result<MemoryUsage> device = backend_.memory_usage(context_);
    if (device.ok()) {
      memory.device = device.value();
    } else {
      note_error_locked(device.error());
    }
  }
  return memory;
}

template <Backend B, Env E>
Result<MemoryReport> Engine<B, E>::memory_report() {
  Lock lock(mutex_);
  QUIESCE_TRY(ready_locked());
  Result<MemoryReport> report = backend_.memory_report(context_);
  if (!report.ok()) note_error_locked(report.error());
  return report;
}

template <Backend B, Env E>
Status Engine<B, E>::install_pools(const PoolLayout& layout) {
  Lock lock(mutex_);
  QUIESCE_TRY(ready_locked());
  progress_locked(true);
  // R18: a layout changes only when nothing is live in the pools.
  if (!buffers_.empty() || !held_buffers_.empty() || !submissions_.empty() || !graphs_.empty()) {
    return make_error(ErrorKind::Busy, "pools are in use: buffers, graphs or submissions are still live");
  }
  const Status installed = backend_.install_pools(context_, layout);
  if (!installed.ok()) note_error_locked(installed.error());
  return installed;
}

template <Backend B, Env E>
Status Engine<B, E>::memory_cleanup() {
  Lock lock(mutex_);
  QUIESCE_TRY(ready_locked());
  progress_locked(true);
  if (lost_) return loss_error_;
  const Status cleaned = backend_.memory_cleanup(context_);
  if (!cleaned.ok()) note_error_locked(cleaned.error());
  return cleaned;
}

}  // namespace quiesce

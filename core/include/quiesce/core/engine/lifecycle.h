// Engine lifecycle: opening a context, noticing a device loss, and recovering on a fresh context.
//
// A DeviceLost error from any call marks the context lost (R10): from then on the engine makes no call on
// it except discard_context, so nothing is released as if it were quiescent. Recovery discards the lost
// context whole (every resource it held ends "discarded", every quarantine charge it held ends with it),
// then opens a fresh context and its queues under a new epoch; no id of the old epoch resolves again (R9).
// Errors of any other kind stay local to the call that saw them (R11).
#pragma once

#include "quiesce/core/engine.h"

namespace quiesce {

template <Backend B, Env E>
Engine<B, E>::Engine(B& backend, E& env, EngineOptions options)
    : backend_(backend), env_(env), options_(options), fates_(options.fate_history_max) {
  assert(options_.queue_count > 0);
  assert(options_.submit_attempts_max > 0 && options_.release_attempts_max > 0);
}

template <Backend B, Env E>
Engine<B, E>::~Engine() {
  stop_poller();
  if (opened_ && !shut_down_) (void)shutdown(0);
}

template <Backend B, Env E>
Status Engine<B, E>::open() {
  Lock lock(mutex_);
  if (opened_) return make_error(ErrorKind::InvalidArgument, "the engine is already open");
  Result<DeviceInfo> info = backend_.device_info();
  if (!info.ok()) return info.error();
  device_info_ = info.value();
  std::uint64_t capacity = device_info_.limits.memory_bytes;
  if (options_.memory_budget_bytes != 0 && (capacity == 0 || options_.memory_budget_bytes < capacity)) {
    capacity = options_.memory_budget_bytes;
  }
  if (capacity == 0) {
    return make_error(ErrorKind::InvalidArgument,
                      "the device reports no memory and no memory budget was given, so nothing can be admitted");
  }
  budget_ = MemoryBudget(capacity);
  opened_ = true;
  const Status opened = open_context_locked();
  if (!opened.ok()) recover_if_lost_locked(false);
  return opened;
}

template <Backend B, Env E>
Status Engine<B, E>::open_context_locked() {
  assert(!has_context_);
  Result<Context> context = backend_.create_context(ContextDesc{});
  if (!context.ok()) return context.error();
  ++epoch_;
  context_ = std::move(context).value();
  has_context_ = true;
  context_serial_ = next_serial();
  tally(ResourceKind::Contexts).created++;
  queues_.clear();
  for (std::uint32_t index = 0; index < options_.queue_count; ++index) {
    Result<Queue> queue = backend_.create_queue(context_, QueueDesc{});
    if (!queue.ok()) {
      // A context without all its queues is of no use: give it up whole, as after a loss.
      lost_ = true;
      loss_error_ = queue.error();
      return queue.error();
    }
    tally(ResourceKind::Queues).created++;
    queues_.push_back(engine_detail::QueueSlot{std::move(queue).value(), next_serial(), false});
  }
  assert(queues_.size() == options_.queue_count);
  return ok_status();
}

template <Backend B, Env E>
Status Engine<B, E>::ready_locked() {
  // The common case first: open, not shut down, with a context that is not lost (nothing to recover).
  if (opened_ && !shut_down_ && has_context_ && !lost_) [[likely]] return ok_status();
  return recover_for_call_locked();
}

// ready_locked's other cases: refuse the call, or recover a usable context for it.
template <Backend B, Env E>
Status Engine<B, E>::recover_for_call_locked() {
  if (shut_down_) return make_error(ErrorKind::InvalidArgument, "the engine was shut down; no call is accepted");
  if (!opened_) return make_error(ErrorKind::InvalidArgument, "the engine is not open; call open() first");
  recover_if_lost_locked(true);
  for (std::uint32_t attempt = 0; !has_context_ && attempt < options_.recovery_attempts_max; ++attempt) {
    const Status opened = open_context_locked();
    if (opened.ok()) {
      counters_.recoveries++;
      break;
    }
    recover_if_lost_locked(false);
  }
  if (!has_context_) {
    return make_error(ErrorKind::DeviceLost, "the engine has no usable context: every recovery attempt failed");
  }
  assert(!lost_);
  return ok_status();
}

template <Backend B, Env E>
void Engine<B, E>::note_error_locked(const Error& error) {
  if (error.kind != ErrorKind::DeviceLost || lost_ || !has_context_) return;
  lost_ = true;
  loss_error_ = error;
  counters_.device_losses++;
}

template <Backend B, Env E>
void Engine<B, E>::recover_if_lost_locked(bool reopen) {
  if (!lost_) return;
  discard_everything_locked();
  lost_ = false;
  assert(!has_context_);
  if (!reopen) return;
  for (std::uint32_t attempt = 0; attempt < options_.recovery_attempts_max; ++attempt) {
    const Status opened = open_context_locked();
    if (opened.ok()) {
      counters_.recoveries++;
      return;
    }
    if (lost_ || has_context_) {
      discard_everything_locked();
      lost_ = false;
    }
  }
}

// Gives up the current context whole: every resource it held ends discarded, every charge it held ends.
template <Backend B, Env E>
void Engine<B, E>::discard_everything_locked() {
  for (auto& [serial, submission] : submissions_) {
    if (!submission.terminal && submission.fire_and_forget && !submission.failure_queued) {
      queue_failure_locked(serial, submission, FailureCause::DeviceLost, loss_error_);
    }
    engine_detail::FateRecord record;
    record.fate = submission.terminal ? submission.fate() : SubmissionFate::Lost;
    record.receipt = SubmissionReceipt{submission.state, submission.terminal ? submission.error : loss_error_,
                                       submission.terminal ? submission.timing : std::nullopt};
    fates_.put(serial, record);
    if (submission.submitted) tally(ResourceKind::Events).discarded++;
  }
  submissions_.clear();
  terminal_hint_ = 0;
  std::uint64_t discarded_bytes = 0;
  for (auto& [serial, slot] : buffers_) {
    discarded_bytes += slot.charged_bytes;
    tally(ResourceKind::Buffers).discarded++;
  }
  for (auto& [serial, slot] : programs_) {
    discarded_bytes += slot.resident_bytes;
    tally(ResourceKind::Programs).discarded++;
  }
  tally(ResourceKind::Executables).discarded += graphs_.size();
  tally(ResourceKind::Queues).discarded += queues_.size();
  buffers_.clear();
  programs_.clear();
  requested_buffers_.clear();
  requested_programs_.clear();
  graphs_.clear();
  release_requests_hint_ = 0;
  queues_.clear();
  if (has_context_) {
    const Status discarded = backend_.discard_context(std::move(context_));
    (void)discarded;  // a discard that fails still abandons the context: it is never used again
    tally(ResourceKind::Contexts).discarded++;
    has_context_ = false;
  }
  // The ledger: live charges go through quarantine and end with the context, as do earlier quarantines.
  budget_.quarantine(discarded_bytes);
  budget_.forget_quarantine(discarded_bytes);
  for (QuarantineEntry& entry : quarantine_) {
    if (entry.discarded || entry.epoch != epoch_) continue;
    entry.discarded = true;
    budget_.forget_quarantine(entry.bytes);
  }
  held_buffers_.clear();
  held_programs_.clear();
  held_executables_.clear();
  held_events_.clear();
  held_queues_.clear();
}

template <Backend B, Env E>
void Engine<B, E>::add_quarantine_locked(ResourceKind kind, std::uint64_t serial, std::uint64_t bytes,
                                         QuarantineCause cause, const Error& error) {
  assert(serial != 0);
  QuarantineEntry entry;
  entry.kind = kind;
  entry.serial = serial;
  entry.epoch = epoch_;
  entry.bytes = bytes;
  entry.cause = cause;
  entry.error = error;
  quarantine_.push_back(entry);
  tally(kind).quarantined++;
  if (bytes != 0) budget_.quarantine(bytes);
}

template <Backend B, Env E>
std::uint32_t Engine<B, E>::epoch() {
  Lock lock(mutex_);
  return epoch_;
}

template <Backend B, Env E>
EngineCounters Engine<B, E>::counters() {
  Lock lock(mutex_);
  return counters_;
}

template <Backend B, Env E>
bool Engine<B, E>::healthy() {
  Lock lock(mutex_);
  return opened_ && !shut_down_ && has_context_ && !lost_ && failures_.empty();
}

}  // namespace quiesce

// Engine shutdown: release everything, children before parents, and account for every resource (R19).
//
// Shutdown stops the poller, requests the release of everything still live (graphs first, since they pin
// buffers and programs), drains within the given time, then settles what is left: an event that never
// reached a destroyable terminal is quarantined with everything it pins, a release that is still being
// retried gets one last attempt and is otherwise quarantined. Queues go next, then the context: destroyed
// when nothing is held in quarantine, otherwise discarded whole (a whole-device discard is the only way to
// end a quarantine). The report's ledger is taken before that final release.
#pragma once

#include "quiesce/core/engine.h"

namespace quiesce {

template <Backend B, Env E>
void Engine<B, E>::settle_for_shutdown_locked() {
  if (!has_context_) return;
  for (auto it = submissions_.begin(); it != submissions_.end();) {
    Submission& submission = it->second;
    if (submission.terminal) {
      submission.destroy_retry.next_attempt_ns = 0;
      ++it;
      continue;
    }
    held_events_.push_back(std::move(submission.event));
    const Error error = submission.error;
    add_quarantine_locked(ResourceKind::Events, it->first, 0,
                          submission.indeterminate ? QuarantineCause::PinnedByIndeterminateWork
                                                   : QuarantineCause::HeldAtShutdown,
                          error);
    quarantine_pins_locked(submission, QuarantineCause::PinnedByIndeterminateWork, error);
    submission.dependents = 0;
    retire_submission_locked(it->first, submission);
    it = erase_submission_locked(it);
  }
  for (auto& [serial, graph] : graphs_) graph.retry.next_attempt_ns = 0;
  for (auto& [serial, slot] : buffers_) slot.retry.next_attempt_ns = 0;
  for (auto& [serial, slot] : programs_) slot.retry.next_attempt_ns = 0;
  for (std::uint32_t round = 0; round < 2 && !lost_; ++round) {
    // The first round is a last ordinary attempt; the second quarantines whatever is still waiting.
    if (round == 1) {
      for (auto& [serial, submission] : submissions_) {
        submission.dependents = 0;
        submission.destroy_retry.attempts = options_.release_attempts_max;
      }
      auto settle = [](auto& slot, QuarantineCause cause) {
        if (!slot.sticky) slot.sticky = engine_detail::StickyCause{cause, slot.retry.last_error};
        slot.retry.attempts = 0;
      };
      for (auto& [serial, graph] : graphs_) {
        settle(graph, graph.retry.attempts != 0 ? QuarantineCause::ReleaseRejectedRepeatedly
                                                : QuarantineCause::HeldAtShutdown);
      }
      for (auto& [serial, slot] : buffers_) {
        if (slot.retry.attempts != 0 || slot.pins() != 0) {
          settle(slot, slot.retry.attempts != 0 ? QuarantineCause::ReleaseRejectedRepeatedly
                                                : QuarantineCause::HeldAtShutdown);
        }
      }
      for (auto& [serial, slot] : programs_) {
        if (slot.retry.attempts != 0 || slot.pins() != 0) {
          settle(slot, slot.retry.attempts != 0 ? QuarantineCause::ReleaseRejectedRepeatedly
                                                : QuarantineCause::HeldAtShutdown);
        }
      }
    }
    destroy_events_locked();
    release_graphs_locked();
    release_buffers_locked();
    release_programs_locked();
  }
}

template <Backend B, Env E>
void Engine<B, E>::destroy_queues_locked() {
  for (engine_detail::QueueSlot& queue : queues_) {
    if (lost_) return;
    Queue handle = std::move(queue.handle);
    for (std::uint32_t attempt = 0; attempt < options_.release_attempts_max; ++attempt) {
      ReleaseResult<Queue> released = backend_.destroy_queue(std::move(handle));
      if (released.status == ReleaseStatus::Released) {
        tally(ResourceKind::Queues).released++;
        break;
      }
      if (released.status == ReleaseStatus::Indeterminate) {
        note_error_locked(released.error);
        add_quarantine_locked(ResourceKind::Queues, queue.serial, 0, QuarantineCause::IndeterminateRelease,
                              released.error);
        break;
      }
      {
        counters_.release_rejections++;
        note_error_locked(released.error);
        handle = std::move(released.handle);
        if (lost_) return;
        if (attempt + 1 == options_.release_attempts_max) {
          held_queues_.push_back(std::move(handle));
          add_quarantine_locked(ResourceKind::Queues, queue.serial, 0, QuarantineCause::ReleaseRejectedRepeatedly,
                                released.error);
        }
      }
    }
  }
  queues_.clear();
}

template <Backend B, Env E>
void Engine<B, E>::release_context_locked(ShutdownReport& report) {
  if (!has_context_) return;
  const bool quarantine_held = std::any_of(quarantine_.begin(), quarantine_.end(),
                                           [](const QuarantineEntry& entry) { return !entry.discarded; });
  has_context_ = false;
  if (!quarantine_held) {
    Context handle = std::move(context_);
    for (std::uint32_t attempt = 0; attempt < options_.release_attempts_max; ++attempt) {
      ReleaseResult<Context> released = backend_.destroy_context(std::move(handle));
      if (released.status == ReleaseStatus::Released) {
        tally(ResourceKind::Contexts).released++;
        return;
      }
      report.context_release = released.error;
      if (released.status == ReleaseStatus::Indeterminate) {
        add_quarantine_locked(ResourceKind::Contexts, context_serial_, 0, QuarantineCause::IndeterminateRelease,
                              released.error);
        return;
      }
      handle = std::move(released.handle);
      if (released.error.kind == ErrorKind::DeviceLost) break;
    }
    context_ = std::move(handle);
  }
  // Quarantine remains, or the destroy kept being rejected: a whole-device discard ends it all.
  tally(ResourceKind::Queues).discarded += queues_.size();
  queues_.clear();
  (void)backend_.discard_context(std::move(context_));
  tally(ResourceKind::Contexts).discarded++;
  report.context_discarded = true;
  budget_.forget_quarantine(budget_.quarantined_bytes());
}

template <Backend B, Env E>
ShutdownReport Engine<B, E>::shutdown(std::uint64_t drain_timeout_ns) {
  stop_poller();
  Lock lock(mutex_);
  ShutdownReport report;
  if (!opened_ || shut_down_) {
    report.drain = make_error(ErrorKind::InvalidArgument, "shutdown of an engine that is not open");
    report.tallies = tallies_;
    return report;
  }
  shut_down_ = true;
  for (auto& [serial, graph] : graphs_) graph.destroy_requested = true;
  requested_buffers_.clear();
  requested_programs_.clear();
  for (auto& [serial, slot] : buffers_) {
    slot.release_requested = true;
    requested_buffers_.push_back(serial);
  }
  for (auto& [serial, slot] : programs_) {
    slot.release_requested = true;
    requested_programs_.push_back(serial);
  }
  release_requests_hint_ += graphs_.size() + buffers_.size() + programs_.size();
  report.drain = drain_locked(drain_timeout_ns);
  settle_for_shutdown_locked();
  if (lost_) recover_if_lost_locked(false);
  // Queues are destroyed only when no held (quarantined) handle could still be their child.
  const bool holds_handles = !held_buffers_.empty() || !held_programs_.empty() || !held_executables_.empty() ||
                             !held_events_.empty();
  if (!holds_handles) destroy_queues_locked();
  if (lost_) recover_if_lost_locked(false);

  report.baseline_charged_bytes = 0;
  report.charged_bytes = budget_.charged_bytes();
  report.quarantined_bytes = budget_.quarantined_bytes();
  report.charged_bytes_max = budget_.charged_bytes_max();
  for (const QuarantineEntry& entry : quarantine_) {
    if (!entry.discarded) report.quarantine_entry_bytes += entry.bytes;
  }
  release_context_locked(report);
  report.tallies = tallies_;
  report.quarantine = quarantine_;
  report.unsurfaced_failures.assign(failures_.begin(), failures_.end());
  failures_.clear();
  report.epochs = epoch_;
  report.device_losses = static_cast<std::uint32_t>(counters_.device_losses);
  report.submissions = counters_.submissions;
  assert(buffers_.empty() && programs_.empty() && graphs_.empty());
  return report;
}

}  // namespace quiesce

// Engine progress: observing events, fenced deletion, bounded release retries, drain, flush, sync, poller.
//
// What can fail here, and what must still hold:
// - a poll or wait answers Indeterminate: the submission stays retained with everything it pins until a
//   later terminal (R2); nothing is released on its account.
// - a terminal event is destroyed only when no later submission still waits for it; then its pins drop, and
//   a resource whose release was requested is released once nothing pins it (fenced deletion, R1).
// - a release is Rejected: the same live handle is kept and retried after a doubling back-off, bounded in
//   attempts and in Env time; when the bound is hit the resource is quarantined with that cause.
// - a release is Indeterminate: the handle is gone; its charge moves to quarantine and everything the
//   released event or executable pinned is retained for good (sticky), never released, never retried.
// - a failure of fire-and-forget work is queued once and taken by exactly one flush or sync (R14).
#pragma once

#include "quiesce/core/engine.h"

namespace quiesce {

template <Backend B, Env E>
void Engine<B, E>::progress_locked(bool poll_all) {
  if (!has_context_ || lost_) return;
  // Queues complete mostly in order: unless asked to poll everything, stop at each queue's first pending,
  // and stop looking once every queue has one.
  std::vector<std::uint8_t>& blocked = scratch_blocked_;
  blocked.assign(queues_.size(), 0);
  std::size_t blocked_queues = 0;
  for (auto& [serial, submission] : submissions_) {
    if (lost_) return;
    if (!submission.submitted || submission.terminal) continue;
    if (!poll_all && blocked[submission.queue] != 0) continue;
    observe_locked(serial, submission, backend_.poll_event(submission.event));
    if (!submission.terminal && blocked[submission.queue] == 0) {
      blocked[submission.queue] = 1;
      if (!poll_all && ++blocked_queues == blocked.size()) break;
    }
  }
  if (terminal_hint_ != 0) destroy_events_locked();
  if (lost_ || release_requests_hint_ == 0) return;
  // Each scan visits every slot of its kind; what is still requested after all three is the new hint.
  const std::size_t graphs = release_graphs_locked();
  const std::size_t buffers = release_buffers_locked();
  const std::size_t programs = release_programs_locked();
  if (!lost_) release_requests_hint_ = graphs + buffers + programs;
}

template <Backend B, Env E>
void Engine<B, E>::observe_locked(std::uint64_t serial, Submission& submission, const Observation& observation) {
  assert(submission.submitted);
  if (submission.terminal) return;  // a terminal state never changes (R7)
  if (observation.state == EventState::Pending) return;
  if (observation.state == EventState::Indeterminate) {
    if (!submission.indeterminate) counters_.observations_indeterminate++;
    submission.indeterminate = true;
    submission.error = observation.error;
    note_error_locked(observation.error);
    return;
  }
  assert(is_terminal(observation.state));
  submission.terminal = true;
  terminal_hint_++;
  submission.indeterminate = false;
  submission.state = observation.state;
  submission.error = observation.error;
  submission.timing = submission.timing_requested ? observation.timing : std::nullopt;
  if (observation.state == EventState::FailedButQuiescent) {
    note_error_locked(observation.error);
    if (submission.fire_and_forget && !submission.failure_queued) {
      queue_failure_locked(serial, submission, FailureCause::FailedButQuiescent, observation.error);
    }
  }
}

template <Backend B, Env E>
bool Engine<B, E>::wait_terminal_locked(std::uint64_t serial, Submission& submission, std::uint64_t timeout_ns) {
  if (submission.terminal) return true;
  if (!submission.submitted || lost_ || !has_context_) return false;
  WaitResult waited = backend_.wait_event(submission.event, timeout_ns);
  if (waited.ok()) {
    observe_locked(serial, submission, Observation{waited->state, waited->error, waited->timing});
    return submission.terminal;
  }
  // FenceIndeterminate: the event stays live and retains everything it reaches. A plain timeout only says
  // the work is still running; any other cause makes the fate indeterminate.
  const Error& error = waited.error().error;
  note_error_locked(error);
  if (error.kind != ErrorKind::Timeout) {
    if (!submission.indeterminate) counters_.observations_indeterminate++;
    submission.indeterminate = true;
    submission.error = error;
  }
  return false;
}

template <Backend B, Env E>
bool Engine<B, E>::retry_due_locked(const engine_detail::RetryState& retry) const {
  return retry.attempts == 0 || env_.now_ns() >= retry.next_attempt_ns;
}

// Records one rejected release. True: retry later; false: the bound is hit, quarantine the resource.
template <Backend B, Env E>
bool Engine<B, E>::note_rejection_locked(engine_detail::RetryState& retry, const Error& error) {
  const std::uint64_t now = env_.now_ns();
  counters_.release_rejections++;
  if (retry.attempts == 0) retry.first_rejected_ns = now;
  retry.attempts++;
  retry.last_error = error;
  note_error_locked(error);
  if (retry.attempts >= options_.release_attempts_max) return false;
  if (now - retry.first_rejected_ns >= options_.release_retry_window_ns) return false;
  const std::uint32_t shift = retry.attempts - 1 < 20 ? retry.attempts - 1 : 20;
  retry.next_attempt_ns = now + (options_.release_backoff_ns << shift);
  return true;
}

// The submission's event is gone without a clean release: everything it pinned is retained for good.
template <Backend B, Env E>
void Engine<B, E>::quarantine_pins_locked(Submission& submission, QuarantineCause cause, const Error& error) {
  const engine_detail::StickyCause sticky{cause, error};
  for (engine_detail::BufferSlot* buffer : submission.buffers) {
    if (!buffer->sticky) buffer->sticky = sticky;
  }
  for (engine_detail::ProgramSlot* program : submission.programs) {
    if (!program->sticky) program->sticky = sticky;
  }
  for (const std::uint64_t graph : submission.graphs) {
    if (!graphs_.at(graph).sticky) graphs_.at(graph).sticky = sticky;
  }
}

template <Backend B, Env E>
void Engine<B, E>::retire_submission_locked(std::uint64_t serial, Submission& submission) {
  const engine_detail::FateRecord record{submission.fate(),
                                         SubmissionReceipt{submission.state, submission.error, submission.timing}};
  fates_.put(serial, record);
  unpin_locked(serial, submission);
}

template <Backend B, Env E>
void Engine<B, E>::destroy_events_locked() {
  // terminal_hint_ counts the terminal records at least: once that many were seen, no later one is.
  std::size_t terminal_seen = 0;
  std::size_t terminal_left = 0;
  for (auto it = submissions_.begin(); it != submissions_.end() && terminal_seen < terminal_hint_;) {
    if (lost_) return;
    const std::uint64_t serial = it->first;
    Submission& submission = it->second;
    if (submission.terminal) terminal_seen++;
    if (!submission.submitted || !submission.terminal || submission.dependents != 0 ||
        !retry_due_locked(submission.destroy_retry)) {
      if (submission.terminal) terminal_left++;
      ++it;
      continue;
    }
    ReleaseResult<Event> released = backend_.destroy_event(std::move(submission.event));
    if (released.status == ReleaseStatus::Released) {
      tally(ResourceKind::Events).released++;
    } else if (released.status == ReleaseStatus::Rejected) {
      submission.event = std::move(released.handle);
      if (note_rejection_locked(submission.destroy_retry, released.error) || lost_) {
        terminal_left++;
        ++it;
        continue;
      }
      held_events_.push_back(std::move(submission.event));
      add_quarantine_locked(ResourceKind::Events, serial, 0, QuarantineCause::ReleaseRejectedRepeatedly,
                            released.error);
      quarantine_pins_locked(submission, QuarantineCause::PinnedByQuarantine, released.error);
    } else {
      note_error_locked(released.error);
      add_quarantine_locked(ResourceKind::Events, serial, 0, QuarantineCause::IndeterminateRelease, released.error);
      quarantine_pins_locked(submission, QuarantineCause::PinnedByQuarantine, released.error);
    }
    retire_submission_locked(serial, submission);
    it = erase_submission_locked(it);
  }
  if (!lost_) terminal_hint_ = terminal_left;
}

// Returns how many graphs still have a destroy request after the scan (every graph is visited).
template <Backend B, Env E>
std::size_t Engine<B, E>::release_graphs_locked() {
  std::size_t requested_left = 0;
  for (auto it = graphs_.begin(); it != graphs_.end();) {
    if (lost_) return requested_left;
    GraphSlot& graph = it->second;
    if (!graph.destroy_requested || !graph.live_replays.empty() || !retry_due_locked(graph.retry)) {
      if (graph.destroy_requested) requested_left++;
      ++it;
      continue;
    }
    std::optional<engine_detail::StickyCause> pins_cause;
    if (graph.sticky) {
      held_executables_.push_back(std::move(graph.handle));
      add_quarantine_locked(ResourceKind::Executables, it->first, 0, graph.sticky->cause, graph.sticky->error);
      pins_cause = engine_detail::StickyCause{QuarantineCause::PinnedByQuarantine, graph.sticky->error};
    } else {
      ReleaseResult<Executable> released = backend_.destroy_executable(std::move(graph.handle));
      if (released.status == ReleaseStatus::Released) {
        tally(ResourceKind::Executables).released++;
      } else if (released.status == ReleaseStatus::Rejected) {
        graph.handle = std::move(released.handle);
        if (note_rejection_locked(graph.retry, released.error) || lost_) {
          requested_left++;
          ++it;
          continue;
        }
        held_executables_.push_back(std::move(graph.handle));
        add_quarantine_locked(ResourceKind::Executables, it->first, 0, QuarantineCause::ReleaseRejectedRepeatedly,
                              released.error);
        pins_cause = engine_detail::StickyCause{QuarantineCause::PinnedByQuarantine, released.error};
      } else {
        note_error_locked(released.error);
        add_quarantine_locked(ResourceKind::Executables, it->first, 0, QuarantineCause::IndeterminateRelease,
                              released.error);
        pins_cause = engine_detail::StickyCause{QuarantineCause::PinnedByQuarantine, released.error};
      }
    }
    // The captured buffers and programs were pinned for the executable's lifetime, which has now ended,
    // cleanly or into quarantine (then they stay retained for good).
    for (const std::uint64_t buffer : graph.buffers) {
      BufferSlot& slot = buffers_.at(buffer);
      assert(slot.graph_pins > 0);
      slot.graph_pins--;
      if (pins_cause && !slot.sticky) slot.sticky = pins_cause;
    }
    for (const std::uint64_t program : graph.programs) {
      ProgramSlot& slot = programs_.at(program);
      assert(slot.graph_pins > 0);
      slot.graph_pins--;
      if (pins_cause && !slot.sticky) slot.sticky = pins_cause;
    }
    it = graphs_.erase(it);
  }
  return requested_left;
}

template <Backend B, Env E>
std::size_t Engine<B, E>::release_buffers_locked() {
  return release_slots_locked(buffers_, requested_buffers_, held_buffers_, ResourceKind::Buffers,
                              &BufferSlot::charged_bytes,
                              [this](Buffer&& buffer) { return backend_.free_buffer(std::move(buffer)); });
}

template <Backend B, Env E>
std::size_t Engine<B, E>::release_programs_locked() {
  return release_slots_locked(programs_, requested_programs_, held_programs_, ResourceKind::Programs,
                              &ProgramSlot::resident_bytes,
                              [this](Program&& program) { return backend_.unload_program(std::move(program)); });
}

// Releases every slot whose release was requested, no pin remains and no rejected retry is pending: a slot
// that something quarantined pinned goes to quarantine instead; a rejected release is retried later, up to
// its bound, then quarantined; an indeterminate one is quarantined at once. Visits the requested slots
// alone (`requested`, ascending serials, kept in step with the map) and returns how many are left.
template <Backend B, Env E>
template <class Slot, class Handle, class ReleaseCall>
std::size_t Engine<B, E>::release_slots_locked(std::map<std::uint64_t, Slot>& slots,
                                               std::vector<std::uint64_t>& requested, std::vector<Handle>& held,
                                               ResourceKind kind,
                                               std::uint64_t Slot::*charged_bytes, ReleaseCall release) {
  std::size_t kept = 0;
  std::size_t index = 0;
  // `requested` is compacted in place: a serial still requested moves down to `kept`, an erased slot's is
  // dropped, and on an early return (the device lost) the serials not visited yet are kept as they are.
  const auto finish = [&] {
    while (index < requested.size()) requested[kept++] = requested[index++];
    requested.resize(kept);
    return kept;
  };
  for (; index < requested.size(); ++index) {
    if (lost_) return finish();
    const std::uint64_t serial = requested[index];
    const auto it = slots.find(serial);
    assert(it != slots.end() && it->second.release_requested);
    Slot& slot = it->second;
    if (slot.pins() != 0 || !retry_due_locked(slot.retry)) {
      requested[kept++] = serial;
      continue;
    }
    const std::uint64_t bytes = slot.*charged_bytes;
    if (slot.sticky) {
      held.push_back(std::move(slot.handle));
      add_quarantine_locked(kind, serial, bytes, slot.sticky->cause, slot.sticky->error);
      slots.erase(it);
      continue;
    }
    ReleaseResult<Handle> released = release(std::move(slot.handle));
    if (released.status == ReleaseStatus::Released) {
      budget_.discharge(bytes);
      tally(kind).released++;
    } else if (released.status == ReleaseStatus::Rejected) {
      slot.handle = std::move(released.handle);
      if (note_rejection_locked(slot.retry, released.error) || lost_) {
        requested[kept++] = serial;
        continue;
      }
      held.push_back(std::move(slot.handle));
      add_quarantine_locked(kind, serial, bytes, QuarantineCause::ReleaseRejectedRepeatedly, released.error);
    } else {
      note_error_locked(released.error);
      add_quarantine_locked(kind, serial, bytes, QuarantineCause::IndeterminateRelease, released.error);
    }
    slots.erase(it);
  }
  return finish();
}

// Quiescent: no event left to destroy and no release request that waits on anything but a user's live
// graph (the graph, not the engine, is then what retains the resource).
template <Backend B, Env E>
bool Engine<B, E>::quiescent_locked() const {
  if (!submissions_.empty()) return false;
  for (const auto& [serial, graph] : graphs_) {
    if (graph.destroy_requested) return false;
  }
  for (const auto& [serial, slot] : buffers_) {
    if (slot.release_requested && slot.graph_pins == 0) return false;
  }
  for (const auto& [serial, slot] : programs_) {
    if (slot.release_requested && slot.graph_pins == 0) return false;
  }
  return true;
}

// Makes time pass towards the next thing that can change: the oldest unfinished event, else the earliest
// release retry. False when nothing is left to wait for.
template <Backend B, Env E>
bool Engine<B, E>::wait_for_something_locked(std::uint64_t deadline_ns) {
  const std::uint64_t now = env_.now_ns();
  const std::uint64_t left_ns = deadline_ns > now ? deadline_ns - now : 0;
  for (auto& [serial, submission] : submissions_) {
    if (!submission.submitted || submission.terminal) continue;
    (void)wait_terminal_locked(serial, submission, left_ns < options_.wait_slice_ns ? left_ns : options_.wait_slice_ns);
    return true;
  }
  std::uint64_t next_ns = UINT64_MAX;
  auto consider = [&](const engine_detail::RetryState& retry) {
    if (retry.attempts != 0 && retry.next_attempt_ns < next_ns) next_ns = retry.next_attempt_ns;
  };
  for (const auto& [serial, submission] : submissions_) consider(submission.destroy_retry);
  for (const auto& [serial, graph] : graphs_) consider(graph.retry);
  for (const auto& [serial, slot] : buffers_) consider(slot.retry);
  for (const auto& [serial, slot] : programs_) consider(slot.retry);
  if (next_ns == UINT64_MAX) return false;
  env_.sleep_until(next_ns < deadline_ns ? next_ns : deadline_ns);
  return true;
}

template <Backend B, Env E>
Status Engine<B, E>::drain_locked(std::uint64_t timeout_ns) {
  const std::uint64_t start_ns = env_.now_ns();
  const std::uint64_t deadline_ns = UINT64_MAX - start_ns < timeout_ns ? UINT64_MAX : start_ns + timeout_ns;
  // What changes as releases complete: a drain that neither changes it nor has anything to wait for is stuck.
  auto footprint = [this] {
    return submissions_.size() + buffers_.size() + programs_.size() + graphs_.size() + quarantine_.size();
  };
  std::size_t last_footprint = SIZE_MAX;
  for (std::uint32_t iteration = 0; iteration < options_.drain_iterations_max; ++iteration) {
    if (lost_) recover_if_lost_locked(!shut_down_);
    progress_locked(true);
    if (lost_) continue;
    if (quiescent_locked()) return ok_status();
    if (env_.now_ns() >= deadline_ns) {
      return make_error(ErrorKind::Timeout, "drain: work or releases were still pending at the deadline");
    }
    const std::size_t now_footprint = footprint();
    const bool moved = now_footprint != last_footprint;
    last_footprint = now_footprint;
    if (!wait_for_something_locked(deadline_ns) && !moved) {
      return make_error(ErrorKind::Timeout, "drain: pending releases wait on nothing that can finish");
    }
  }
  return make_error(ErrorKind::Timeout, "drain: the bound on drain iterations was hit before quiescence");
}

template <Backend B, Env E>
Status Engine<B, E>::drain(std::uint64_t timeout_ns) {
  Lock lock(mutex_);
  QUIESCE_TRY(ready_locked());
  const Status drained = drain_locked(timeout_ns);
  if (lost_) recover_if_lost_locked(true);
  return drained;
}

template <Backend B, Env E>
void Engine<B, E>::progress() {
  Lock lock(mutex_);
  if (!ready_locked().ok()) return;
  progress_locked(true);
}

template <Backend B, Env E>
FlushResult Engine<B, E>::flush() {
  Lock lock(mutex_);
  FlushResult result;
  result.completion = ready_locked();
  if (result.completion.ok()) progress_locked(true);
  if (lost_) recover_if_lost_locked(true);
  result.failures.assign(failures_.begin(), failures_.end());
  failures_.clear();
  counters_.failures_surfaced += result.failures.size();
  return result;
}

template <Backend B, Env E>
FlushResult Engine<B, E>::sync(std::uint64_t timeout_ns) {
  Lock lock(mutex_);
  FlushResult result;
  result.completion = ready_locked();
  const std::uint64_t start_ns = env_.now_ns();
  const std::uint64_t deadline_ns = UINT64_MAX - start_ns < timeout_ns ? UINT64_MAX : start_ns + timeout_ns;
  for (std::uint32_t iteration = 0; result.completion.ok() && iteration < options_.drain_iterations_max; ++iteration) {
    if (lost_) recover_if_lost_locked(true);
    progress_locked(true);
    const bool unfinished = std::any_of(submissions_.begin(), submissions_.end(), [](const auto& entry) {
      return entry.second.submitted && !entry.second.terminal;
    });
    if (!unfinished && !lost_) break;
    if (env_.now_ns() >= deadline_ns || iteration + 1 == options_.drain_iterations_max) {
      result.completion = make_error(ErrorKind::Timeout, "sync: submissions were still unfinished at the deadline");
      break;
    }
    if (!lost_) (void)wait_for_something_locked(deadline_ns);
  }
  if (lost_) recover_if_lost_locked(true);
  result.failures.assign(failures_.begin(), failures_.end());
  failures_.clear();
  counters_.failures_surfaced += result.failures.size();
  return result;
}

template <Backend B, Env E>
void Engine<B, E>::start_poller() {
  {
    Lock lock(mutex_);
    if (poller_running_ || shut_down_) return;
    poller_running_ = true;
    poller_stop_requested_ = false;
  }
  poller_ = env_.spawn([this] { poller_loop(); });
}

template <Backend B, Env E>
void Engine<B, E>::stop_poller() {
  {
    Lock lock(mutex_);
    if (!poller_running_) return;
    poller_stop_requested_ = true;
  }
  env_.join(poller_);
  Lock lock(mutex_);
  poller_running_ = false;
}

template <Backend B, Env E>
void Engine<B, E>::poller_loop() {
  for (std::uint64_t iteration = 0; iteration < options_.poller_iterations_max; ++iteration) {
    {
      Lock lock(mutex_);
      if (poller_stop_requested_) return;
      if (opened_ && !shut_down_) {
        if (lost_) recover_if_lost_locked(true);
        progress_locked(true);
      }
    }
    env_.sleep_until(env_.now_ns() + options_.poller_interval_ns);
  }
  // The bound was hit: the poller stops, and says so where every asynchronous problem is reported.
  Lock lock(mutex_);
  counters_.poller_bound_hits++;
}

}  // namespace quiesce

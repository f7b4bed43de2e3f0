// sim::Device: the execution engines, command effects on host backing, and the sticky fault.
//
// A queue runs its batches in order. Its head command is Idle (about to be looked at), Running (on an
// engine until its timer fires), WaitingEngine (every engine of its class is busy; queues are served in
// the order they became ready), BlockedOnEvent (a Wait), BlockedOnReplay (an earlier replay of the same
// executable is not done), or Stopped (its context is lost). A command's effects happen when it starts;
// its engine is busy until start + cost. Pumping is iterative through a worklist, never re-entrant.
#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "device_internal.h"
#include "quiesce/sim/device.h"

namespace quiesce::sim {

using namespace internal;  // NOLINT(google-build-using-namespace)

namespace {

std::uint8_t engine_class_of(CommandKind kind) { return kind == CommandKind::Launch ? 0 : 1; }

[[noreturn]] void simulator_bug(const char* what) {
  std::fprintf(stderr, "quiesce::sim::Device internal error: %s.\n", what);
  std::abort();
}

}  // namespace

void Device::schedule_pump(std::uint64_t queue_id) {
  QueueRecord* queue = queues_.find(queue_id);
  if (queue == nullptr || queue->pump_pending) return;
  queue->pump_pending = true;
  pump_list_.push_back(queue_id);
}

void Device::drain() {
  if (draining_) return;  // the outer drain picks up what was scheduled
  draining_ = true;
  constexpr std::size_t kStepsMax = 1U << 24U;
  std::size_t steps = 0;
  do {
    for (std::size_t index = 0; index < pump_list_.size(); ++index) {
      if (++steps > kStepsMax) simulator_bug("a drain of the pump worklist exceeded 2^24 steps");
      const std::uint64_t queue_id = pump_list_[index];
      if (QueueRecord* queue = queues_.find(queue_id)) {
        queue->pump_pending = false;
        pump(queue_id);
      }
    }
    pump_list_.clear();
    dispatch_engines();
  } while (!pump_list_.empty());
  draining_ = false;
}

void Device::dispatch_engines() {
  for (std::uint8_t engine_class = 0; engine_class < 2; ++engine_class) {
    while (engines_free_[engine_class] > 0 && engines_waiting_[engine_class] > 0) {
      std::uint32_t chosen = UINT32_MAX;
      for (std::uint32_t slot = 0; slot < queues_.slots(); ++slot) {
        if (!queues_.live(slot)) continue;
        const QueueRecord& queue = queues_.at(slot);
        if (queue.run != QueueRun::WaitingEngine || queue.engine_class != engine_class) continue;
        if (chosen == UINT32_MAX || queue.ready_order < queues_.at(chosen).ready_order) chosen = slot;
      }
      if (chosen == UINT32_MAX) simulator_bug("an engine waiter count has no waiting queue behind it");
      QueueRecord& queue = queues_.at(chosen);
      engines_waiting_[engine_class]--;
      queue.run = QueueRun::Idle;
      queue.granted = true;
      pump(queues_.id_at(chosen));
    }
  }
}

// Takes the head Replay one node further: Node sets `node` and `store` to the captured command to run;
// Finished means the replay is done and the queue moves on; Blocked means an earlier replay of the same
// executable has not finished (replays of one executable never overlap, like cuGraphLaunch).
Device::ReplayStep Device::step_replay(QueueRecord& queue, BatchRecord& batch, const StagedCommand& command,
                                       const StagedCommand*& node, const CommandStore*& store) {
  ExecutableRecord* executable = executables_.find(command.executable_id);
  if (executable == nullptr) simulator_bug("a staged replay names an executable that no longer exists");
  if (batch.replay_cursor == 0) {
    std::vector<std::uint64_t>& skipped = executable->cancelled_tickets;
    const std::size_t skipped_max = skipped.size();
    for (std::size_t round = 0; round < skipped_max; ++round) {
      const auto next = std::find(skipped.begin(), skipped.end(), executable->tickets_served);
      if (next == skipped.end()) break;
      executable->tickets_served++;  // a cancelled replay gives its turn away
      skipped.erase(next);
    }
    if (executable->tickets_served != command.replay_ticket) {
      queue.run = QueueRun::BlockedOnReplay;
      queue.blocked_on_id = command.executable_id;
      return ReplayStep::Blocked;
    }
  }
  if (batch.replay_cursor == executable->store.commands.size()) {
    executable->tickets_served++;
    batch.replay_cursor = 0;
    unreference(command, batch.store, false);
    batch.next++;
    wake_blocked(QueueRun::BlockedOnReplay, command.executable_id);
    return ReplayStep::Finished;
  }
  assert(batch.replay_cursor < executable->store.commands.size());
  store = &executable->store;
  node = &executable->store.commands[batch.replay_cursor];
  return ReplayStep::Node;
}

// Whether the queue may take an engine of `engine_class` now. Queues already waiting are served first;
// otherwise the queue joins them, in the order it became ready.
bool Device::engine_available(QueueRecord& queue, std::uint8_t engine_class) {
  assert(queue.run == QueueRun::Idle);
  queue.engine_class = engine_class;
  if (engines_free_[engine_class] > 0 && (engines_waiting_[engine_class] == 0 || queue.granted)) {
    queue.granted = false;
    return true;
  }
  assert(!queue.granted);
  queue.run = QueueRun::WaitingEngine;
  queue.ready_order = ++ready_order_;
  engines_waiting_[engine_class]++;
  return false;
}

void Device::pump(std::uint64_t queue_id) {
  QueueRecord* queue = queues_.find(queue_id);
  if (queue == nullptr || queue->run == QueueRun::Running || queue->run == QueueRun::WaitingEngine ||
      queue->run == QueueRun::Stopped || context_of(queue->context_id).lost) {
    return;
  }
  queue->run = QueueRun::Idle;
  const std::uint64_t steps_max = std::uint64_t{config_.queue_depth_max} * (config_.batch_commands_max + 2) + 2;
  for (std::uint64_t step = 0; step < steps_max; ++step) {
    if (queue->count == 0) {
      queue->granted = false;
      return;
    }
    BatchRecord& batch = queue->ring[queue->head];
    if (batch.cancelled) {
      retire_head(queue_id, *queue);
      continue;
    }
    if (batch.next == batch.store.commands.size()) {
      finish_batch(queue_id, *queue);
      continue;
    }
    const StagedCommand& command = batch.store.commands[batch.next];
    const CommandStore* store = &batch.store;
    const StagedCommand* runnable = &command;
    if (command.kind == CommandKind::Wait) {
      const EventRecord* event = events_.find(command.wait_event_id);
      if (event != nullptr && !is_terminal(event->state)) {
        queue->run = QueueRun::BlockedOnEvent;
        queue->blocked_on_id = command.wait_event_id;
        return;
      }
      unreference(command, batch.store, false);
      batch.next++;
      continue;
    }
    if (command.kind == CommandKind::Replay) {
      const ReplayStep replay = step_replay(*queue, batch, command, runnable, store);
      if (replay == ReplayStep::Blocked) return;
      if (replay == ReplayStep::Finished) continue;
    }
    const std::uint8_t engine_class = engine_class_of(runnable->kind);
    if (!engine_available(*queue, engine_class)) return;
    engines_free_[engine_class]--;
    (void)start_command(queue_id, *queue, batch, *runnable, command, *store, command.kind == CommandKind::Replay);
    return;
  }
  simulator_bug("a queue pump exceeded its step bound");
}

bool Device::start_command(std::uint64_t queue_id, QueueRecord& queue, BatchRecord& batch, const StagedCommand& command,
                           const StagedCommand& stamp, const CommandStore& store, bool replayed) {
  const std::uint64_t now_ns = clock_.now_ns();
  EventRecord* event = events_.find(batch.event_id);
  if (!batch.started) {
    batch.started = true;
    event->started = true;
    event->receipt.started_ns = now_ns;
    oracle_.note_executed(batch.invocation, queue_id, batch.event_id, now_ns);
  }
  note(kCallCommandStart, queue_id, nullptr);
  bool faulted = false;
  const std::uint64_t cost_ns = apply_command(queue_id, queue, command, stamp, store, replayed, faulted);
  if (faulted) {
    engines_free_[queue.engine_class]++;
    lose_context(queue.context_id);
    return false;
  }
  queue.run = QueueRun::Running;
  queue.run_token++;
  const std::uint64_t cookie = (std::uint64_t{SlotTable<QueueRecord>::slot_of(queue_id)} << 32U) |
                               (queue.run_token & SlotTable<QueueRecord>::kSlotMask);
  clock_.schedule(saturating_add(now_ns, jitter(cost_ns)), &timer_, cookie);
  return true;
}

std::uint64_t Device::jitter(std::uint64_t cost_ns) {
  const Ratio ratio = config_.cost_jitter;
  if (ratio.numerator == 0 || cost_ns == 0) return cost_ns;
  // In 64 bits where the product fits (any cost below 2^64 / numerator): one division instead of a
  // call to the 128-bit one (__udivti3), with the same quotient.
  const Uint128 spread = cost_ns <= UINT64_MAX / ratio.numerator
                             ? Uint128{cost_ns * ratio.numerator / ratio.denominator}
                             : static_cast<Uint128>(cost_ns) * ratio.numerator / ratio.denominator;
  const std::uint64_t bound = spread >= UINT64_MAX ? UINT64_MAX : static_cast<std::uint64_t>(spread) + 1;
  return saturating_add(cost_ns, cost_prng_.below(bound));
}

void Device::on_command_finished(std::uint64_t cookie) {
  const auto slot = static_cast<std::uint32_t>(cookie >> 32U);
  if (!queues_.live(slot)) return;
  QueueRecord& queue = queues_.at(slot);
  if (queue.run != QueueRun::Running || (queue.run_token & SlotTable<QueueRecord>::kSlotMask) != (cookie & SlotTable<QueueRecord>::kSlotMask)) {
    return;  // a stale timer of a stopped or discarded run
  }
  const std::uint64_t queue_id = queues_.id_at(slot);
  engines_free_[queue.engine_class]++;
  assert(queue.count > 0);
  BatchRecord& batch = queue.ring[queue.head];
  assert(batch.next < batch.store.commands.size());
  const StagedCommand& command = batch.store.commands[batch.next];
  if (command.kind == CommandKind::Replay) {
    batch.replay_cursor++;
  } else {
    unreference(command, batch.store, false);
    batch.next++;
  }
  queue.run = QueueRun::Idle;
  note(kCallCommandFinish, queue_id, nullptr);
  schedule_pump(queue_id);
  drain();
}

void Device::finish_batch(std::uint64_t queue_id, QueueRecord& queue) {
  BatchRecord& batch = queue.ring[queue.head];
  assert(batch.next == batch.store.commands.size() && !batch.cancelled);
  EventRecord* event = events_.find(batch.event_id);
  if (event == nullptr) simulator_bug("a batch finished whose event was already destroyed");
  assert(!is_terminal(event->state));
  const std::uint64_t now_ns = clock_.now_ns();
  if (!batch.started) {
    // A batch of waits only: it executes when its last wait is satisfied.
    oracle_.note_executed(batch.invocation, queue_id, batch.event_id, now_ns);
    event->receipt.started_ns = now_ns;
  }
  event->state = quiesce::EventState::Complete;
  event->receipt.finished_ns = now_ns;
  const std::uint64_t event_id = batch.event_id;
  retire_head(queue_id, queue);
  wake_blocked(QueueRun::BlockedOnEvent, event_id);
}

void Device::retire_head(std::uint64_t queue_id, QueueRecord& queue) {
  assert(queue.count > 0);
  assert(queue.batches_retired < queue.batches_submitted);
  queue.ring[queue.head].store.clear();
  queue.head = (queue.head + 1) % config_.queue_depth_max;
  queue.count--;
  queue.batches_retired++;
  if (!deferred_frees_.empty()) process_deferred_frees(queue_id);
}

void Device::wake_blocked(QueueRun reason, std::uint64_t blocked_on_id) {
  for (std::uint32_t slot = 0; slot < queues_.slots(); ++slot) {
    if (!queues_.live(slot)) continue;
    QueueRecord& queue = queues_.at(slot);
    if (queue.run != reason || queue.blocked_on_id != blocked_on_id) continue;
    queue.run = QueueRun::Idle;
    schedule_pump(queues_.id_at(slot));
  }
}

void Device::stop_queue(QueueRecord& queue) {
  if (queue.run == QueueRun::Running) engines_free_[queue.engine_class]++;
  if (queue.run == QueueRun::WaitingEngine) engines_waiting_[queue.engine_class]--;
  queue.run = QueueRun::Stopped;
  queue.run_token++;
  queue.granted = false;
}

void Device::lose_context(std::uint64_t context_id) {
  ContextRecord* context = contexts_.find(context_id);
  if (context == nullptr || context->lost) return;
  context->lost = true;
  context->lost_ns = clock_.now_ns();
  for (std::uint32_t slot = 0; slot < queues_.slots(); ++slot) {
    if (queues_.live(slot) && queues_.at(slot).context_id == context_id) stop_queue(queues_.at(slot));
  }
}

bool Device::queue_idle(std::uint64_t queue_id) const {
  const QueueRecord* queue = queues_.find(queue_id);
  return queue == nullptr || queue->count == 0;
}

bool Device::device_idle() const {
  for (std::uint32_t slot = 0; slot < queues_.slots(); ++slot) {
    if (!queues_.live(slot)) continue;
    const QueueRecord& queue = queues_.at(slot);
    if (queue.count != 0 && queue.run != QueueRun::Stopped) return false;
  }
  return true;
}

// ---- command effects ----

bool Device::check_alive(const ResolvedBuffer& buffer, std::uint64_t queue_id, const Accessor& accessor) {
  const BufferRecord* record = buffers_.find(buffer.id);
  const bool alive = record != nullptr && (record->phase == BufferPhase::Live ||
                                           (record->phase == BufferPhase::FreePending && record->queue_id == queue_id));
  if (alive) return true;
  oracle_.report(Finding{FindingKind::UseAfterFree, clock_.now_ns(), buffer.id, queue_id, 0, accessor.event_id, 0,
                         "a command on queue " + std::to_string(queue_id) + " touched buffer " +
                             std::to_string(buffer.id) + " after it was released."});
  return false;
}

void Device::device_read(const ResolvedBuffer& buffer, std::uint64_t offset, std::uint64_t bytes,
                         const Accessor& accessor) {
  if (bytes == 0) return;
  const std::uint64_t unwritten = backing_.first_unwritten(buffer.address + offset, bytes);
  if (unwritten < bytes) {
    oracle_.report(Finding{FindingKind::UninitializedRead, clock_.now_ns(), buffer.id, accessor.queue_id, 0,
                           accessor.event_id, 0,
                           "byte " + std::to_string(offset + unwritten) + " of buffer " + std::to_string(buffer.id) +
                               " was read but never written since it was allocated."});
  }
  oracle_.access(SlotTable<BufferRecord>::slot_of(buffer.id), buffer.id, offset, offset + bytes, false, accessor,
                 clock_.now_ns());
}

void Device::device_write(const ResolvedBuffer& buffer, std::uint64_t offset, std::uint64_t bytes,
                          const Accessor& accessor) {
  if (bytes == 0) return;
  backing_.mark_written(buffer.address + offset, bytes);
  oracle_.access(SlotTable<BufferRecord>::slot_of(buffer.id), buffer.id, offset, offset + bytes, true, accessor,
                 clock_.now_ns());
}

}  // namespace quiesce::sim

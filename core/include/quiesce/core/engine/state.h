// The engine's bookkeeping: one slot per resource it holds and one record per submission in flight.
//
// Pins are what fenced deletion counts: a buffer is pinned by every submission whose event is not yet
// destroyed and by every executable that captured it; it is released only when no pin remains. A resource
// that something quarantined has pinned carries `sticky_cause`: it stays retained forever (R2), and its
// release request moves it to quarantine instead of the backend.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "quiesce/core/engine/report.h"
#include "quiesce/core/engine/types.h"
#include "quiesce/core/handles.h"
#include "quiesce/core/outcome.h"

namespace quiesce::engine_detail {

// Retries of a rejected release: bounded in attempts and in virtual time (Env clock).
struct RetryState {
  std::uint32_t attempts = 0;
  std::uint64_t first_rejected_ns = 0;
  std::uint64_t next_attempt_ns = 0;
  Error last_error = {};
};

struct StickyCause {
  QuarantineCause cause = QuarantineCause::PinnedByQuarantine;
  Error error = {};
};

struct BufferUse {
  std::uint64_t submission = 0;
  QueueIndex queue = 0;
  bool reads = false;
  bool writes = false;
};

struct BufferSlot {
  Buffer handle;
  BufferRequest request;
  std::uint64_t charged_bytes = 0;
  // Submissions whose events are not destroyed yet, in serial order. A deque: they mostly retire oldest
  // first, and erasing the front of a vector would move every later use.
  std::deque<BufferUse> uses;
  std::vector<std::uint32_t> uses_per_queue;  // of `uses`, how many each queue has (indexed by queue)
  std::uint32_t graph_pins = 0;
  bool release_requested = false;
  RetryState retry;
  std::optional<StickyCause> sticky;

  std::size_t pins() const { return uses.size() + graph_pins; }
};

struct ProgramSlot {
  Program handle;
  std::uint64_t resident_bytes = 0;
  std::uint32_t submission_pins = 0;
  std::uint32_t graph_pins = 0;
  bool release_requested = false;
  RetryState retry;
  std::optional<StickyCause> sticky;

  std::uint32_t pins() const { return submission_pins + graph_pins; }
};

// One buffer a batch or a captured graph touches, and how.
struct BufferAccess {
  std::uint64_t buffer = 0;
  bool reads = false;
  bool writes = false;
  // The buffer's slot, found once when the batch is translated, so that ordering and pinning do not look
  // it up again. A map node does not move while the buffer lives, and a batch's or a graph's buffers live
  // as long as the batch or graph pins them.
  BufferSlot* slot = nullptr;
};

struct GraphSlot {
  Executable handle;
  QueueIndex queue = 0;
  std::vector<std::uint64_t> buffers;   // pinned for the executable's lifetime
  std::vector<std::uint64_t> programs;  // likewise
  std::vector<BufferAccess> accesses;    // what one replay reads and writes: its hazards
  std::vector<std::uint64_t> live_replays;  // submissions whose events are not destroyed yet
  bool destroy_requested = false;
  RetryState retry;
  std::optional<StickyCause> sticky;
};

struct Submission {
  Event event;
  QueueIndex queue = 0;
  std::uint64_t invocation = 0;
  std::uint32_t epoch = 0;
  bool fire_and_forget = false;
  bool timing_requested = false;
  std::vector<std::uint64_t> buffers;
  std::vector<std::uint64_t> programs;
  std::vector<std::uint64_t> graphs;
  std::vector<std::uint64_t> waits_on;  // submissions whose events this batch waits for
  std::uint32_t dependents = 0;         // live submissions that wait for this one's event
  bool submitted = false;               // false while a rejected submit is being retried
  bool terminal = false;
  bool indeterminate = false;  // an indeterminate submit, poll or wait was seen and no terminal since
  bool failure_queued = false;
  bool partial = false;  // an indeterminate submit that knew fewer commands enqueued than the batch held
  EventState state = EventState::Pending;
  Error error = {};
  std::optional<TimingReceipt> timing = std::nullopt;
  RetryState destroy_retry;

  // Back to a fresh record, keeping the vectors' storage: the engine reuses retired records (and their map
  // nodes) so that a submission in the steady state allocates nothing.
  void reset() {
    event = Event{};
    queue = 0;
    invocation = 0;
    epoch = 0;
    fire_and_forget = false;
    timing_requested = false;
    buffers.clear();
    programs.clear();
    graphs.clear();
    waits_on.clear();
    dependents = 0;
    submitted = false;
    terminal = false;
    indeterminate = false;
    failure_queued = false;
    partial = false;
    state = EventState::Pending;
    error = {};
    timing = std::nullopt;
    destroy_retry = {};
  }

  SubmissionFate fate() const {
    if (terminal) {
      if (partial) return SubmissionFate::Partial;
      if (state == EventState::Complete) return SubmissionFate::Complete;
      if (state == EventState::Cancelled) return SubmissionFate::Cancelled;
      return SubmissionFate::Failed;
    }
    return indeterminate ? SubmissionFate::Indeterminate : SubmissionFate::Pending;
  }
};

// What remains known of a submission after its event was destroyed.
struct FateRecord {
  SubmissionFate fate = SubmissionFate::Unknown;
  SubmissionReceipt receipt = {};
};

// The fates of retired submissions, by serial: a ring of fate_history_max slots indexed by serial modulo
// that bound, grown as serials reach it. A lookup is one index and one compare, and a retirement writes a
// slot, where an ordered map walked a tree and moved a node. Serials only grow and submissions retire
// mostly in order, so a slot is taken over by a serial one bound later: the history holds the fates of the
// submissions among the last fate_history_max serials the engine issued (resources take serials too). A
// submission that retires after a newer serial took its slot is already out of that window, and is not kept.
class FateHistory {
 public:
  explicit FateHistory(std::uint32_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  void put(std::uint64_t serial, const FateRecord& record) {
    assert(serial != 0);  // 0 marks an empty slot
    const auto index = static_cast<std::size_t>(serial % capacity_);
    if (index >= slots_.size()) slots_.resize(index + 1);
    Slot& slot = slots_[index];
    if (slot.serial > serial) return;  // a newer serial holds the slot: this one is out of the window
    slot.serial = serial;
    slot.record = record;
  }

  const FateRecord* find(std::uint64_t serial) const {
    const auto index = static_cast<std::size_t>(serial % capacity_);
    if (serial == 0 || index >= slots_.size() || slots_[index].serial != serial) return nullptr;
    return &slots_[index].record;
  }

 private:
  struct Slot {
    std::uint64_t serial = 0;
    FateRecord record;
  };
  std::uint64_t capacity_;
  std::vector<Slot> slots_;
};

struct QueueSlot {
  Queue handle;
  std::uint64_t serial = 0;
  bool prepared = false;  // prepare_graph was called: captures are allowed
};

struct ProfileWindow {
  std::vector<std::uint64_t> submissions;
};

template <class T>
void erase_value(std::vector<T>& values, const T& value) {
  values.erase(std::remove(values.begin(), values.end(), value), values.end());
}

template <class T>
void push_unique(std::vector<T>& values, const T& value) {
  if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
}

}  // namespace quiesce::engine_detail

// The validator's shadow of every handle it has seen: records, tables keyed by handle id, pin lists.
//
// Ids below ValidatorOptions::dense_ids_max index a vector directly (O(1), no hashing, allocation only when
// a new highest id appears); larger ids fall back to an ordered map whose records are erased once the
// handle is released, so a run that outgrows the dense range keeps memory bounded by its live handles.
// Iteration (leak reports at finish) is by ascending id, so reports are deterministic.
#pragma once

#include <cassert>
#include <cstdint>
#include <map>
#include <vector>

#include "quiesce/core/outcome.h"
#include "quiesce/core/types.h"
#include "quiesce/core/validator/violation.h"

namespace quiesce {

enum class Life : std::uint8_t {
  Absent,       // never created through this validator
  Live,
  Released,     // consumed by a successful release (or a discard of the context itself)
  Invalidated,  // consumed by an indeterminate release: never usable again
};

enum class CancelDecision : std::uint8_t { None, Won, Lost };

// One handle the event or executable keeps alive: what a later release must wait for.
struct PinRef {
  HandleKind kind = HandleKind::None;
  std::uint64_t id = 0;
};

struct ContextShadow {
  std::uint32_t epoch = 0;
  Life life = Life::Absent;
  bool lost = false;       // a DeviceLost was observed on it
  bool discarded = false;
  std::uint32_t children_live = 0;  // buffers, programs, queues and executables
  std::uint32_t capturing_queues = 0;
};

struct BufferShadow {
  std::uint32_t epoch = 0;
  Life life = Life::Absent;
  BufferUsage usage = BufferUsage::None;
  std::uint64_t context = 0;
  std::uint64_t bytes = 0;
  std::uint32_t event_pins = 0;       // live events whose batch references it
  std::uint32_t executable_pins = 0;  // live executables (and open captures) that captured it
};

struct ProgramShadow {
  std::uint32_t epoch = 0;
  Life life = Life::Absent;
  std::uint64_t context = 0;
  std::uint32_t event_pins = 0;
  std::uint32_t executable_pins = 0;
};

struct QueueShadow {
  std::uint32_t epoch = 0;
  Life life = Life::Absent;
  bool capturing = false;
  bool watching_retry = false;  // the last decided submit here was indeterminate
  std::uint64_t context = 0;
  std::uint32_t live_events = 0;
  std::uint32_t capture_pins = 0;  // pin list of the open capture window (0: none)
  std::uint64_t submits = 0;       // submissions that produced an event, in order
  std::uint64_t synced_through = 0;  // submissions covered by a successful synchronize
  std::uint64_t indeterminate_batch_digest = 0;
};

struct EventShadow {
  std::uint32_t epoch = 0;
  Life life = Life::Absent;
  EventState observed = EventState::Pending;  // the terminal once terminal_seen
  bool terminal_seen = false;
  bool timing_requested = false;
  CancelDecision cancel = CancelDecision::None;
  std::uint64_t context = 0;
  std::uint64_t queue = 0;
  std::uint64_t sequence = 0;  // its position among the queue's submissions (1-based)
  std::uint32_t pins = 0;      // pin list index (0: none)
};

struct ExecutableShadow {
  std::uint32_t epoch = 0;
  Life life = Life::Absent;
  std::uint64_t context = 0;
  std::uint32_t event_pins = 0;       // live events that replay it
  std::uint32_t executable_pins = 0;  // live executables that captured a replay of it
  std::uint32_t pins = 0;             // pin list of what it captured
};

template <class Record>
class ShadowTable {
 public:
  explicit ShadowTable(std::uint64_t dense_ids_max) : dense_ids_max_(dense_ids_max) {}

  // The record of `id`, or nullptr when no handle of that id was ever created here.
  Record* find(std::uint64_t id) {
    if (id < dense_ids_max_) {
      if (id >= dense_.size() || dense_[id].life == Life::Absent) return nullptr;
      return &dense_[id];
    }
    const auto found = sparse_.find(id);
    return found == sparse_.end() ? nullptr : &found->second;
  }

  // A fresh record for a newly created handle. Invalidates pointers into this table.
  Record& create(std::uint64_t id) {
    assert(id != 0);
    if (id < dense_ids_max_) {
      if (id >= dense_.size()) dense_.resize(id + 1);
      dense_[id] = Record{};
      return dense_[id];
    }
    Record& record = sparse_[id];
    record = Record{};
    return record;
  }

  // Called once a handle is consumed: dense records stay (to catch a later use after release), sparse
  // ones are dropped to bound memory (a later use is then reported as an unknown handle).
  void retire(std::uint64_t id) {
    if (id >= dense_ids_max_) sparse_.erase(id);
  }

  std::size_t sparse_size() const { return sparse_.size(); }

  // Visits every record ever created that is still present, by ascending id.
  template <class Visit>
  void for_each(Visit&& visit) {
    for (std::uint64_t id = 1; id < dense_.size(); ++id) {
      if (dense_[id].life != Life::Absent) visit(id, dense_[id]);
    }
    for (auto& [id, record] : sparse_) visit(id, record);
  }

 private:
  std::uint64_t dense_ids_max_;
  std::vector<Record> dense_;
  std::map<std::uint64_t, Record> sparse_;
};

// Pin lists of events and executables, recycled so the steady state allocates nothing: a list keeps its
// capacity when it returns to the free pool. Index 0 means "no list".
class PinLists {
 public:
  static constexpr std::uint32_t kPinsPerListMax = 1U << 16;

  PinLists() { lists_.emplace_back(); }

  std::uint32_t acquire() {
    if (!free_.empty()) {
      const std::uint32_t index = free_.back();
      free_.pop_back();
      assert(lists_[index].empty());
      return index;
    }
    lists_.emplace_back();
    return static_cast<std::uint32_t>(lists_.size() - 1);
  }

  void release(std::uint32_t index) {
    assert(index != 0 && index < lists_.size());
    lists_[index].clear();
    free_.push_back(index);
  }

  std::vector<PinRef>& at(std::uint32_t index) {
    assert(index != 0 && index < lists_.size());
    return lists_[index];
  }

 private:
  std::vector<std::vector<PinRef>> lists_;
  std::vector<std::uint32_t> free_;
};

}  // namespace quiesce

// The validator's shadow of every handle it has seen: records, tables keyed by handle id, pin lists.
//
// The steady state allocates nothing: tables grow only when more handles are live than ever before, and
// pin lists are recycled.
#pragma once

#include <cassert>
#include <cstdint>
#include <algorithm>
#include <cstddef>
#include <utility>
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
  std::uint64_t ordering_queue = 0;   // the queue of a stream-ordered buffer; 0 for a direct one
  std::uint32_t event_pins = 0;       // live events (of other queues than ordering_queue) referencing it
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

// Shadow records keyed by handle id: an open-addressing hash table (linear probing, power-of-two capacity,
// backward-shift deletion)
// so that any id scheme works in O(1) (dense counters, or the simulator's generation << 32 | slot). A
// consumed handle's record stays findable, so a later use is reported as a use after release, until
// `retired_remembered_max` newer handles of the same kind were consumed: then the oldest is forgotten (a
// use of it is reported as an unknown handle), which bounds memory by live handles plus that window.
// Iteration is by ascending id, so reports are deterministic whatever the hash order.
template <class Record>
class ShadowTable {
 public:
  explicit ShadowTable(std::uint32_t retired_remembered_max) : retired_ring_(retired_remembered_max, 0) {
    ids_.assign(kInitialCapacity, 0);
    records_.resize(kInitialCapacity);
  }

  // The record of `id`, or nullptr when no handle of that id is known here.
  Record* find(std::uint64_t id) {
    const std::size_t index = find_index(id);
    return index == kAbsent ? nullptr : &records_[index];
  }

  // A fresh record for a newly created handle. Invalidates pointers into this table.
  Record& create(std::uint64_t id) {
    assert(id != 0);
    if (Record* existing = find(id)) {
      *existing = Record{};
      return *existing;
    }
    // At most half full: a lookup that misses (every create asks first) walks to an empty slot, a walk
    // that grows fast with the load under linear probing, and a slot costs only an id and a record.
    if ((used_ + 1) * 2 > ids_.size()) rehash(ids_.size() * 2);
    const std::size_t mask = ids_.size() - 1;
    std::size_t index = mix(id) & mask;
    while (ids_[index] != 0) index = (index + 1) & mask;
    ids_[index] = id;
    records_[index] = Record{};
    used_++;
    return records_[index];
  }

  // Called once a handle is consumed: its record is remembered for a while, then forgotten.
  void retire(std::uint64_t id) {
    if (retired_ring_.empty()) {
      erase(id);
      return;
    }
    const std::uint64_t oldest = retired_ring_[ring_next_];
    if (oldest != 0) {
      const Record* record = find(oldest);
      if (record != nullptr && record->life != Life::Live) erase(oldest);
    }
    retired_ring_[ring_next_] = id;
    ring_next_ = ring_next_ + 1 == retired_ring_.size() ? 0 : ring_next_ + 1;
  }

  std::size_t size() const { return used_; }

  const Record* find(std::uint64_t id) const { return const_cast<ShadowTable*>(this)->find(id); }

  // Visits every known record by ascending id (a rare path: it sorts a list of the ids).
  template <class Visit>
  void for_each(Visit&& visit) const {
    std::vector<std::pair<std::uint64_t, std::size_t>> order;
    order.reserve(used_);
    for (std::size_t index = 0; index < ids_.size(); ++index) {
      if (ids_[index] != 0) order.emplace_back(ids_[index], index);
    }
    std::sort(order.begin(), order.end());
    for (const auto& [id, index] : order) visit(id, static_cast<const Record&>(records_[index]));
  }

 private:
  static constexpr std::size_t kInitialCapacity = 64;
  static constexpr std::size_t kAbsent = SIZE_MAX;

  // MurmurHash3's 64-bit finalizer, both rounds. Ids are (generation << 32) | slot with few slots, and one
  // round left their homes in clusters that linear probing walked through (about a dozen probes a lookup in
  // the event table of an engine case; some four with both rounds).
  static std::size_t mix(std::uint64_t id) {
    id ^= id >> 33U;
    id *= 0xFF51AFD7ED558CCDULL;
    id ^= id >> 33U;
    id *= 0xC4CEB9FE1A85EC53ULL;
    id ^= id >> 33U;
    return static_cast<std::size_t>(id);
  }

  // Probes the ids alone (8 bytes a slot, apart from the records) so a lookup touches few cache lines.
  std::size_t find_index(std::uint64_t id) const {
    if (id == 0) return kAbsent;
    const std::size_t mask = ids_.size() - 1;
    std::size_t index = mix(id) & mask;
    for (std::size_t probe = 0; probe < ids_.size(); ++probe) {
      const std::uint64_t slot_id = ids_[index];
      if (slot_id == id) return index;
      if (slot_id == 0) return kAbsent;
      index = (index + 1) & mask;
    }
    return kAbsent;
  }

  // Backward-shift deletion: later entries of the probe run move up, so no tombstones accumulate and a
  // table whose live size is steady never needs to rehash.
  void erase(std::uint64_t id) {
    const std::size_t found = find_index(id);
    if (found == kAbsent) return;
    const std::size_t mask = ids_.size() - 1;
    std::size_t hole = found;
    std::size_t next = hole;
    for (std::size_t step = 0; step < ids_.size(); ++step) {
      next = (next + 1) & mask;
      if (ids_[next] == 0) break;
      const std::size_t home = mix(ids_[next]) & mask;
      // The entry at `next` may move into the hole only if its home is not cyclically in (hole, next].
      const bool home_between = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next);
      if (home_between) continue;
      ids_[hole] = ids_[next];
      records_[hole] = records_[next];
      hole = next;
    }
    ids_[hole] = 0;
    records_[hole] = Record{};
    used_--;
  }

  void rehash(std::size_t capacity) {
    std::vector<std::uint64_t> old_ids = std::move(ids_);
    std::vector<Record> old_records = std::move(records_);
    ids_.assign(capacity, 0);
    records_.assign(capacity, Record{});
    used_ = 0;
    const std::size_t mask = capacity - 1;
    for (std::size_t old = 0; old < old_ids.size(); ++old) {
      if (old_ids[old] == 0) continue;
      std::size_t index = mix(old_ids[old]) & mask;
      while (ids_[index] != 0) index = (index + 1) & mask;
      ids_[index] = old_ids[old];
      records_[index] = old_records[old];
      used_++;
    }
  }

  std::vector<std::uint64_t> ids_;  // 0: empty
  std::vector<Record> records_;     // records_[i] belongs to ids_[i]
  std::size_t used_ = 0;
  std::vector<std::uint64_t> retired_ring_;
  std::size_t ring_next_ = 0;
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

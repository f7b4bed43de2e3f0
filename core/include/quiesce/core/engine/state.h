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
#include <iterator>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>
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

// A buffer's uses in serial order, which mostly retire oldest first: a vector and the index of its first
// live use, so that retiring the front moves nothing. Dead uses at the front are dropped when the vector
// would grow or when none is left. Unlike std::deque, an empty list allocates nothing, which matters for
// the many buffers that are created and released without ever being pinned.
class UseList {
 public:
  using iterator = std::vector<BufferUse>::iterator;
  using const_iterator = std::vector<BufferUse>::const_iterator;

  bool empty() const { return head_ == uses_.size(); }
  std::size_t size() const { return uses_.size() - head_; }
  std::size_t capacity() const { return uses_.capacity(); }  // uses it holds storage for, retired ones included
  iterator begin() { return uses_.begin() + static_cast<std::ptrdiff_t>(head_); }
  iterator end() { return uses_.end(); }
  const_iterator begin() const { return uses_.begin() + static_cast<std::ptrdiff_t>(head_); }
  const_iterator end() const { return uses_.end(); }
  BufferUse& back() { return uses_.back(); }
  const BufferUse& back() const { return uses_.back(); }

  BufferUse& emplace_back() {
    if (head_ != 0 && uses_.size() == uses_.capacity()) {
      uses_.erase(uses_.begin(), uses_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
    return uses_.emplace_back();
  }
  void pop_front() {
    assert(!empty());
    if (++head_ == uses_.size()) clear();
  }
  // Retiring the front (the common case) moves nothing; a use further in moves the ones after it.
  void erase(const_iterator at) {
    assert(at >= begin() && at < end());
    if (at == begin()) return pop_front();
    uses_.erase(at);
  }
  void clear() {
    uses_.clear();
    head_ = 0;
  }

 private:
  std::vector<BufferUse> uses_;
  std::size_t head_ = 0;  // uses_[0, head_) are retired
};

struct BufferSlot {
  Buffer handle;
  BufferRequest request;
  std::uint64_t charged_bytes = 0;
  // Submissions whose events are not destroyed yet, in serial order.
  UseList uses;
  std::vector<std::uint32_t> uses_per_queue;  // of `uses`, how many each queue has (indexed by queue)
  std::uint32_t graph_pins = 0;
  bool release_requested = false;
  RetryState retry;
  std::optional<StickyCause> sticky;

  std::size_t pins() const { return uses.size() + graph_pins; }
  // Whether a queue other than `queue` has an unfinished use of the buffer.
  // uses_per_queue counts every use in `uses`, so its other entries answer without deque::size().
  bool used_by_other_queues(QueueIndex queue) const {
    for (std::size_t other = 0; other < uses_per_queue.size(); ++other) {
      if (other != queue && uses_per_queue[other] != 0) return true;
    }
    return false;
  }
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

// Appends a use built in place, field by field: copying a temporary that was just written a field at a time
// reads it back wider than it was written, which stalls (the stores cannot be forwarded to the load).
inline void append_access(std::vector<BufferAccess>& uses, std::uint64_t buffer, bool reads, bool writes,
                          BufferSlot* slot) {
  BufferAccess& access = uses.emplace_back();
  access.buffer = buffer;
  access.reads = reads;
  access.writes = writes;
  access.slot = slot;
}

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
  // The slots of the buffers and programs it pins, found when the batch was translated: a pinned slot
  // neither moves nor goes while the pin lasts.
  std::vector<BufferSlot*> buffers;
  std::vector<ProgramSlot*> programs;
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

// The live submission records in serial order, oldest first: a ring of entries. Serials only grow, so a
// new record goes at the back and a lookup is a binary search over a contiguous run, where an ordered map
// walked a tree and allocated or moved a node. An erased record leaves a vacant entry, dropped once it
// reaches either end; its vectors keep their storage for a later record. As in an ordered map, a record
// stays where it is until it is erased, so references and iterators to the others stay valid across an
// erase, and stepping an iterator past the last live record reaches end(). The exception is
// emplace_back() on a full ring, which moves live records (together in place, or into a ring twice the
// size): the engine calls it only while it holds no reference to a record (at the start of a submit).
class SubmissionTable {
 public:
  using Entry = std::pair<std::uint64_t, Submission>;

  template <bool kConst>
  class Cursor {
   public:
    using Table = std::conditional_t<kConst, const SubmissionTable, SubmissionTable>;
    using iterator_category = std::forward_iterator_tag;
    using value_type = Entry;
    using difference_type = std::ptrdiff_t;
    using pointer = std::conditional_t<kConst, const Entry*, Entry*>;
    using reference = std::conditional_t<kConst, const Entry&, Entry&>;

    Cursor() = default;
    Cursor(Table* table, std::uint64_t position) : table_(table), position_(position) {}
    operator Cursor<true>() const { return Cursor<true>(table_, position_); }  // NOLINT: as map's iterators

    reference operator*() const { return table_->entry(position_); }
    pointer operator->() const { return &table_->entry(position_); }
    Cursor& operator++() {
      position_ = table_->next_live(position_ + 1);
      return *this;
    }
    Cursor operator++(int) {
      Cursor before = *this;
      ++*this;
      return before;
    }
    // A cursor stands on a live record or at kEnd: stepping past the last live record reaches kEnd.
    friend bool operator==(const Cursor& a, const Cursor& b) { return a.position_ == b.position_; }
    std::uint64_t position() const { return position_; }

   private:
    Table* table_ = nullptr;
    std::uint64_t position_ = kEnd;
  };
  using iterator = Cursor<false>;
  using const_iterator = Cursor<true>;

  std::size_t size() const { return live_; }
  bool empty() const { return live_ == 0; }
  std::size_t capacity() const { return ring_.size(); }
  iterator begin() { return iterator(this, next_live(head_)); }
  iterator end() { return iterator(this, kEnd); }
  const_iterator begin() const { return const_iterator(this, next_live(head_)); }
  const_iterator end() const { return const_iterator(this, kEnd); }

  iterator find(std::uint64_t serial) {
    const std::uint64_t position = locate(serial);
    return position == kEnd ? end() : iterator(this, position);
  }
  Submission& at(std::uint64_t serial) {
    const std::uint64_t position = locate(serial);
    if (position == kEnd) throw std::out_of_range("no live submission has this serial");
    return entry(position).second;
  }

  // A fresh record for `serial`, newer than every record in the table.
  Submission& emplace_back(std::uint64_t serial) {
    assert(count_ == 0 || entry(head_ + count_ - 1).first < serial);
    if (count_ == ring_.size()) rebuild();
    const std::uint64_t position = head_ + count_;
    Entry& slot = entry(position);
    slot.first = serial;
    slot.second.reset();
    vacant_[index(position)] = 0;
    count_++;
    live_++;
    return slot.second;
  }

  // Erases the record at `it`; returns the iterator to the next live record.
  iterator erase(iterator it) {
    const std::uint64_t position = it.position();
    assert(!past_end(position) && vacant_[index(position)] == 0);
    vacant_[index(position)] = 1;
    live_--;
    while (count_ != 0 && vacant_[index(head_)] != 0) {
      head_++;
      count_--;
    }
    while (count_ != 0 && vacant_[index(head_ + count_ - 1)] != 0) count_--;
    return iterator(this, next_live(position + 1 > head_ ? position + 1 : head_));
  }

  // Erases every record; each is reset, so that no handle outlives the call in a vacant entry.
  void clear() {
    for (std::uint64_t position = head_; position < head_ + count_; ++position) {
      entry(position).second.reset();
      vacant_[index(position)] = 1;
    }
    head_ += count_;
    count_ = 0;
    live_ = 0;
  }

 private:
  static constexpr std::uint64_t kEnd = UINT64_MAX;
  static constexpr std::size_t kInitialCapacity = 16;

  std::size_t index(std::uint64_t position) const { return static_cast<std::size_t>(position & mask_); }
  Entry& entry(std::uint64_t position) { return ring_[index(position)]; }
  const Entry& entry(std::uint64_t position) const { return ring_[index(position)]; }
  bool past_end(std::uint64_t position) const { return position == kEnd || position >= head_ + count_; }

  std::uint64_t next_live(std::uint64_t position) const {
    for (; position < head_ + count_; ++position) {
      if (vacant_[index(position)] == 0) return position;
    }
    return kEnd;
  }

  // The position of the live record of `serial`, or kEnd.
  std::uint64_t locate(std::uint64_t serial) const {
    std::uint64_t low = head_;
    std::uint64_t high = head_ + count_;
    while (low < high) {
      const std::uint64_t middle = low + (high - low) / 2;
      if (entry(middle).first < serial) {
        low = middle + 1;
      } else {
        high = middle;
      }
    }
    if (low == head_ + count_ || entry(low).first != serial || vacant_[index(low)] != 0) return kEnd;
    return low;
  }

  // Room at the back of a full ring: the live records moved together in place when they fill at most half
  // of it (swapped with vacant entries, so every entry keeps its storage), else a ring twice the size.
  void rebuild() {
    if (!ring_.empty() && live_ * 2 <= ring_.size()) {
      std::uint64_t write = head_;
      for (std::uint64_t read = head_; read < head_ + count_; ++read) {
        if (vacant_[index(read)] != 0) continue;
        if (read != write) {  // every entry in [write, read) is vacant
          std::swap(entry(write), entry(read));
          vacant_[index(write)] = 0;
          vacant_[index(read)] = 1;
        }
        write++;
      }
      count_ = static_cast<std::size_t>(write - head_);
      return;
    }
    const std::size_t capacity = ring_.empty() ? kInitialCapacity : ring_.size() * 2;
    std::vector<Entry> ring(capacity);
    std::vector<std::uint8_t> vacant(capacity, 1);
    std::size_t kept = 0;
    for (std::uint64_t position = head_; position < head_ + count_; ++position) {
      if (vacant_[index(position)] != 0) continue;
      std::swap(ring[kept], entry(position));
      vacant[kept] = 0;
      kept++;
    }
    ring_ = std::move(ring);
    vacant_ = std::move(vacant);
    mask_ = capacity - 1;
    head_ = 0;
    count_ = kept;
  }

  std::vector<Entry> ring_;           // a power of two in size, or empty
  std::vector<std::uint8_t> vacant_;  // 1 where ring_ holds no live record
  std::uint64_t mask_ = 0;            // ring_.size() - 1
  std::uint64_t head_ = 0;            // the position of the oldest entry; position p lives at p mod size
  std::size_t count_ = 0;             // entries from head_ on, vacant ones between live ones included
  std::size_t live_ = 0;
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

// `value` by value: a small pair then travels in registers. Read back from the caller's stack, a temporary
// written a field at a time stalls the load (the store cannot be forwarded to a wider read).
template <class T>
void push_unique(std::vector<T>& values, T value) {
  if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
}

}  // namespace quiesce::engine_detail

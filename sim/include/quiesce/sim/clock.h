// The virtual clock: integer-nanosecond simulated time and the one ordered queue of timed events.
//
// Everything that happens "later" in a simulation (a command finishing on the device, a fiber's sleep
// ending, an admission timeout) is an entry here. Entries fire in (time, sequence) order, so two events at
// the same nanosecond fire in the order they were scheduled: the run is deterministic. Firing calls the
// target's on_timer with the cookie it scheduled; no std::function, no allocation once the heap is warm.
// Tests advance time by hand (advance_to), jump to the next event (run_next), or run until nothing is left
// (run_until_idle).
//
// Virtual time saturates: a cost or a timeout that would carry the clock past the last nanosecond it can
// show ends at that nanosecond instead of wrapping to the past. kNever (2^64 - 1) is not a time but "no
// deadline", so the last reachable nanosecond is kTimeNsMax = 2^64 - 2; a wait for a finite time always
// ends, and once the clock stands at kTimeNsMax further costs take no time. Cost profiles bound each cost
// far below this (sim/config.h), so only a configuration built in code can get there.
#pragma once

#include <cassert>
#include <cstdint>
#include <vector>

namespace quiesce::sim {

class TimerTarget {
 public:
  TimerTarget() = default;
  TimerTarget(const TimerTarget&) = default;
  TimerTarget& operator=(const TimerTarget&) = default;
  virtual ~TimerTarget() = default;
  virtual void on_timer(std::uint64_t cookie, std::uint64_t now_ns) = 0;
};

class VirtualClock {
 public:
  static constexpr std::uint64_t kNever = UINT64_MAX;  // "no deadline", never a time
  static constexpr std::uint64_t kTimeNsMax = kNever - 1;

  VirtualClock() { heap_.reserve(1024); }

  std::uint64_t now_ns() const { return now_ns_; }
  bool idle() const { return heap_.empty(); }
  std::uint64_t next_event_ns() const { return heap_.empty() ? kNever : heap_.front().time_ns; }
  std::uint64_t events_fired() const { return events_fired_; }

  // Schedules target->on_timer(cookie) at time_ns (not before now). Returns the entry's sequence number.
  std::uint64_t schedule(std::uint64_t time_ns, TimerTarget* target, std::uint64_t cookie) {
    assert(target != nullptr);
    if (time_ns < now_ns_) time_ns = now_ns_;
    const std::uint64_t sequence = next_sequence_++;
    heap_.push_back(Entry{time_ns, sequence, target, cookie});
    sift_up(heap_.size() - 1);
    return sequence;
  }

  // Fires every entry due at or before time_ns, in order, then sets the clock to time_ns.
  void advance_to(std::uint64_t time_ns) {
    while (!heap_.empty() && heap_.front().time_ns <= time_ns) fire_front();
    if (time_ns > now_ns_) now_ns_ = time_ns;
  }
  void advance_by(std::uint64_t delta_ns) { advance_to(deadline_after(delta_ns)); }

  // The time delta_ns from now, saturated at kTimeNsMax: a finite delay must never become kNever, which a
  // Waiter reads as "wait for ever". (An event scheduled at kNever can carry now past kTimeNsMax; a deadline
  // already passed then ends any wait at once.)
  std::uint64_t deadline_after(std::uint64_t delta_ns) const {
    const std::uint64_t room_ns = now_ns_ < kTimeNsMax ? kTimeNsMax - now_ns_ : 0;
    return delta_ns >= room_ns ? kTimeNsMax : now_ns_ + delta_ns;
  }

  // Jumps to the next entry's time and fires every entry due then. False when nothing is scheduled.
  bool run_next() {
    if (heap_.empty()) return false;
    advance_to(heap_.front().time_ns);
    return true;
  }

  // Fires entries until none is left or `events_max` have fired. False when the bound was hit.
  bool run_until_idle(std::uint64_t events_max) {
    std::uint64_t fired = 0;
    while (!heap_.empty()) {
      if (fired == events_max) return false;
      fire_front();
      ++fired;
    }
    return true;
  }

 private:
  struct Entry {
    std::uint64_t time_ns;
    std::uint64_t sequence;
    TimerTarget* target;
    std::uint64_t cookie;

    bool before(const Entry& other) const {
      return time_ns != other.time_ns ? time_ns < other.time_ns : sequence < other.sequence;
    }
  };

  void fire_front() {
    const Entry entry = heap_.front();
    heap_.front() = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0);
    if (entry.time_ns > now_ns_) now_ns_ = entry.time_ns;
    ++events_fired_;
    entry.target->on_timer(entry.cookie, now_ns_);
  }

  void sift_up(std::size_t index) {
    while (index > 0) {
      const std::size_t parent = (index - 1) / 2;
      if (!heap_[index].before(heap_[parent])) break;
      std::swap(heap_[index], heap_[parent]);
      index = parent;
    }
  }

  void sift_down(std::size_t index) {
    const std::size_t size = heap_.size();
    for (;;) {
      const std::size_t left = 2 * index + 1;
      const std::size_t right = left + 1;
      std::size_t smallest = index;
      if (left < size && heap_[left].before(heap_[smallest])) smallest = left;
      if (right < size && heap_[right].before(heap_[smallest])) smallest = right;
      if (smallest == index) return;
      std::swap(heap_[index], heap_[smallest]);
      index = smallest;
    }
  }

  std::uint64_t now_ns_ = 0;
  std::uint64_t next_sequence_ = 0;
  std::uint64_t events_fired_ = 0;
  std::vector<Entry> heap_;
};

// How a blocking device call (wait_event, synchronize, a full queue's admission wait, an implicit
// device-wide wait) lets virtual time pass. The device asks its Waiter; by default that is ClockWaiter,
// which runs the clock itself. sim::FiberEnv installs one that parks the calling fiber instead, so other
// simulated host threads run while it waits and the scheduler moves time only when all are blocked.
class Waiter {
 public:
  Waiter() = default;
  Waiter(const Waiter&) = delete;
  Waiter& operator=(const Waiter&) = delete;
  virtual ~Waiter() = default;

  // Returns once done() holds or the clock has reached deadline_ns, whichever comes first; returns done().
  // done() is a plain function pointer plus context so that the hot path allocates nothing.
  virtual bool wait_until(std::uint64_t deadline_ns, bool (*done)(const void* context), const void* context) = 0;
};

class ClockWaiter final : public Waiter {
 public:
  explicit ClockWaiter(VirtualClock& clock) : clock_(&clock) {}

  bool wait_until(std::uint64_t deadline_ns, bool (*done)(const void* context), const void* context) override {
    while (!done(context)) {
      // With nothing scheduled only the deadline can still come; without one (kNever) nothing can change
      // done(), so the wait ends unsatisfied instead of spinning.
      if (clock_->idle()) {
        if (deadline_ns != VirtualClock::kNever) clock_->advance_to(deadline_ns);
        return done(context);
      }
      if (clock_->next_event_ns() > deadline_ns) {
        clock_->advance_to(deadline_ns);
        return done(context);
      }
      clock_->run_next();
    }
    return true;
  }

 private:
  VirtualClock* clock_;
};

}  // namespace quiesce::sim

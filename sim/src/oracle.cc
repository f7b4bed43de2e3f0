// The shadow-state oracle's bookkeeping; see oracle.h.
#include "quiesce/sim/oracle.h"

#include <cassert>

namespace quiesce::sim {

std::string_view to_string(FindingKind kind) {
  switch (kind) {
    case FindingKind::UseAfterFree: return "use-after-free";
    case FindingKind::UnorderedConflict: return "unordered-conflict";
    case FindingKind::ReadOnlyWrite: return "read-only-write";
    case FindingKind::UninitializedRead: return "uninitialized-read";
    case FindingKind::RejectedExecuted: return "rejected-executed";
    case FindingKind::DoubleExecution: return "double-execution";
  }
  return "unknown";
}

Oracle::Oracle() {
  findings_.reserve(64);
  histories_.reserve(64);
}

void Oracle::report(Finding finding) {
  if (findings_.size() >= kFindingsMax) {
    findings_dropped_++;
    return;
  }
  findings_.push_back(std::move(finding));
}

void Oracle::reset_buffer(std::uint32_t slot, std::uint64_t buffer_id) {
  if (slot >= histories_.size()) histories_.resize(slot + 1);
  histories_[slot].buffer_id = buffer_id;
  histories_[slot].count = 0;
}

namespace {

std::string conflict_message(std::uint64_t buffer_id, bool first_write, std::uint64_t first_queue, bool second_write,
                             std::uint64_t second_queue) {
  const auto who = [](std::uint64_t queue) {
    return queue == 0 ? std::string("the host") : "queue " + std::to_string(queue);
  };
  return "buffer " + std::to_string(buffer_id) + " was " + (first_write ? "written" : "read") + " by " +
         who(first_queue) + " and " + (second_write ? "written" : "read") + " by " + who(second_queue) +
         " with no happens-before between the two accesses.";
}

}  // namespace

void Oracle::access(std::uint32_t slot, std::uint64_t buffer_id, std::uint64_t begin, std::uint64_t end, bool write,
                    const Accessor& accessor, std::uint64_t now_ns) {
  assert(accessor.clock != nullptr);
  assert(begin <= end);
  if (begin == end) return;
  if (slot >= histories_.size()) histories_.resize(slot + 1);
  History& history = histories_[slot];
  if (history.buffer_id != buffer_id) {
    history.buffer_id = buffer_id;
    history.count = 0;
  }
  // Every earlier access is tested whole, its conditions combined as 0-or-1 integers (`&`, not `&&`), into
  // one bit each: almost no access conflicts, and a branch per condition was mispredicted often enough to
  // make this loop the oracle's cost. Agents are below kAgentsMax, so the clock is read for every record.
  static_assert(kHistoryMax <= 32, "one bit per recorded access must fit the conflict mask");
  const unsigned writes_here = write ? 1U : 0U;
  std::uint32_t conflicts = 0;
  for (std::uint32_t index = 0; index < history.count; ++index) {
    const AccessRecord& earlier = history.records[index];
    assert(earlier.agent < kAgentsMax);
    const unsigned overlaps = static_cast<unsigned>(earlier.begin < end) & static_cast<unsigned>(begin < earlier.end);
    const unsigned writes = static_cast<unsigned>(earlier.write) | writes_here;
    const unsigned other_agent = static_cast<unsigned>(earlier.agent != accessor.agent);
    const unsigned unordered = static_cast<unsigned>(!accessor.clock->covers(earlier.agent, earlier.tick));
    conflicts |= (overlaps & writes & other_agent & unordered) << index;
  }
  if (conflicts != 0) {
    // One finding per access is enough to name the race: the earliest recorded access it races with.
    const AccessRecord& earlier = history.records[static_cast<std::uint32_t>(__builtin_ctz(conflicts))];
    report(Finding{FindingKind::UnorderedConflict, now_ns, buffer_id, accessor.queue_id, earlier.queue_id,
                   accessor.event_id, 0,
                   conflict_message(buffer_id, earlier.write, earlier.queue_id, write, accessor.queue_id)});
  }
  record(history, AccessRecord{begin, end, accessor.queue_id, accessor.agent, accessor.tick, write}, *accessor.clock);
}

void Oracle::record(History& history, const AccessRecord& entry, const VectorClock& clock) {
  if (history.count == kHistoryMax) {
    // Forget accesses ordered before this one first: anything ordered after this access is ordered after them.
    std::uint32_t kept = 0;
    for (std::uint32_t index = 0; index < history.count; ++index) {
      const AccessRecord& earlier = history.records[index];
      const bool ordered_before = earlier.agent == entry.agent || clock.covers(earlier.agent, earlier.tick);
      if (!ordered_before) history.records[kept++] = earlier;
    }
    history.count = kept;
    if (history.count == kHistoryMax) {
      for (std::uint32_t index = 1; index < history.count; ++index) history.records[index - 1] = history.records[index];
      history.count--;
    }
  }
  assert(history.count < kHistoryMax);
  history.records[history.count++] = entry;
}

void Oracle::note_executed(std::uint64_t invocation, std::uint64_t queue_id, std::uint64_t event_id,
                           std::uint64_t now_ns) {
  if (invocation == 0) return;
  if (!executed_.insert(invocation)) {
    report(Finding{FindingKind::DoubleExecution, now_ns, 0, queue_id, 0, event_id, invocation,
                   "invocation " + std::to_string(invocation) + " executed a second time, as the batch of event " +
                       std::to_string(event_id) + " on queue " + std::to_string(queue_id) + "."});
  }
  if (reported_rejected_.contains(invocation)) {
    report(Finding{FindingKind::RejectedExecuted, now_ns, 0, queue_id, 0, event_id, invocation,
                   "invocation " + std::to_string(invocation) +
                       " was reported rejected to the runtime, yet its batch (event " + std::to_string(event_id) +
                       ") executed on queue " + std::to_string(queue_id) + "."});
  }
}

void Oracle::note_reported_rejected(std::uint64_t invocation, std::uint64_t now_ns) {
  if (invocation == 0) return;
  if (!reported_rejected_.insert(invocation)) return;
  if (executed_.contains(invocation)) {
    report(Finding{FindingKind::RejectedExecuted, now_ns, 0, 0, 0, 0, invocation,
                   "invocation " + std::to_string(invocation) +
                       " was reported rejected to the runtime after a batch carrying it had already executed."});
  }
}

Oracle::KeySet::KeySet() : slots_(1024, 0) {}

bool Oracle::KeySet::insert(std::uint64_t key) {
  assert(key != 0);
  if ((size_ + 1) * 2 > slots_.size()) grow();
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t probe = (key * 0x9E3779B97F4A7C15ULL) & mask;; probe = (probe + 1) & mask) {
    if (slots_[probe] == key) return false;
    if (slots_[probe] == 0) {
      slots_[probe] = key;
      size_++;
      return true;
    }
  }
}

bool Oracle::KeySet::contains(std::uint64_t key) const {
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t probe = (key * 0x9E3779B97F4A7C15ULL) & mask;; probe = (probe + 1) & mask) {
    if (slots_[probe] == key) return true;
    if (slots_[probe] == 0) return false;
  }
}

void Oracle::KeySet::grow() {
  std::vector<std::uint64_t> old = std::move(slots_);
  slots_.assign(old.size() * 2, 0);
  size_ = 0;
  for (const std::uint64_t key : old) {
    if (key != 0) (void)insert(key);
  }
}

}  // namespace quiesce::sim

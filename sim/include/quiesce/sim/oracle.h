// The shadow-state oracle: ground truth about what the simulated device really did.
//
// The device reports every access its commands make (buffer, byte range, read or write, which agent and
// its vector clock) and every batch that starts executing. The oracle turns them into findings: device
// access to released memory, unordered conflicting accesses from different queues (or a queue and the
// host), writes through bindings bound read-only, reads of never-written bytes, execution of a batch whose
// rejection was reported, and double execution of one invocation. Happens-before is tracked with
// fixed-width vector clocks: agent 0 is the host, agents 1..31 are queues. Per buffer the oracle keeps a
// bounded history of recent accesses; when it is full it first forgets accesses that happen before the
// new one, then the oldest, so it may miss a race but never invents one.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace quiesce::sim {

inline constexpr std::uint32_t kAgentsMax = 32;
inline constexpr std::uint32_t kHostAgent = 0;

struct VectorClock {
  // The tag of a clock whose every tick its owner stores right away (a staged command's, a copy of its
  // queue's clock): it is not zeroed first, which cost 128 bytes of stores per staged command.
  struct Unset {};

  VectorClock() : ticks{} {}
  explicit VectorClock(Unset /*unset*/) {}

  std::array<std::uint32_t, kAgentsMax> ticks;

  void join(const VectorClock& other) {
    // Without a branch per agent, so that the compiler can take several agents per instruction. `other` is
    // copied first: it may be this very clock, and with the copy that cannot alias `ticks` GCC's -O2 takes
    // four agents per instruction (emulating the unsigned max SSE2 lacks) instead of one. The clock is then
    // stored 16 bytes at a time, as the copies of it that follow (a staged command's, an event's) load it;
    // stored one tick at a time, each of those loads waited for four stores to retire.
    const std::array<std::uint32_t, kAgentsMax> theirs = other.ticks;
    for (std::uint32_t agent = 0; agent < kAgentsMax; ++agent) ticks[agent] = std::max(ticks[agent], theirs[agent]);
  }
  // Whether the access (agent, tick) is known to have happened before anything stamped with this clock.
  bool covers(std::uint32_t agent, std::uint32_t tick) const { return ticks[agent] >= tick; }
};

enum class FindingKind : std::uint8_t {
  UseAfterFree,          // a device command touched a buffer after it was released
  UnorderedConflict,     // two accesses, at least one a write, with no happens-before between them
  ReadOnlyWrite,         // a kernel wrote a binding bound with Access::Read
  UninitializedRead,     // a read of bytes never written since their allocation
  RejectedExecuted,      // a batch whose rejection was reported to the runtime executed
  DoubleExecution,       // two executed batches carried the same nonzero invocation
};

std::string_view to_string(FindingKind kind);

struct Finding {
  FindingKind kind = FindingKind::UseAfterFree;
  std::uint64_t time_ns = 0;
  std::uint64_t buffer_id = 0;
  std::uint64_t queue_id = 0;        // the queue of the access or batch (0: the host)
  std::uint64_t other_queue_id = 0;  // the other side of a conflict (0: the host or none)
  std::uint64_t event_id = 0;        // the batch's event (0: none)
  std::uint64_t invocation = 0;
  std::string message;               // a full sentence
};

// Who made an access, for findings and happens-before.
struct Accessor {
  std::uint32_t agent = kHostAgent;
  std::uint32_t tick = 0;          // the agent's own tick of this access
  const VectorClock* clock = nullptr;  // what the accessor knows happened before it
  std::uint64_t queue_id = 0;
  std::uint64_t event_id = 0;
};

class Oracle {
 public:
  static constexpr std::size_t kFindingsMax = 100'000;
  static constexpr std::size_t kHistoryMax = 8;

  Oracle();

  const std::vector<Finding>& findings() const { return findings_; }
  std::uint64_t findings_dropped() const { return findings_dropped_; }
  void report(Finding finding);

  // A buffer slot gets a new buffer: forget the history of the old one.
  void reset_buffer(std::uint32_t slot, std::uint64_t buffer_id);
  // Checks one access of [begin, end) of a buffer against its history, then records it.
  void access(std::uint32_t slot, std::uint64_t buffer_id, std::uint64_t begin, std::uint64_t end, bool write,
              const Accessor& accessor, std::uint64_t now_ns);

  // A batch with this invocation started executing on the device.
  void note_executed(std::uint64_t invocation, std::uint64_t queue_id, std::uint64_t event_id, std::uint64_t now_ns);
  // The layer above reported this invocation Rejected to the runtime.
  void note_reported_rejected(std::uint64_t invocation, std::uint64_t now_ns);

 private:
  struct AccessRecord {
    std::uint64_t begin;
    std::uint64_t end;
    std::uint64_t queue_id;
    std::uint32_t agent;
    std::uint32_t tick;
    bool write;
  };
  struct History {
    std::uint64_t buffer_id = 0;
    std::uint32_t count = 0;
    std::array<AccessRecord, kHistoryMax> records{};
  };

  // An open-addressing set of nonzero 64-bit keys that grows by doubling.
  class KeySet {
   public:
    KeySet();
    bool insert(std::uint64_t key);  // false when already present
    bool contains(std::uint64_t key) const;

   private:
    void grow();
    std::vector<std::uint64_t> slots_;
    std::size_t size_ = 0;
  };

  void record(History& history, const AccessRecord& entry, const VectorClock& clock);

  std::vector<Finding> findings_;
  std::uint64_t findings_dropped_ = 0;
  std::vector<History> histories_;  // by buffer slot
  KeySet executed_;
  KeySet reported_rejected_;
};

}  // namespace quiesce::sim

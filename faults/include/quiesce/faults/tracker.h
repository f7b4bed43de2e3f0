// The Tracker: what the Injector must remember so that its lies stay legal.
//
// - which context every handle belongs to, so a sticky device loss fails exactly that context's calls;
// - per event: what it has reported (once a terminal was reported, nothing else ever is, R7), the inner
//   terminal it is still hiding behind a delayed completion, whether cancellation was decided;
// - the limbo: handles whose release the injector reported Indeterminate without doing it. They are really
//   released before their queue or context is destroyed, at discard_context, or when the Injector ends, so
//   nothing leaks in the inner backend.
// Lookups use flat hash maps by handle id (IdMap); nothing iterates them in an order that reaches an
// outcome. A pointer from event() stays valid until the next adopt_event.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "quiesce/core/outcome.h"
#include "quiesce/faults/id_map.h"

namespace quiesce::faults {

enum class HandleKind : std::uint8_t { Context, Buffer, Program, Queue, Event, Executable };
inline constexpr std::uint32_t kHandleKindCount = 6;

struct EventTrack {
  std::uint64_t context_id = 0;
  std::uint64_t queue_id = 0;
  bool has_launch = false;          // the submitted prefix holds a launch: an async launch failure may hit it
  bool terminal_reported = false;   // `terminal` was reported and is all this event will ever report
  std::optional<Observation> terminal = std::nullopt;  // the inner terminal, as the injector will report it
  std::uint32_t delay_polls_left = 0;  // polls still to report Pending although `terminal` is known
  bool cancel_lost = false;         // cancellation was decided lost: every later cancel is Busy
  bool cancel_won = false;          // the inner cancel succeeded: no delay is told about this event
  bool settled = false;             // a synchronize of its queue succeeded: no delay is told any more
};

struct LimboEntry {
  HandleKind kind = HandleKind::Buffer;
  std::uint64_t id = 0;
  std::uint32_t epoch = 0;
  std::uint64_t context_id = 0;
};

class Tracker {
 public:
  // The most handles held in limbo at once; a run that needs more is refused with a message.
  static constexpr std::size_t kLimboMax = 1U << 16U;

  void adopt(HandleKind kind, std::uint64_t id, std::uint64_t context_id);
  // The context a handle belongs to; 0 when the injector never saw it created.
  std::uint64_t context_of(HandleKind kind, std::uint64_t id) const;
  void forget(HandleKind kind, std::uint64_t id);

  EventTrack& adopt_event(std::uint64_t id, std::uint64_t context_id, std::uint64_t queue_id, bool has_launch);
  EventTrack* event(std::uint64_t id);
  std::uint64_t event_context(std::uint64_t id) const;

  bool lost(std::uint64_t context_id) const;
  void mark_lost(std::uint64_t context_id);

  // A successful synchronize proves every event of the queue terminal: no delay outlives it.
  void settle_queue(std::uint64_t queue_id);

  void to_limbo(const LimboEntry& entry);
  // Takes every limbo entry of the context (children before parents: events, executables, buffers,
  // programs, queues, then the context itself).
  std::vector<LimboEntry> take_limbo(std::uint64_t context_id);
  std::vector<LimboEntry> take_all_limbo();
  std::size_t limbo_size() const { return limbo_.size(); }

  // discard_context: forgets the context's lost mark and every handle it owned.
  void forget_context(std::uint64_t context_id);

 private:
  std::array<IdMap<std::uint64_t>, kHandleKindCount> owners_;
  IdMap<EventTrack> events_;
  std::vector<std::uint64_t> lost_contexts_;
  std::vector<LimboEntry> limbo_;
};

}  // namespace quiesce::faults

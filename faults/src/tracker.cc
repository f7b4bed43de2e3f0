// The Tracker: handle owners, per-event reports, lost contexts and the limbo of unreleased handles.
#include "quiesce/faults/tracker.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <string>

namespace quiesce::faults {
namespace {

// Children are released before their parents.
constexpr std::uint32_t release_rank(HandleKind kind) {
  switch (kind) {
    case HandleKind::Event: return 0;
    case HandleKind::Executable: return 1;
    case HandleKind::Buffer: return 2;
    case HandleKind::Program: return 3;
    case HandleKind::Queue: return 4;
    case HandleKind::Context: return 5;
  }
  return 6;
}

void sort_for_release(std::vector<LimboEntry>& entries) {
  std::stable_sort(entries.begin(), entries.end(), [](const LimboEntry& a, const LimboEntry& b) {
    return release_rank(a.kind) < release_rank(b.kind);
  });
}

}  // namespace

void Tracker::adopt(HandleKind kind, std::uint64_t id, std::uint64_t context_id) {
  assert(id != 0);
  assert(kind != HandleKind::Event);  // events carry more: adopt_event
  owners_[static_cast<std::uint32_t>(kind)][id] = context_id;
}

std::uint64_t Tracker::context_of(HandleKind kind, std::uint64_t id) const {
  if (kind == HandleKind::Context) return id;
  if (kind == HandleKind::Event) return event_context(id);
  const std::uint64_t* owner = owners_[static_cast<std::uint32_t>(kind)].find(id);
  return owner == nullptr ? 0 : *owner;
}

void Tracker::forget(HandleKind kind, std::uint64_t id) {
  if (kind == HandleKind::Context) {
    forget_context(id);
  } else if (kind == HandleKind::Event) {
    events_.erase(id);
  } else {
    owners_[static_cast<std::uint32_t>(kind)].erase(id);
  }
}

EventTrack& Tracker::adopt_event(std::uint64_t id, std::uint64_t context_id, std::uint64_t queue_id,
                                 bool has_launch) {
  assert(id != 0);
  EventTrack& track = events_[id];
  track = EventTrack{};
  track.context_id = context_id;
  track.queue_id = queue_id;
  track.has_launch = has_launch;
  return track;
}

EventTrack* Tracker::event(std::uint64_t id) { return id == 0 ? nullptr : events_.find(id); }

std::uint64_t Tracker::event_context(std::uint64_t id) const {
  const EventTrack* track = id == 0 ? nullptr : events_.find(id);
  return track == nullptr ? 0 : track->context_id;
}

bool Tracker::lost(std::uint64_t context_id) const {
  return std::find(lost_contexts_.begin(), lost_contexts_.end(), context_id) != lost_contexts_.end();
}

void Tracker::mark_lost(std::uint64_t context_id) {
  assert(context_id != 0);
  if (!lost(context_id)) lost_contexts_.push_back(context_id);
}

void Tracker::settle_queue(std::uint64_t queue_id) {
  // Order-independent: every matching event gets the same update.
  events_.for_each([queue_id](EventTrack& track) {
    if (track.queue_id != queue_id) return;
    track.settled = true;
    track.delay_polls_left = 0;
  });
}

void Tracker::to_limbo(const LimboEntry& entry) {
  assert(entry.id != 0);
  if (limbo_.size() >= kLimboMax) {
    throw std::length_error("the fault injector holds " + std::to_string(limbo_.size()) +
                            " unreleased handles in limbo, its bound; discard a context to drain it");
  }
  limbo_.push_back(entry);
}

std::vector<LimboEntry> Tracker::take_limbo(std::uint64_t context_id) {
  std::vector<LimboEntry> taken;
  std::vector<LimboEntry> kept;
  for (const LimboEntry& entry : limbo_) {
    (entry.context_id == context_id ? taken : kept).push_back(entry);
  }
  limbo_ = std::move(kept);
  sort_for_release(taken);
  return taken;
}

std::vector<LimboEntry> Tracker::take_all_limbo() {
  std::vector<LimboEntry> taken = std::move(limbo_);
  limbo_.clear();
  sort_for_release(taken);
  return taken;
}

void Tracker::forget_context(std::uint64_t context_id) {
  assert(context_id != 0);
  std::erase(lost_contexts_, context_id);
  std::erase_if(limbo_, [context_id](const LimboEntry& entry) { return entry.context_id == context_id; });
  for (auto& owners : owners_) {
    owners.erase_if([context_id](std::uint64_t, std::uint64_t owner) { return owner == context_id; });
  }
  events_.erase_if([context_id](std::uint64_t, const EventTrack& track) { return track.context_id == context_id; });
}

}  // namespace quiesce::faults

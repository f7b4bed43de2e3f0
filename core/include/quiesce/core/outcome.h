// Outcomes of releases, submissions, polls and waits: the heart of the contract.
//
// The three seeds agree that an ordinary error is not evidence that work did not run. So a submission is
// Submitted, Rejected (definitely not submitted: nothing ran, nothing was retained, exact retry allowed) or
// Indeterminate (possibly submitted, a partial prefix included: the event owns every resource the batch
// references until terminal). A release is Released, Rejected (the same live handle comes back, retry
// allowed) or Indeterminate (the handle is invalidated, its charge moves to quarantine, never retried).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "quiesce/core/handles.h"
#include "quiesce/core/result.h"

namespace quiesce {

enum class ReleaseStatus : std::uint8_t { Released, Rejected, Indeterminate };

template <class H>
struct [[nodiscard]] ReleaseResult {
  ReleaseStatus status = ReleaseStatus::Released;
  H handle = {};   // the same live handle when Rejected; empty otherwise
  Error error = {};  // why, when not Released

  static ReleaseResult released() { return ReleaseResult{}; }
  static ReleaseResult rejected(H live, Error why) {
    return ReleaseResult{ReleaseStatus::Rejected, std::move(live), why};
  }
  static ReleaseResult indeterminate(Error why) { return ReleaseResult{ReleaseStatus::Indeterminate, H{}, why}; }

  bool ok() const { return status == ReleaseStatus::Released; }
};

enum class SubmitStatus : std::uint8_t { Submitted, Rejected, Indeterminate };

struct [[nodiscard]] SubmitResult {
  SubmitStatus status = SubmitStatus::Submitted;
  Event event = {};  // valid unless Rejected; an Indeterminate event owns the whole batch until terminal
  Error error = {};
  // Commands known to be enqueued. Equal to the batch size when Submitted; for Indeterminate, the prefix
  // the backend knows it enqueued (a partial submit has fewer); 0 when Rejected.
  std::uint32_t commands_enqueued = 0;

  static SubmitResult submitted(Event event, std::uint32_t commands) {
    return SubmitResult{SubmitStatus::Submitted, std::move(event), {}, commands};
  }
  static SubmitResult rejected(Error why) { return SubmitResult{SubmitStatus::Rejected, Event{}, why, 0}; }
  static SubmitResult indeterminate(Event event, Error why, std::uint32_t commands_enqueued) {
    return SubmitResult{SubmitStatus::Indeterminate, std::move(event), why, commands_enqueued};
  }
};

enum class EventState : std::uint8_t {
  Pending,
  Complete,
  FailedButQuiescent,  // the work failed and the device no longer touches its resources
  Cancelled,
  Indeterminate,       // not terminal: the state could not be observed; releases nothing
};

constexpr bool is_terminal(EventState state) {
  return state == EventState::Complete || state == EventState::FailedButQuiescent ||
         state == EventState::Cancelled;
}

// Device-clock times of a terminal batch (ns on the backend's clock). Present only after a terminal and
// only when timing was requested and is available: unavailable timing is std::nullopt, never zero (R15).
struct TimingReceipt {
  std::uint64_t submitted_ns = 0;
  std::uint64_t started_ns = 0;
  std::uint64_t finished_ns = 0;

  std::uint64_t elapsed_ns() const { return finished_ns - started_ns; }
  friend bool operator==(const TimingReceipt&, const TimingReceipt&) = default;
};

// A non-blocking observation of an event. Once a terminal state is observed it never changes (R7).
struct Observation {
  EventState state = EventState::Pending;
  Error error = {};  // for FailedButQuiescent (the failure) and Indeterminate (why it is unknown)
  std::optional<TimingReceipt> timing = std::nullopt;
};

// The result of a blocking wait that reached a terminal.
struct Receipt {
  EventState state = EventState::Complete;  // always terminal
  Error error = {};
  std::optional<TimingReceipt> timing = std::nullopt;
};

// A wait that could not prove quiescence. The event stays live and retains everything reachable from it.
struct FenceIndeterminate {
  Error error = {};
};

using WaitResult = Result<Receipt, FenceIndeterminate>;

std::string_view to_string(ReleaseStatus status);
std::string_view to_string(SubmitStatus status);
std::string_view to_string(EventState state);

}  // namespace quiesce

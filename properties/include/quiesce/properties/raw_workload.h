// A seeded random workload over the raw Backend contract: the first form of `quiesce run`.
//
// It behaves as a careful runtime would: every buffer is bound to at most one live batch, nothing a live
// event references is released, an event is destroyed only after a terminal was observed, a Rejected
// submit is retried exactly (same invocation), an Indeterminate one is never resubmitted, and everything an
// indeterminate outcome touches is quarantined until the context is discarded. It keeps a host model of
// every buffer (kernel_model.h) and checks each read against it. Faults from a decorator below it are
// legal outcomes it must absorb; the liveness phase (after `on_liveness`) must then release everything.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "quiesce/core/backend.h"
#include "quiesce/core/digest.h"
#include "quiesce/core/prng.h"

namespace quiesce::properties {

// One planted bug in the careful runtime (mutants.h runs each under the campaign). None is the careful
// runtime itself, byte for byte: no mutation check draws from the PRNG or adds to the digest.
enum class Mutation : std::uint8_t {
  None,
  FreeWhilePinned,                // R1: free a buffer a live event still references
  DestroyUnobservedEvent,         // R1: destroy an event before a terminal was observed
  IndeterminateWaitAsTerminal,    // R2: a FenceIndeterminate wait is taken as Complete
  IndeterminateSubmitUnpinned,    // R2: an indeterminate submit pins nothing
  RejectedSubmitApplied,          // R3: a Rejected submit is taken as run: its effects go into the model
  RetryIndeterminateSubmit,       // R4: an Indeterminate submit is submitted again, same invocation
  PartialSubmitAsRejected,        // R5: a partial submit is taken as rejected: event dropped, batch resubmitted
  DropRejectedRelease,            // R6: a rejected release's handle is dropped instead of kept
  ReuseAfterIndeterminateRelease, // R6: a buffer whose release was indeterminate is used again
  ApplyWonCancellation,           // R8: a Cancelled batch's effects go into the model
  DestroyContextBeforeChildren,   // R9: the context is destroyed before its queues and programs
  IgnoreDeviceLoss,               // R10: DeviceLost is ignored; the lost context is used on
  ReleaseOnLostContext,           // R10: after a loss, buffers are freed as if quiescent before the discard
  AbandonAfterLocalError,         // R11: after one failed batch, every other pending event is given up
  StreamOrderedFreeUnordered,     // R12: stream-ordered buffers freed while another queue's work uses them
  CaptureNotEnded,                // R13: a capture window is left open
  SyncInsideCapture,              // R13: the capturing queue is synchronised inside its capture window
  CapturedBuffersUnpinned,        // R13: an executable does not pin its captured buffers
  AccessModeForbidden,            // R16: a kernel writes through a buffer whose usage forbids writes
  WriteThroughReadBinding,        // R16: a kernel's written buffer is bound read-only
  UnwrittenBufferRead,            // R17: a fresh buffer is taken as initialised before anything wrote it
  LeakAtShutdown,                 // R19: one buffer is not released in the liveness phase
  StateOutsideSeed,               // R20: a choice depends on state that outlives one run (run_counter)
};

struct RawWorkloadOptions {
  std::uint64_t seed = 1;
  std::uint32_t operations = 2000;
  std::uint32_t queues = 3;
  std::uint32_t buffers_max = 12;
  std::uint64_t buffer_bytes_max = 16 * 1024;
  std::uint64_t memory_budget_bytes = 64ULL << 20U;
  std::uint64_t wait_timeout_ns = 50'000'000;   // per blocking wait, on the backend's clock
  std::uint32_t liveness_rounds_max = 64;       // drain rounds before the run is declared stuck
  Ratio device_fault = Ratio{1, 4000};          // chance that a batch ends in the faulting kernel
  std::function<void()> on_liveness;            // called once when the safety phase ends (stop injecting)
  // Called after each operation of the safety phase with its index and kind ("submit", "poll", ...), so a
  // harness can check invariants step by step and name the first step that broke one.
  std::function<void(std::uint64_t index, std::string_view kind)> after_operation;
  Mutation mutation = Mutation::None;  // a planted bug, for mutation testing only
  // Mutation::StateOutsideSeed only: a counter that outlives the run (the bug reads and bumps it).
  std::uint64_t* run_counter = nullptr;
};

struct RawWorkloadStats {
  std::uint64_t operations = 0;
  std::uint64_t allocations = 0;
  std::uint64_t allocation_failures = 0;
  std::uint64_t writes = 0;
  std::uint64_t reads_checked = 0;
  std::uint64_t reads_unknown = 0;  // buffers whose content an indeterminate outcome made unknowable
  std::uint64_t submits = 0;
  std::uint64_t submits_rejected = 0;
  std::uint64_t submits_indeterminate = 0;
  std::uint64_t retries = 0;
  std::uint64_t terminals_complete = 0;
  std::uint64_t terminals_failed = 0;
  std::uint64_t terminals_cancelled = 0;
  std::uint64_t polls = 0;
  std::uint64_t waits = 0;
  std::uint64_t waits_indeterminate = 0;
  std::uint64_t captures = 0;
  std::uint64_t replays = 0;
  std::uint64_t releases = 0;
  std::uint64_t releases_rejected = 0;
  std::uint64_t releases_indeterminate = 0;
  std::uint64_t device_losses = 0;
  std::uint64_t quarantined_handles = 0;
  std::uint64_t leaked_handles = 0;  // still live after the liveness phase: always a failure
  std::vector<std::string> problems;  // data mismatches and contract surprises, one sentence each
  std::uint64_t data_mismatches = 0;  // reads that disagreed with the host model (one problem each)
  std::uint64_t terminal_changes = 0; // terminals observed to change (one problem each)

  bool clean() const { return problems.empty() && leaked_handles == 0; }
};

void print_stats(const RawWorkloadStats& stats, std::ostream& out);

}  // namespace quiesce::properties

#include "quiesce/properties/raw_workload_impl.h"  // IWYU pragma: export

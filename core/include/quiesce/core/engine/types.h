// The vocabulary of the reference engine (quiesce::Engine): its ids, requests, operations and options.
//
// The engine names what it owns with its own ids, never with backend handles: a release request on a
// resource that a live event still pins must be carried out later (fenced deletion), and a device loss
// must make every id of the lost epoch fail to resolve (R9). An id is a serial, unique for the engine's
// whole life and shared by every kind, plus the epoch of the context that held the resource.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "quiesce/core/command.h"
#include "quiesce/core/outcome.h"
#include "quiesce/core/result.h"
#include "quiesce/core/types.h"

namespace quiesce {

template <class Tag>
struct EngineId {
  std::uint64_t serial = 0;
  std::uint32_t epoch = 0;

  bool valid() const { return serial != 0; }
  friend bool operator==(const EngineId&, const EngineId&) = default;
  friend auto operator<=>(const EngineId&, const EngineId&) = default;
};

struct BufferIdTag {};
struct ProgramIdTag {};
struct GraphIdTag {};
struct SubmissionIdTag {};

using BufferId = EngineId<BufferIdTag>;
using ProgramId = EngineId<ProgramIdTag>;
using GraphId = EngineId<GraphIdTag>;
using SubmissionId = EngineId<SubmissionIdTag>;

// Queues are created with the engine (EngineOptions::queue_count) and recreated after a device loss, so
// the caller names one by its index.
using QueueIndex = std::uint32_t;

struct BufferRequest {
  std::uint64_t bytes = 0;
  BufferUsage usage = BufferUsage::None;
  AllocationMode mode = AllocationMode::Direct;
  QueueIndex queue = 0;  // the ordering queue of a StreamOrdered buffer
};

// One buffer of an all-or-nothing import: allocated, then `data` written at offset 0.
struct ImportRequest {
  BufferRequest buffer = {};
  ByteSource data = {};
};

struct EngineBinding {
  BufferId buffer = {};
  Access access = Access::Read;
};

enum class OpKind : std::uint8_t { Launch, Copy, Upload, Zero, Replay };

// One command of a batch, naming engine ids. Spans are borrowed for the duration of the call only.
struct EngineOp {
  OpKind kind = OpKind::Launch;
  LaunchMode mode = LaunchMode::Normal;
  ProgramId program = {};
  GraphId graph = {};
  BufferId source = {};
  BufferId target = {};
  std::uint64_t source_offset = 0;
  std::uint64_t target_offset = 0;
  std::uint64_t bytes = 0;
  LaunchDims dims = {};
  std::span<const EngineBinding> bindings = {};
  std::span<const std::byte> data = {};  // launch parameters or upload bytes

  static EngineOp launch(ProgramId program, LaunchDims dims, std::span<const EngineBinding> bindings,
                         std::span<const std::byte> parameters, LaunchMode mode = LaunchMode::Normal) {
    EngineOp op;
    op.kind = OpKind::Launch;
    op.mode = mode;
    op.program = program;
    op.dims = dims;
    op.bindings = bindings;
    op.data = parameters;
    return op;
  }
  static EngineOp copy(BufferId source, std::uint64_t source_offset, BufferId target,
                       std::uint64_t target_offset, std::uint64_t bytes) {
    EngineOp op;
    op.kind = OpKind::Copy;
    op.source = source;
    op.source_offset = source_offset;
    op.target = target;
    op.target_offset = target_offset;
    op.bytes = bytes;
    return op;
  }
  static EngineOp upload(std::span<const std::byte> data, BufferId target, std::uint64_t target_offset) {
    EngineOp op;
    op.kind = OpKind::Upload;
    op.data = data;
    op.target = target;
    op.target_offset = target_offset;
    op.bytes = data.size();
    return op;
  }
  static EngineOp zero(BufferId target, std::uint64_t target_offset, std::uint64_t bytes) {
    EngineOp op;
    op.kind = OpKind::Zero;
    op.target = target;
    op.target_offset = target_offset;
    op.bytes = bytes;
    return op;
  }
  static EngineOp replay(GraphId graph) {
    EngineOp op;
    op.kind = OpKind::Replay;
    op.graph = graph;
    return op;
  }
};

struct SubmitRequest {
  bool timing = false;                             // ask for a timing receipt (needs Profiling)
  std::span<const SubmissionId> depends_on = {};   // explicit cross-queue dependencies
  std::uint64_t admission_timeout_ns = 0;
};

// What the engine knows about a submission's work. Pending and Indeterminate are not terminal.
enum class SubmissionFate : std::uint8_t {
  Pending,        // submitted, not yet observed terminal
  Indeterminate,  // an indeterminate submit, poll or wait was seen; retained until a terminal
  Complete,
  Failed,         // FailedButQuiescent
  Cancelled,
  Partial,        // terminal, but the submit was indeterminate with only a prefix known to be enqueued
  Lost,           // its context was lost before a terminal was observed
  Unknown,        // never submitted by this engine, or forgotten (EngineOptions::fate_history_max)
};

// The terminal result of one submission, for wait().
struct SubmissionReceipt {
  EventState state = EventState::Complete;
  Error error = {};
  std::optional<TimingReceipt> timing = std::nullopt;  // never zero when unavailable (R15)
};

// Why an asynchronous failure was queued.
enum class FailureCause : std::uint8_t {
  FailedButQuiescent,   // the event ended failed
  IndeterminateSubmit,  // the submit was indeterminate (a partial submit included)
  DeviceLost,           // the context was lost with the submission in flight
};

// An asynchronous failure: queued when it happens, surfaced exactly once by the next flush or sync (R14).
struct AsyncFailure {
  SubmissionId submission = {};
  QueueIndex queue = 0;
  FailureCause cause = FailureCause::FailedButQuiescent;
  Error error = {};
};

struct FlushResult {
  std::vector<AsyncFailure> failures;  // each failure appears in exactly one FlushResult
  Status completion = {};              // sync only: Timeout when not everything reached a terminal

  bool ok() const { return failures.empty() && completion.ok(); }
};

struct ProfileToken {
  std::uint64_t serial = 0;
};

// A profile window's duration, computed from timing receipts only.
struct ProfileDuration {
  std::uint64_t submissions = 0;
  std::uint64_t busy_ns = 0;      // sum of every submission's started..finished
  std::uint64_t span_ns = 0;      // first start to last finish
};

struct EngineMemory {
  std::uint64_t capacity_bytes = 0;
  std::uint64_t charged_bytes = 0;      // live buffers and programs
  std::uint64_t quarantined_bytes = 0;  // retained after indeterminate outcomes
  std::uint64_t charged_bytes_max = 0;  // high-water mark of charged_bytes
  std::uint64_t live_buffers = 0;
  std::uint64_t live_programs = 0;
  std::optional<MemoryUsage> device = std::nullopt;  // the backend's view, when it answered
};

// What submit, launch and replay do after the batch reached the backend.
enum class SubmitProgress : std::uint8_t {
  // Poll each queue's oldest unfinished submission, then carry out what became releasable (the default).
  EverySubmit,
  // Only when something waits on a fence (a requested release or graph destroy) or the live submissions
  // reach half of live_submissions_max. Completions are otherwise observed by poll, wait, flush, sync,
  // progress, drain and the poller, so a submit makes no backend call besides the submit itself.
  WhenNeeded,
};

struct EngineOptions {
  std::uint32_t queue_count = 2;
  std::uint64_t memory_budget_bytes = 0;    // 0: the device's memory
  std::uint64_t invocation_base = 0;        // invocation ids are base + 1, base + 2, ...
  std::uint32_t submit_attempts_max = 4;    // exact retries of a rejected submit (R3)
  std::uint32_t release_attempts_max = 8;   // rejected releases, then the resource is quarantined
  std::uint64_t release_backoff_ns = 1'000;        // first retry delay, doubled per attempt
  std::uint64_t release_retry_window_ns = 50'000'000;  // virtual time allowed to retry a release
  std::uint64_t host_access_timeout_ns = 1'000'000'000;  // read/write wait for conflicting work
  std::uint64_t wait_slice_ns = 1'000'000;  // one blocking wait inside drain/sync
  std::uint64_t poller_interval_ns = 50'000;
  std::uint64_t poller_iterations_max = 100'000'000;
  std::uint32_t live_submissions_max = 4096;
  std::uint32_t live_resources_max = 65'536;
  std::uint32_t fate_history_max = 65'536;  // fates kept: those of the submissions among the last this many serials
  std::uint32_t drain_iterations_max = 1'000'000;
  std::uint32_t recovery_attempts_max = 4;  // fresh contexts tried per device loss
  SubmitProgress submit_progress = SubmitProgress::EverySubmit;
};

inline std::string_view to_string(SubmissionFate fate) {
  switch (fate) {
    case SubmissionFate::Pending: return "pending";
    case SubmissionFate::Indeterminate: return "indeterminate";
    case SubmissionFate::Complete: return "complete";
    case SubmissionFate::Failed: return "failed";
    case SubmissionFate::Cancelled: return "cancelled";
    case SubmissionFate::Partial: return "partial";
    case SubmissionFate::Lost: return "lost";
    case SubmissionFate::Unknown: return "unknown";
  }
  return "invalid-fate";
}

inline std::string_view to_string(FailureCause cause) {
  switch (cause) {
    case FailureCause::FailedButQuiescent: return "failed-but-quiescent";
    case FailureCause::IndeterminateSubmit: return "indeterminate-submit";
    case FailureCause::DeviceLost: return "device-lost";
  }
  return "invalid-cause";
}

}  // namespace quiesce

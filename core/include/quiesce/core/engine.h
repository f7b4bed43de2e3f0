// quiesce::Engine: the reference runtime over the Backend concept (DESIGN §2).
//
// A complete device runtime, generic over any Backend (sim::Device, cuda::Device, any decorator stack) and
// any Env (RealEnv, sim::FiberEnv), and the system whose invariants the property suite proves. It offers
// what the three seed runtimes offer: admission through resource transactions and permits, all-or-nothing
// imports, explicit reads and writes, program load, batches with timing receipts, fire-and-forget launches
// whose failures surface exactly once at the next flush or sync, deferred (fenced) release, quarantine of
// everything an indeterminate outcome touches, bounded retry of rejected releases, recovery after device
// loss on a fresh context and epoch, captured graphs with pinned buffers, several queues with automatic and
// explicit cross-queue dependencies, profiling, memory reports, and a shutdown report (R19).
//
// Thread safety: every public call takes one E::Mutex and holds it for the whole call, backend calls
// included; a blocking wait therefore blocks the other callers, which is what makes a capture window free
// of queries (R13). The optional completion poller is one E::Thread that takes the same mutex.
//
// The backend and the env must outlive the engine.
#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "quiesce/core/backend.h"
#include "quiesce/core/engine/report.h"
#include "quiesce/core/engine/state.h"
#include "quiesce/core/engine/types.h"
#include "quiesce/core/env.h"
#include "quiesce/core/transaction.h"

namespace quiesce {

// Counts of what happened, for coverage probes and reports.
struct EngineCounters {
  std::uint64_t submissions = 0;
  std::uint64_t submit_retries = 0;          // exact retries after a Rejected submit (R3)
  std::uint64_t submits_rejected = 0;        // gave up after every retry was rejected
  std::uint64_t submits_indeterminate = 0;   // partial ones included
  std::uint64_t submits_partial = 0;
  std::uint64_t observations_indeterminate = 0;  // indeterminate polls and fence waits
  std::uint64_t release_rejections = 0;
  std::uint64_t releases_deferred = 0;       // release requests that had to wait for a fence
  std::uint64_t cross_queue_waits = 0;
  std::uint64_t device_losses = 0;
  std::uint64_t recoveries = 0;
  std::uint64_t failures_queued = 0;
  std::uint64_t failures_surfaced = 0;
  std::uint64_t imports_rolled_back = 0;
  std::uint64_t graphs_captured = 0;
  std::uint64_t replays = 0;
  std::uint64_t poller_bound_hits = 0;  // the poller stopped because its iteration bound was hit
  std::uint64_t submits_unobserved = 0;  // SubmitProgress::WhenNeeded: submits that polled nothing
};

template <Backend B, Env E = RealEnv>
class Engine {
 public:
  Engine(B& backend, E& env, EngineOptions options = {});
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  ~Engine();

  // Creates the context and the queues. Every other call fails until open() succeeded.
  Status open();

  // ---- admission, imports, explicit transfers, programs ----
  Result<BufferId> create_buffer(const BufferRequest& request);
  // All-or-nothing: every buffer is allocated and written, or none is visible and all are released (R17).
  Result<std::vector<BufferId>> import_buffers(std::span<const ImportRequest> requests);
  Status write(BufferId buffer, std::uint64_t offset, ByteSource source);
  Status read(BufferId buffer, std::uint64_t offset, ByteSink sink);
  Result<ProgramId> load_program(const ArtifactRef& artifact);
  // Deferred release: carried out once no live event or executable pins the resource.
  Status release(BufferId buffer);
  Status release(ProgramId program);

  // ---- submission ----
  Result<SubmissionId> submit(QueueIndex queue, std::span<const EngineOp> ops, const SubmitRequest& request = {});
  // Fire-and-forget: a failure after admission is queued and surfaces at the next flush or sync (R14).
  Result<SubmissionId> launch(QueueIndex queue, ProgramId program, LaunchDims dims,
                              std::span<const EngineBinding> bindings, std::span<const std::byte> parameters,
                              LaunchMode mode = LaunchMode::Normal);
  SubmissionFate poll(SubmissionId submission);
  Result<SubmissionReceipt> wait(SubmissionId submission, std::uint64_t timeout_ns);
  FlushResult flush();
  FlushResult sync(std::uint64_t timeout_ns);
  bool healthy();

  // ---- graphs ----
  Status prepare_graph(QueueIndex queue);
  Result<GraphId> capture_graph(QueueIndex queue, std::span<const EngineOp> ops);
  Result<SubmissionId> replay(GraphId graph, QueueIndex queue);  // fire-and-forget, like launch
  Status destroy_graph(GraphId graph);                            // deferred until quiescent

  // ---- profiling and memory ----
  Result<ProfileToken> start_profile();
  Result<ProfileDuration> end_profile(ProfileToken token, std::uint64_t timeout_ns);
  EngineMemory memory_usage();
  Result<MemoryReport> memory_report();
  Status install_pools(const PoolLayout& layout);  // only when nothing is live (R18)
  Status memory_cleanup();

  // ---- progress, liveness, shutdown ----
  void progress();
  Status drain(std::uint64_t timeout_ns);
  void start_poller();
  void stop_poller();
  ShutdownReport shutdown(std::uint64_t drain_timeout_ns);

  // ---- introspection ----
  std::uint32_t epoch();
  EngineCounters counters();
  std::uint32_t queue_count() const { return options_.queue_count; }
  const DeviceInfo& device_info() const { return device_info_; }

 private:
  static constexpr std::size_t kProfilesMax = 64;
  using Lock = std::unique_lock<typename E::Mutex>;
  using BufferSlot = engine_detail::BufferSlot;
  using ProgramSlot = engine_detail::ProgramSlot;
  using GraphSlot = engine_detail::GraphSlot;
  using Submission = engine_detail::Submission;

  // One batch translated to backend commands, with the storage its spans point into. `bindings` is reserved
  // for the whole batch before the first launch is translated, so the launches' spans stay valid.
  struct PreparedBatch {
    std::vector<Command> commands;
    std::vector<Binding> bindings;
    std::vector<engine_detail::BufferAccess> uses;
    std::vector<std::pair<std::uint64_t, engine_detail::ProgramSlot*>> programs;  // serial and slot, once each
    std::vector<std::uint64_t> graphs;
    std::vector<std::uint64_t> waits_on;
    // The program of the last launch translated, resolved: a batch of launches of one program looks it up
    // once. Valid while this batch is translated (nothing releases a program meanwhile).
    ProgramId last_program = {};
    engine_detail::ProgramSlot* last_program_slot = nullptr;

    void clear() {
      last_program = {};
      last_program_slot = nullptr;
      commands.clear();
      bindings.clear();
      uses.clear();
      programs.clear();
      graphs.clear();
      waits_on.clear();
    }
  };
  using SubmissionTable = engine_detail::SubmissionTable;

  // engine/lifecycle.h
  Status ready_locked();
  Status recover_for_call_locked();
  Status open_context_locked();
  void note_error_locked(const Error& error);
  void recover_if_lost_locked(bool reopen);
  void discard_everything_locked();
  std::uint64_t next_serial() { return ++serial_counter_; }
  ResourceTally& tally(ResourceKind kind) { return tallies_[static_cast<std::size_t>(kind)]; }
  void add_quarantine_locked(ResourceKind kind, std::uint64_t serial, std::uint64_t bytes,
                             QuarantineCause cause, const Error& error);

  // engine/admission.h
  Result<BufferSlot*> resolve_locked(BufferId buffer, bool allow_released = false);
  Result<ProgramSlot*> resolve_locked(ProgramId program);
  Result<GraphSlot*> resolve_locked(GraphId graph);
  Result<std::vector<BufferId>> import_locked(std::span<const ImportRequest> requests);
  Status await_uses_locked(BufferSlot& slot, bool writers_only, std::uint64_t timeout_ns);

  // engine/submission.h
  void prepare_batch_locked(std::span<const EngineOp> ops, PreparedBatch& batch);
  Status translate_op_locked(const EngineOp& op, std::size_t index, PreparedBatch& batch, bool capturing);
  Status translate_launch_locked(const EngineOp& op, std::size_t index, PreparedBatch& batch);
  Status check_range_locked(BufferId id, BufferUsage needed, std::uint64_t offset, std::uint64_t bytes,
                            std::size_t index, PreparedBatch& batch, bool reads, bool writes);
  void add_dependencies_locked(QueueIndex queue, std::span<const SubmissionId> explicit_dependencies,
                               PreparedBatch& batch);
  bool may_wait_locked(QueueIndex queue, std::span<const SubmissionId> explicit_dependencies,
                       const PreparedBatch& batch) const;
  Result<SubmissionId> submit_locked(QueueIndex queue, std::span<const EngineOp> ops,
                                     const SubmitRequest& request, bool fire_and_forget);
  void pin_locked(std::uint64_t serial, Submission& submission, const PreparedBatch& batch);
  void unpin_locked(std::uint64_t serial, Submission& submission);
  void queue_failure_locked(std::uint64_t serial, Submission& submission, FailureCause cause, const Error& error);
  Submission& emplace_submission_locked(std::uint64_t serial);
  typename SubmissionTable::iterator erase_submission_locked(typename SubmissionTable::iterator it);
  bool progress_after_submit_locked();
  // Marks a slot's release as requested: counted in the hint and listed, in serial order, for the scan.
  static void note_requested(std::vector<std::uint64_t>& requested, std::uint64_t serial) {
    const auto at = std::lower_bound(requested.begin(), requested.end(), serial);
    if (at == requested.end() || *at != serial) requested.insert(at, serial);
  }
  void note_release_request_locked() { release_requests_hint_++; }

  // engine/progress.h
  void progress_locked(bool poll_all);
  void observe_locked(std::uint64_t serial, Submission& submission, const Observation& observation);
  bool wait_terminal_locked(std::uint64_t serial, Submission& submission, std::uint64_t timeout_ns);
  void destroy_events_locked();
  std::size_t release_buffers_locked();
  std::size_t release_programs_locked();
  template <class Slot, class Handle, class ReleaseCall>
  std::size_t release_slots_locked(std::map<std::uint64_t, Slot>& slots, std::vector<std::uint64_t>& requested,
                                   std::vector<Handle>& held, ResourceKind kind, std::uint64_t Slot::*charged_bytes,
                                   ReleaseCall release);
  std::size_t release_graphs_locked();
  bool retry_due_locked(const engine_detail::RetryState& retry) const;
  bool note_rejection_locked(engine_detail::RetryState& retry, const Error& error);
  void quarantine_pins_locked(Submission& submission, QuarantineCause cause, const Error& error);
  void retire_submission_locked(std::uint64_t serial, Submission& submission);
  bool quiescent_locked() const;
  Status drain_locked(std::uint64_t timeout_ns);
  bool wait_for_something_locked(std::uint64_t deadline_ns);
  void poller_loop();

  // engine/shutdown.h
  void settle_for_shutdown_locked();
  void destroy_queues_locked();
  void release_context_locked(ShutdownReport& report);

  B& backend_;
  E& env_;
  EngineOptions options_;
  typename E::Mutex mutex_;

  DeviceInfo device_info_ = {};
  MemoryBudget budget_{0};
  Context context_;
  std::uint64_t context_serial_ = 0;
  bool opened_ = false;
  bool has_context_ = false;
  bool lost_ = false;
  bool shut_down_ = false;
  Error loss_error_ = {};
  std::uint32_t epoch_ = 0;
  std::uint64_t serial_counter_ = 0;
  std::uint64_t invocation_counter_ = 0;
  std::uint64_t transaction_counter_ = 0;

  std::vector<engine_detail::QueueSlot> queues_;
  std::map<std::uint64_t, BufferSlot> buffers_;
  std::map<std::uint64_t, ProgramSlot> programs_;
  // The serials of the slots above whose release was requested, ascending: the release scans visit these
  // alone, in the order a walk of the whole map would.
  std::vector<std::uint64_t> requested_buffers_;
  std::vector<std::uint64_t> requested_programs_;
  std::map<std::uint64_t, GraphSlot> graphs_;
  SubmissionTable submissions_;
  engine_detail::FateHistory fates_;
  std::map<std::uint64_t, engine_detail::ProfileWindow> profiles_;
  std::deque<AsyncFailure> failures_;

  // Quarantine: entries for the report, and the live handles it retains until their context is discarded.
  std::vector<QuarantineEntry> quarantine_;
  std::vector<Buffer> held_buffers_;
  std::vector<Program> held_programs_;
  std::vector<Executable> held_executables_;
  std::vector<Event> held_events_;
  std::vector<Queue> held_queues_;

  // Hot-path state: hints that let progress skip scans that would find nothing (each may be high, never low:
  // a scan that finds less corrects it) and scratch storage reused by every submit; the submission table
  // reuses retired records, so that a steady stream of submissions allocates nothing.
  std::size_t release_requests_hint_ = 0;  // slots with release_requested or destroy_requested set
  std::size_t terminal_hint_ = 0;          // submissions observed terminal whose events are not destroyed
  PreparedBatch scratch_batch_;
  std::vector<Command> scratch_commands_;
  std::vector<std::uint8_t> scratch_blocked_;

  std::array<ResourceTally, kResourceKindCount> tallies_ = {};
  EngineCounters counters_ = {};

  typename E::Thread poller_;
  bool poller_running_ = false;
  bool poller_stop_requested_ = false;
};

}  // namespace quiesce

#include "quiesce/core/engine/admission.h"
#include "quiesce/core/engine/graphs.h"
#include "quiesce/core/engine/lifecycle.h"
#include "quiesce/core/engine/memory.h"
#include "quiesce/core/engine/progress.h"
#include "quiesce/core/engine/shutdown.h"
#include "quiesce/core/engine/submission.h"

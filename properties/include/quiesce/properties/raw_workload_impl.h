// The template body of run_raw_workload (raw_workload.h). Included from there only. The model's slots and the
// RawWorkload class are here; its member definitions are in raw_workload_safety.h, raw_workload_batches.h,
// raw_workload_events.h and raw_workload_liveness.h, included at the end.
#pragma once

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "quiesce/core/seeded_bytes.h"
#include "quiesce/core/transaction.h"
#include "quiesce/properties/kernel_model.h"
#include "quiesce/properties/raw_workload.h"

namespace quiesce::properties {
namespace raw_detail {

inline constexpr std::uint32_t kNone = UINT32_MAX;
inline constexpr std::uint32_t kReleaseRoundsMax = 8;

// One command as the workload planned it, in slot indices, so its effect can be applied to the model once
// the batch is known to have run.
struct Planned {
  CommandKind kind = CommandKind::Launch;
  BuiltinKernel kernel = BuiltinKernel::Fill;
  std::vector<std::uint32_t> slots;  // bindings, or {source, target}, or {target}
  std::vector<std::byte> data;       // launch parameters or upload bytes
  std::uint64_t source_offset = 0;
  std::uint64_t target_offset = 0;
  std::uint64_t bytes = 0;
};

struct BufferSlot {
  Buffer handle;
  BufferUsage usage = BufferUsage::None;
  std::uint64_t bytes = 0;
  std::vector<std::uint8_t> model;
  bool initialized = false;  // every byte written by something known to have run
  std::uint32_t pins = 0;    // live events and executables that reference it
  bool quarantined = false;  // pinned by an event whose release was indeterminate: kept until discard
  bool dead = false;
};

struct EventSlot {
  Event handle;
  std::vector<std::uint32_t> buffers;     // pinned buffer slots
  std::vector<std::uint32_t> waited;      // pinned event slots (Wait commands)
  std::vector<Planned> effects;
  std::uint32_t executable = kNone;       // a replay pins its executable
  std::uint32_t pins = 0;                 // later batches that wait on this event
  bool quarantined = false;               // waited on by a batch whose event release was indeterminate
  bool indeterminate = false;             // the submit could not prove what ran
  bool terminal_seen = false;
  EventState terminal = EventState::Pending;
  bool dead = false;
};

struct ExecutableSlot {
  Executable handle;
  std::vector<std::uint32_t> buffers;
  std::vector<Planned> effects;
  std::uint32_t live_replays = 0;
  bool quarantined = false;  // replayed by a batch whose event release was indeterminate
  bool dead = false;
};

template <Backend B>
class RawWorkload {
 public:
  RawWorkload(B& backend, const RawWorkloadOptions& options, Digest& digest)
      : backend_(backend), options_(options), digest_(digest), prng_(Prng(options.seed).derive("workload")),
        budget_(options.memory_budget_bytes) {}

  RawWorkloadStats run() {
    digest_.add(std::string_view("raw-workload"));
    digest_.add(options_.seed);
    if (mutated(Mutation::StateOutsideSeed) && options_.run_counter != nullptr) {
      queue_offset_ = static_cast<std::uint32_t>((*options_.run_counter)++);  // the bug: state outside the seed
    }
    if (!open_context()) {
      stats_.problems.push_back("the backend refused to create the first context, so nothing ran.");
      return std::move(stats_);
    }
    for (std::uint32_t i = 0; i < options_.operations; ++i) {
      if (device_lost_) recover();
      step();
      stats_.operations++;
    }
    if (options_.on_liveness) options_.on_liveness();
    drain();
    return std::move(stats_);
  }

 private:
  // ---- context lifetime and device loss ----

  bool open_context();

  bool mutated(Mutation mutation) const { return options_.mutation == mutation; }

  bool lost(const Error& error);

  // Everything of the lost context is abandoned at once: discard is the only way out (R10).
  void recover();

  void forget(bool& dead, bool valid);

  // ---- the safety phase: one random operation ----

  void step();

  std::uint32_t live_buffers() const;

  void allocate();

  // A random live buffer that no live batch references and that satisfies `accept`, or kNone.
  template <class Accept>
  std::uint32_t pick_buffer(Accept accept, const std::vector<std::uint32_t>& exclude = {});

  // The index of a uniformly drawn one of the indices below `count` that `accept`, or kNone when none does:
  // one draw of below(number accepted), as when the candidates were listed, without listing them.
  template <class Accept>
  std::uint32_t pick_index(std::uint32_t count, Accept accept) {
    std::uint32_t accepted = 0;
    for (std::uint32_t i = 0; i < count; ++i) accepted += accept(i) ? 1U : 0U;
    if (accepted == 0) return kNone;
    std::uint64_t chosen = prng_.below(accepted);
    for (std::uint32_t i = 0; i < count; ++i) {
      if (!accept(i)) continue;
      if (chosen == 0) return i;
      --chosen;
    }
    return kNone;
  }

  // Mutants only: a live buffer, pinned or not.
  std::uint32_t pick_any_live_buffer();

  std::vector<std::byte> random_bytes(std::uint64_t count);

  void write();

  void read();

  void free_buffer();

  void release_buffer(BufferSlot& slot);

  // Counts a release outcome; puts a rejected handle back. Returns true when the handle is gone.
  template <class H>
  bool settle_release(ReleaseResult<H>& released, H& handle);

  // ---- batches ----

  struct Plan {
    std::vector<Planned> commands;
    std::vector<std::uint32_t> buffers;  // every buffer slot the batch references
    std::vector<std::uint32_t> waited;
  };

  bool plan_launch(Plan& plan, std::uint32_t queue_index, bool allow_fault);

  bool plan_transfer(Plan& plan);

  static std::vector<std::byte> u32_bytes(std::uint32_t value);
  static std::vector<std::byte> u64_bytes(std::uint64_t value);

  Plan plan_batch(std::uint32_t queue_index, bool for_capture);

  std::uint32_t pick_waitable_event();

  // Turns a plan into contract commands; `bindings` and `data` must outlive the submit call.
  std::vector<Command> encode(const Plan& plan, std::vector<std::vector<Binding>>& bindings);

  static Access binding_access(BuiltinKernel kernel, std::size_t binding);

  bool programs_loaded(const Plan& plan) const;

  void submit_batch();

  // Submits; a Rejected submit is retried exactly, with the same invocation, a bounded number of times.
  void submit(const Queue& queue, const std::vector<Command>& commands, const SubmitOptions& options, Plan plan,
              std::uint32_t executable);

  // ---- observing events ----

  std::uint32_t pick_live_event(bool pending_only);

  void poll();

  void wait();

  void wait_for(std::uint32_t index);

  void observe(std::uint32_t index, EventState state, const Error& error);

  // Mutants only: every other pending event is taken as failed, as if one local error had stopped them all.
  void abandon_pending_events();

  void apply(const Planned& planned);

  // An outcome that cannot say what ran: the written buffers are never read again until rewritten.
  void forget_contents(const Planned& planned);

  void destroy_terminal_events();

  // Everything an event reaches (its buffers, the events it waited on, its executable, and in turn what those
  // reach) stays retained until the context is discarded. Iterative, bounded by the number of events.
  void quarantine_reachable(std::uint32_t first_event);

  void quarantine_executable(ExecutableSlot& slot);

  void cancel();

  void synchronize();

  // ---- captured executables ----

  void capture();

  void replay();

  void destroy_executable();

  // ---- the liveness phase: everything retained must be released within a bounded number of rounds ----

  void drain();

  bool everything_released() const;

  void close_context();

  template <class H, class Release>
  void release_with_retries(H& handle, Release release);

  void note(std::uint8_t what, std::uint64_t outcome);

  B& backend_;
  const RawWorkloadOptions& options_;
  Digest& digest_;
  Prng prng_;
  MemoryBudget budget_;
  RawWorkloadStats stats_;
  Context context_;
  std::vector<Queue> queues_;
  std::array<Program, std::size(kBuiltinKernels)> programs_;
  std::vector<BufferSlot> buffers_;
  std::vector<EventSlot> events_;
  std::vector<ExecutableSlot> executables_;
  std::vector<Executable> leaked_executables_;
  std::uint64_t transactions_ = 0;
  std::uint64_t invocations_ = 0;
  bool device_lost_ = false;
  bool context_tainted_ = false;  // an indeterminate release happened in the current context
  std::uint32_t queue_offset_ = 0;  // Mutation::StateOutsideSeed only
};

}  // namespace raw_detail

template <Backend B>
RawWorkloadStats run_raw_workload(B& backend, const RawWorkloadOptions& options, Digest& digest) {
  raw_detail::RawWorkload<B> workload(backend, options, digest);
  return workload.run();
}

}  // namespace quiesce::properties

#include "quiesce/properties/raw_workload_batches.h"
#include "quiesce/properties/raw_workload_events.h"
#include "quiesce/properties/raw_workload_liveness.h"
#include "quiesce/properties/raw_workload_safety.h"

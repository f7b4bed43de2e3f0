// The template body of run_raw_workload (raw_workload.h). Included from there only.
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

  bool open_context() {
    Result<Context> context = backend_.create_context(ContextDesc{});
    note(1, context.ok());
    if (!context.ok()) return false;
    context_ = std::move(context).value();
    queues_.clear();
    for (std::uint32_t q = 0; q < options_.queues; ++q) {
      Result<Queue> queue = backend_.create_queue(context_, QueueDesc{});
      note(2, queue.ok());
      if (queue.ok()) queues_.push_back(std::move(queue).value());
      else if (lost(queue.error())) return false;
    }
    for (std::size_t k = 0; k < programs_.size(); ++k) {
      ArtifactRef artifact;
      artifact.kernel_name = kernel_name(kBuiltinKernels[k]);
      artifact.resident_bytes = 1U << 20U;
      Result<Program> program = backend_.load_program(context_, artifact);
      note(3, program.ok());
      programs_[k] = program.ok() ? std::move(program).value() : Program{};
    }
    return !queues_.empty();
  }

  bool mutated(Mutation mutation) const { return options_.mutation == mutation; }

  bool lost(const Error& error) {
    if (mutated(Mutation::IgnoreDeviceLoss)) return false;
    if (error.kind == ErrorKind::DeviceLost) device_lost_ = true;
    return device_lost_;
  }

  // Everything of the lost context is abandoned at once: discard is the only way out (R10).
  void recover() {
    stats_.device_losses++;
    if (mutated(Mutation::ReleaseOnLostContext)) {
      for (auto& slot : buffers_) {
        if (!slot.dead && slot.handle.valid()) (void)backend_.free_buffer(std::move(slot.handle));
      }
    }
    for (auto& slot : buffers_) forget(slot.dead, slot.handle.valid());
    for (auto& slot : events_) forget(slot.dead, slot.handle.valid());
    for (auto& slot : executables_) forget(slot.dead, slot.handle.valid());
    for (auto& queue : queues_) stats_.quarantined_handles += queue.valid() ? 1 : 0;
    for (auto& program : programs_) stats_.quarantined_handles += program.valid() ? 1 : 0;
    buffers_.clear();
    events_.clear();
    executables_.clear();
    queues_.clear();
    for (auto& program : programs_) program = Program{};
    budget_ = MemoryBudget(options_.memory_budget_bytes);
    note(4, backend_.discard_context(std::move(context_)).ok());
    device_lost_ = false;
    context_tainted_ = false;
    if (!open_context()) stats_.problems.push_back("no new context could be created after a device loss.");
  }

  void forget(bool& dead, bool valid) {
    if (!dead && valid) stats_.quarantined_handles++;
    dead = true;
  }

  // ---- the safety phase: one random operation ----

  void step() {
    const std::uint64_t pick = prng_.below(100);
    std::string_view kind;
    if (pick < 10) allocate(), kind = "allocate";
    else if (pick < 17) write(), kind = "write";
    else if (pick < 45) submit_batch(), kind = "submit";
    else if (pick < 60) poll(), kind = "poll";
    else if (pick < 67) wait(), kind = "wait";
    else if (pick < 75) destroy_terminal_events(), kind = "destroy-events";
    else if (pick < 83) read(), kind = "read";
    else if (pick < 88) free_buffer(), kind = "free";
    else if (pick < 90) cancel(), kind = "cancel";
    else if (pick < 93) capture(), kind = "capture";
    else if (pick < 97) replay(), kind = "replay";
    else if (pick < 98) destroy_executable(), kind = "destroy-executable";
    else synchronize(), kind = "synchronize";
    if (options_.after_operation) options_.after_operation(stats_.operations, kind);
  }

  std::uint32_t live_buffers() const {
    std::uint32_t count = 0;
    for (const auto& slot : buffers_) count += slot.dead ? 0 : 1;
    return count;
  }

  void allocate() {
    if (live_buffers() >= options_.buffers_max) return;
    static constexpr std::array<BufferUsage, 3> kUsages = {
        kAllBufferUsage, BufferUsage::ProgramInput | BufferUsage::TransferSource | BufferUsage::TransferTarget,
        BufferUsage::ProgramOutput | BufferUsage::TransferSource | BufferUsage::TransferTarget};
    BufferDesc desc;
    desc.bytes = 8 + 4 * prng_.below(options_.buffer_bytes_max / 4);
    desc.usage = kUsages[prng_.below(kUsages.size())];
    if (mutated(Mutation::StreamOrderedFreeUnordered) && !queues_.empty()) {
      desc.mode = AllocationMode::StreamOrdered;
      desc.queue = queues_.front().ref();
    }
    ResourceTransaction<B> transaction(backend_, context_, budget_, ++transactions_);
    Result<BufferRef> staged = transaction.allocate(desc);
    note(5, staged.ok());
    if (!staged.ok()) {
      stats_.allocation_failures++;
      lost(staged.error());
      return;
    }
    std::vector<Buffer> committed = transaction.commit();
    BufferSlot slot;
    slot.handle = std::move(committed.front());
    slot.usage = desc.usage;
    slot.bytes = desc.bytes;
    slot.model.assign(desc.bytes, 0);
    slot.initialized = mutated(Mutation::UnwrittenBufferRead);
    buffers_.push_back(std::move(slot));
    stats_.allocations++;
  }

  // A random live buffer that no live batch references and that satisfies `accept`, or kNone.
  template <class Accept>
  std::uint32_t pick_buffer(Accept accept, const std::vector<std::uint32_t>& exclude = {}) {
    std::vector<std::uint32_t> candidates;
    for (std::uint32_t i = 0; i < buffers_.size(); ++i) {
      const BufferSlot& slot = buffers_[i];
      if (slot.dead || slot.pins != 0 || !accept(slot)) continue;
      if (std::find(exclude.begin(), exclude.end(), i) != exclude.end()) continue;
      candidates.push_back(i);
    }
    if (candidates.empty()) return kNone;
    return candidates[prng_.below(candidates.size())];
  }

  // Mutants only: a live buffer, pinned or not.
  std::uint32_t pick_any_live_buffer() {
    std::vector<std::uint32_t> candidates;
    for (std::uint32_t i = 0; i < buffers_.size(); ++i) {
      if (!buffers_[i].dead) candidates.push_back(i);
    }
    return candidates.empty() ? kNone : candidates[prng_.below(candidates.size())];
  }

  // Seeded bytes (core/seeded_bytes.h): a trace stores such a payload as its length and seed. The draws that
  // byte-by-byte filling took are still made, so every later decision of the run is what it was.
  std::vector<std::byte> random_bytes(std::uint64_t count) {
    std::vector<std::byte> bytes(count);
    if (count == 0) return bytes;
    fill_seeded_bytes(prng_.next(), bytes);
    for (std::uint64_t draw = 1; draw < count; ++draw) (void)prng_.next();
    return bytes;
  }

  void write() {
    const std::uint32_t index = pick_buffer([](const BufferSlot& slot) {
      return has_usage(slot.usage, BufferUsage::TransferTarget);
    });
    if (index == kNone) return;
    BufferSlot& slot = buffers_[index];
    const std::uint64_t offset = slot.initialized ? 4 * prng_.below(slot.bytes / 4) : 0;
    const std::vector<std::byte> data = random_bytes(slot.bytes - offset);
    const std::span<const std::byte> segment(data);
    const ByteSource source{std::span<const std::span<const std::byte>>(&segment, 1)};
    const Status status = backend_.write_buffer(slot.handle, offset, source);
    note(6, status.ok());
    stats_.writes++;
    if (status.ok()) {
      std::memcpy(slot.model.data() + offset, data.data(), data.size());
      slot.initialized = slot.initialized || offset == 0;
    } else {
      slot.initialized = false;  // a write failing part-way leaves the range partially modified
      lost(status.error());
    }
  }

  void read() {
    const std::uint32_t index = pick_buffer([](const BufferSlot& slot) {
      return slot.initialized && has_usage(slot.usage, BufferUsage::TransferSource);
    });
    if (index == kNone) return;
    BufferSlot& slot = buffers_[index];
    std::vector<std::byte> data(slot.bytes, std::byte{0xA5});
    const std::span<std::byte> segment(data);
    const ByteSink sink{std::span<const std::span<std::byte>>(&segment, 1)};
    const Status status = backend_.read_buffer(slot.handle, 0, sink);
    note(7, status.ok());
    if (!status.ok()) {
      lost(status.error());
      return;
    }
    digest_.add(hash_bytes(data));
    stats_.reads_checked++;
    if (std::memcmp(data.data(), slot.model.data(), data.size()) != 0) {
      stats_.data_mismatches++;
      stats_.problems.push_back("read of buffer " + std::to_string(slot.handle.id()) +
                                " differs from the host model of its bytes.");
    }
  }

  void free_buffer() {
    const bool ignore_pins = mutated(Mutation::FreeWhilePinned) || mutated(Mutation::StreamOrderedFreeUnordered);
    const std::uint32_t index = ignore_pins ? pick_any_live_buffer() : pick_buffer([](const BufferSlot&) { return true; });
    if (index == kNone) return;
    release_buffer(buffers_[index]);
  }

  void release_buffer(BufferSlot& slot) {
    const std::uint64_t bytes = slot.bytes;
    const BufferRef ref = slot.handle.ref();
    ReleaseResult<Buffer> released = backend_.free_buffer(std::move(slot.handle));
    if (mutated(Mutation::ReuseAfterIndeterminateRelease) && released.status == ReleaseStatus::Indeterminate) {
      slot.handle = Buffer(ref.id, ref.epoch);  // the bug: the invalidated handle is kept as if live
      return;
    }
    if (mutated(Mutation::DropRejectedRelease) && released.status == ReleaseStatus::Rejected) {
      slot.dead = true;  // the bug: the live handle that came back is dropped
      return;
    }
    if (settle_release(released, slot.handle)) {
      slot.dead = true;
      if (released.status == ReleaseStatus::Released) budget_.discharge(bytes);
      else budget_.quarantine(bytes);
    }
  }

  // Counts a release outcome; puts a rejected handle back. Returns true when the handle is gone.
  template <class H>
  bool settle_release(ReleaseResult<H>& released, H& handle) {
    note(8, static_cast<std::uint8_t>(released.status));
    switch (released.status) {
      case ReleaseStatus::Released:
        stats_.releases++;
        return true;
      case ReleaseStatus::Rejected:
        stats_.releases_rejected++;
        handle = std::move(released.handle);
        lost(released.error);
        return false;
      case ReleaseStatus::Indeterminate:
        // The inner release may not have happened, so the parent may still hold the child: like
        // virtio-accel's indeterminate release, this context can only end by a whole-device discard.
        stats_.releases_indeterminate++;
        stats_.quarantined_handles++;
        context_tainted_ = true;
        lost(released.error);
        return true;
    }
    return false;
  }

  // ---- batches ----

  struct Plan {
    std::vector<Planned> commands;
    std::vector<std::uint32_t> buffers;  // every buffer slot the batch references
    std::vector<std::uint32_t> waited;
  };

  bool plan_launch(Plan& plan, std::uint32_t queue_index, bool allow_fault) {
    (void)queue_index;
    const auto readable = [](const BufferSlot& slot) {
      return slot.initialized && access_allowed(Access::Read, slot.usage);
    };
    const auto writable = [this](const BufferSlot& slot) {
      return mutated(Mutation::AccessModeForbidden) || access_allowed(Access::Write, slot.usage);
    };
    const auto read_writable = [](const BufferSlot& slot) {
      return slot.initialized && access_allowed(Access::ReadWrite, slot.usage);
    };
    Planned planned;
    planned.kind = CommandKind::Launch;
    const std::uint64_t pick = prng_.below(5);
    if (allow_fault && prng_.chance(options_.device_fault)) {
      planned.kernel = BuiltinKernel::Fault;
      const std::uint32_t target = pick_buffer(writable, plan.buffers);
      if (target == kNone) return false;
      planned.slots = {target};
    } else if (pick == 0) {
      planned.kernel = BuiltinKernel::Fill;
      const std::uint32_t target = pick_buffer(writable, plan.buffers);
      if (target == kNone) return false;
      planned.slots = {target};
      planned.data = u32_bytes(static_cast<std::uint32_t>(prng_.next()));
    } else if (pick == 1 || pick == 2) {
      planned.kernel = pick == 1 ? BuiltinKernel::Copy : BuiltinKernel::Saxpy;
      const std::uint32_t source = pick_buffer(readable, plan.buffers);
      if (source == kNone) return false;
      std::vector<std::uint32_t> exclude = plan.buffers;
      exclude.push_back(source);
      const std::uint32_t target = pick == 1 ? pick_buffer(writable, exclude) : pick_buffer(read_writable, exclude);
      if (target == kNone) return false;
      planned.slots = {source, target};
      if (pick == 2) planned.data = u32_bytes(static_cast<std::uint32_t>(prng_.below(7) + 1));
    } else if (pick == 3) {
      planned.kernel = BuiltinKernel::Checksum;
      const std::uint32_t source = pick_buffer(readable, plan.buffers);
      if (source == kNone) return false;
      std::vector<std::uint32_t> exclude = plan.buffers;
      exclude.push_back(source);
      const std::uint32_t target = pick_buffer(writable, exclude);
      if (target == kNone) return false;
      planned.slots = {source, target};
    } else {
      planned.kernel = BuiltinKernel::Delay;
      planned.data = u64_bytes(1000 * (1 + prng_.below(200)));
    }
    for (std::uint32_t slot : planned.slots) plan.buffers.push_back(slot);
    plan.commands.push_back(std::move(planned));
    return true;
  }

  bool plan_transfer(Plan& plan) {
    const auto target_ok = [](const BufferSlot& slot) { return has_usage(slot.usage, BufferUsage::TransferTarget); };
    const std::uint32_t target = pick_buffer(target_ok, plan.buffers);
    if (target == kNone) return false;
    Planned planned;
    const BufferSlot& slot = buffers_[target];
    planned.target_offset = slot.initialized ? 4 * prng_.below(slot.bytes / 4) : 0;
    planned.bytes = slot.bytes - planned.target_offset;
    const std::uint64_t pick = prng_.below(3);
    if (pick == 0) {
      planned.kind = CommandKind::Zero;
      planned.slots = {target};
    } else if (pick == 1) {
      planned.kind = CommandKind::Upload;
      planned.bytes = std::min<std::uint64_t>(planned.bytes, 256);
      if (!slot.initialized && planned.bytes != slot.bytes) return false;
      planned.data = random_bytes(planned.bytes);
      planned.slots = {target};
    } else {
      planned.kind = CommandKind::Copy;
      const auto source_ok = [](const BufferSlot& candidate) {
        return candidate.initialized && has_usage(candidate.usage, BufferUsage::TransferSource);
      };
      std::vector<std::uint32_t> exclude = plan.buffers;
      exclude.push_back(target);
      const std::uint32_t source = pick_buffer(source_ok, exclude);
      if (source == kNone) return false;
      planned.bytes = std::min(planned.bytes, buffers_[source].bytes);
      if (!slot.initialized && planned.bytes != slot.bytes) return false;
      planned.slots = {source, target};
    }
    for (std::uint32_t s : planned.slots) plan.buffers.push_back(s);
    plan.commands.push_back(std::move(planned));
    return true;
  }

  static std::vector<std::byte> u32_bytes(std::uint32_t value) {
    std::vector<std::byte> bytes(4);
    for (unsigned i = 0; i < 4; ++i) bytes[i] = static_cast<std::byte>((value >> (8U * i)) & 0xFFU);
    return bytes;
  }
  static std::vector<std::byte> u64_bytes(std::uint64_t value) {
    std::vector<std::byte> bytes(8);
    for (unsigned i = 0; i < 8; ++i) bytes[i] = static_cast<std::byte>((value >> (8U * i)) & 0xFFU);
    return bytes;
  }

  Plan plan_batch(std::uint32_t queue_index, bool for_capture) {
    Plan plan;
    const std::uint64_t count = 1 + prng_.below(4);
    for (std::uint64_t i = 0; i < count; ++i) {
      const bool launch = prng_.below(3) != 0;
      if (launch) (void)plan_launch(plan, queue_index, !for_capture);
      else if (!for_capture) (void)plan_transfer(plan);
    }
    if (!for_capture && !plan.commands.empty() && prng_.below(6) == 0) {
      const std::uint32_t waited = pick_waitable_event();
      if (waited != kNone) {
        Planned wait;
        wait.kind = CommandKind::Wait;
        plan.waited.push_back(waited);
        plan.commands.insert(plan.commands.begin(), std::move(wait));
      }
    }
    return plan;
  }

  std::uint32_t pick_waitable_event() {
    std::vector<std::uint32_t> candidates;
    for (std::uint32_t i = 0; i < events_.size(); ++i) {
      if (!events_[i].dead && !events_[i].terminal_seen) candidates.push_back(i);
    }
    return candidates.empty() ? kNone : candidates[prng_.below(candidates.size())];
  }

  // Turns a plan into contract commands; `bindings` and `data` must outlive the submit call.
  std::vector<Command> encode(const Plan& plan, std::vector<std::vector<Binding>>& bindings) {
    std::vector<Command> commands;
    bindings.assign(plan.commands.size(), {});
    std::size_t waited_index = 0;
    for (std::size_t i = 0; i < plan.commands.size(); ++i) {
      const Planned& planned = plan.commands[i];
      switch (planned.kind) {
        case CommandKind::Launch: {
          for (std::size_t b = 0; b < planned.slots.size(); ++b) {
            Access access = binding_access(planned.kernel, b);
            if (mutated(Mutation::WriteThroughReadBinding) && access == Access::Write) access = Access::Read;
            bindings[i].push_back(Binding{buffers_[planned.slots[b]].handle.ref(), access});
          }
          LaunchDims dims;
          dims.grid_x = 1 + static_cast<std::uint32_t>(prng_.below(64));
          dims.block_x = 128;
          commands.push_back(Command::launch(programs_[static_cast<std::size_t>(planned.kernel)].ref(), dims,
                                             bindings[i], planned.data));
          break;
        }
        case CommandKind::Copy:
          commands.push_back(Command::copy(buffers_[planned.slots[0]].handle.ref(), planned.source_offset,
                                           buffers_[planned.slots[1]].handle.ref(), planned.target_offset,
                                           planned.bytes));
          break;
        case CommandKind::Upload:
          commands.push_back(Command::upload(planned.data, buffers_[planned.slots[0]].handle.ref(), planned.target_offset));
          break;
        case CommandKind::Zero:
          commands.push_back(Command::zero(buffers_[planned.slots[0]].handle.ref(), planned.target_offset, planned.bytes));
          break;
        case CommandKind::Wait:
          commands.push_back(Command::wait(events_[plan.waited[waited_index++]].handle.ref()));
          break;
        case CommandKind::Replay:
          break;
      }
    }
    return commands;
  }

  static Access binding_access(BuiltinKernel kernel, std::size_t binding) {
    switch (kernel) {
      case BuiltinKernel::Fill: return Access::Write;
      case BuiltinKernel::Copy:
      case BuiltinKernel::Checksum: return binding == 0 ? Access::Read : Access::Write;
      case BuiltinKernel::Saxpy: return binding == 0 ? Access::Read : Access::ReadWrite;
      case BuiltinKernel::Delay: return Access::Read;
      case BuiltinKernel::Fault: return Access::Write;
    }
    return Access::Read;
  }

  bool programs_loaded(const Plan& plan) const {
    for (const Planned& planned : plan.commands) {
      if (planned.kind == CommandKind::Launch && !programs_[static_cast<std::size_t>(planned.kernel)].valid()) {
        return false;
      }
    }
    return true;
  }

  void submit_batch() {
    if (queues_.empty()) return;
    auto queue_index = static_cast<std::uint32_t>(prng_.below(queues_.size()));
    if (queue_offset_ != 0) queue_index = (queue_index + queue_offset_) % static_cast<std::uint32_t>(queues_.size());
    Plan plan = plan_batch(queue_index, false);
    if (plan.commands.empty() || !programs_loaded(plan)) return;
    std::vector<std::vector<Binding>> bindings;
    const std::vector<Command> commands = encode(plan, bindings);
    SubmitOptions options;
    options.invocation = ++invocations_;
    options.timing = prng_.below(4) == 0;
    options.admission_timeout_ns = options_.wait_timeout_ns;
    submit(queues_[queue_index], commands, options, std::move(plan), kNone);
  }

  // Submits; a Rejected submit is retried exactly, with the same invocation, a bounded number of times.
  void submit(const Queue& queue, const std::vector<Command>& commands, const SubmitOptions& options, Plan plan,
              std::uint32_t executable) {
    for (std::uint32_t attempt = 0; attempt < 3; ++attempt) {
      stats_.submits++;
      SubmitResult result = backend_.submit(queue, commands, options);
      note(9, static_cast<std::uint8_t>(result.status));
      if (result.status == SubmitStatus::Rejected) {
        stats_.submits_rejected++;
        if (lost(result.error)) return;
        if (mutated(Mutation::RejectedSubmitApplied)) {  // the bug: rejected work is taken as run
          for (const Planned& planned : executable == kNone ? plan.commands : executables_[executable].effects) {
            apply(planned);
          }
          return;
        }
        stats_.retries++;
        continue;
      }
      if (result.status == SubmitStatus::Indeterminate) stats_.submits_indeterminate++;
      if (mutated(Mutation::PartialSubmitAsRejected) && result.status == SubmitStatus::Indeterminate &&
          result.commands_enqueued < commands.size()) {
        result.event = Event{};  // the bug: a partial submit taken as rejected: its event dropped, batch retried
        stats_.retries++;
        continue;
      }
      const bool resubmit = mutated(Mutation::RetryIndeterminateSubmit) && result.status == SubmitStatus::Indeterminate;
      Plan again = resubmit ? plan : Plan{};
      EventSlot slot;
      slot.handle = std::move(result.event);
      slot.indeterminate = result.status == SubmitStatus::Indeterminate;
      slot.buffers = std::move(plan.buffers);
      slot.waited = std::move(plan.waited);
      slot.effects = std::move(plan.commands);
      slot.executable = executable;
      for (std::uint32_t b : slot.buffers) buffers_[b].pins++;
      for (std::uint32_t e : slot.waited) events_[e].pins++;
      if (executable != kNone) executables_[executable].live_replays++;
      if (slot.indeterminate) lost(result.error);
      if (mutated(Mutation::IndeterminateSubmitUnpinned) && slot.indeterminate) {
        for (std::uint32_t b : slot.buffers) buffers_[b].pins--;  // the bug: it may not have run, so pin nothing
        slot.buffers.clear();
      }
      events_.push_back(std::move(slot));
      if (resubmit) {  // the bug: indeterminate work submitted again with the same invocation
        plan = std::move(again);
        continue;
      }
      return;
    }
  }

  // ---- observing events ----

  std::uint32_t pick_live_event(bool pending_only) {
    std::vector<std::uint32_t> candidates;
    for (std::uint32_t i = 0; i < events_.size(); ++i) {
      if (!events_[i].dead && (!pending_only || !events_[i].terminal_seen)) candidates.push_back(i);
    }
    return candidates.empty() ? kNone : candidates[prng_.below(candidates.size())];
  }

  void poll() {
    const std::uint32_t index = pick_live_event(false);
    if (index == kNone) return;
    stats_.polls++;
    const Observation observation = backend_.poll_event(events_[index].handle);
    note(10, static_cast<std::uint8_t>(observation.state));
    observe(index, observation.state, observation.error);
  }

  void wait() {
    const std::uint32_t index = pick_live_event(true);
    if (index == kNone) return;
    wait_for(index);
  }

  void wait_for(std::uint32_t index) {
    stats_.waits++;
    const WaitResult result = backend_.wait_event(events_[index].handle, options_.wait_timeout_ns);
    note(11, result.ok());
    if (result.ok()) {
      observe(index, result.value().state, result.value().error);
    } else if (mutated(Mutation::IndeterminateWaitAsTerminal)) {
      observe(index, EventState::Complete, Error{});  // the bug: an unproven fence taken as complete
    } else {
      stats_.waits_indeterminate++;
      lost(result.error().error);
    }
  }

  void observe(std::uint32_t index, EventState state, const Error& error) {
    EventSlot& slot = events_[index];
    if (state == EventState::Indeterminate) {
      lost(error);
      return;
    }
    if (!is_terminal(state)) return;
    if (slot.terminal_seen) {
      if (state != slot.terminal) {
        stats_.terminal_changes++;
        stats_.problems.push_back("event " + std::to_string(slot.handle.id()) + " changed its terminal state.");
      }
      return;
    }
    slot.terminal_seen = true;
    slot.terminal = state;
    if (state == EventState::Complete) stats_.terminals_complete++;
    if (state == EventState::FailedButQuiescent) stats_.terminals_failed++;
    if (state == EventState::Cancelled) stats_.terminals_cancelled++;
    const bool applies_cancelled = mutated(Mutation::ApplyWonCancellation) && state == EventState::Cancelled;
    const bool ran_exactly = (state == EventState::Complete || applies_cancelled) && !slot.indeterminate;
    const std::vector<Planned>& effects =
        slot.executable == kNone ? slot.effects : executables_[slot.executable].effects;
    for (const Planned& planned : effects) {
      if (state == EventState::Cancelled && !applies_cancelled) break;  // a won cancellation has no effects (R8)
      if (ran_exactly) apply(planned);
      else forget_contents(planned);
    }
    if (error.kind == ErrorKind::DeviceLost) lost(error);
    if (mutated(Mutation::AbandonAfterLocalError) && state == EventState::FailedButQuiescent &&
        error.kind != ErrorKind::DeviceLost) {
      abandon_pending_events();
    }
  }

  // Mutants only: every other pending event is taken as failed, as if one local error had stopped them all.
  void abandon_pending_events() {
    for (auto& other : events_) {
      if (other.dead || other.terminal_seen) continue;
      other.terminal_seen = true;
      other.terminal = EventState::FailedButQuiescent;
      for (const Planned& planned : other.effects) forget_contents(planned);
    }
  }

  void apply(const Planned& planned) {
    switch (planned.kind) {
      case CommandKind::Launch: {
        std::vector<std::vector<std::uint8_t>*> bound;
        for (std::uint32_t s : planned.slots) bound.push_back(&buffers_[s].model);
        (void)apply_kernel(planned.kernel, bound, planned.data);
        if (planned.kernel == BuiltinKernel::Fill) buffers_[planned.slots[0]].initialized = true;
        if (planned.kernel == BuiltinKernel::Copy) {
          BufferSlot& target = buffers_[planned.slots[1]];
          target.initialized = target.initialized || buffers_[planned.slots[0]].bytes >= target.bytes;
        }
        break;
      }
      case CommandKind::Copy: {
        BufferSlot& target = buffers_[planned.slots[1]];
        std::memmove(target.model.data() + planned.target_offset,
                     buffers_[planned.slots[0]].model.data() + planned.source_offset, planned.bytes);
        target.initialized = target.initialized || planned.bytes == target.bytes;
        break;
      }
      case CommandKind::Upload: {
        BufferSlot& target = buffers_[planned.slots[0]];
        std::memcpy(target.model.data() + planned.target_offset, planned.data.data(), planned.data.size());
        target.initialized = target.initialized || planned.bytes == target.bytes;
        break;
      }
      case CommandKind::Zero: {
        BufferSlot& target = buffers_[planned.slots[0]];
        std::memset(target.model.data() + planned.target_offset, 0, planned.bytes);
        target.initialized = target.initialized || planned.bytes == target.bytes;
        break;
      }
      case CommandKind::Wait:
      case CommandKind::Replay:
        break;
    }
  }

  // An outcome that cannot say what ran: the written buffers are never read again until rewritten.
  void forget_contents(const Planned& planned) {
    if (planned.kind == CommandKind::Wait) return;
    const std::size_t first_written = planned.slots.size() == 2 ? 1 : 0;
    for (std::size_t i = first_written; i < planned.slots.size(); ++i) {
      buffers_[planned.slots[i]].initialized = false;
      stats_.reads_unknown++;
    }
  }

  void destroy_terminal_events() {
    for (std::uint32_t i = 0; i < events_.size(); ++i) {
      EventSlot& slot = events_[i];
      const bool observed = slot.terminal_seen || mutated(Mutation::DestroyUnobservedEvent);
      if (slot.dead || !observed || slot.pins != 0) continue;
      ReleaseResult<Event> released = backend_.destroy_event(std::move(slot.handle));
      if (!settle_release(released, slot.handle)) continue;
      slot.dead = true;
      if (released.status == ReleaseStatus::Indeterminate) {  // what it pinned stays quarantined (R2)
        quarantine_reachable(i);
        continue;
      }
      for (std::uint32_t b : slot.buffers) buffers_[b].pins--;
      for (std::uint32_t e : slot.waited) events_[e].pins--;
      if (slot.executable != kNone) executables_[slot.executable].live_replays--;
    }
  }

  // Everything an event reaches (its buffers, the events it waited on, its executable, and in turn what those
  // reach) stays retained until the context is discarded. Iterative, bounded by the number of events.
  void quarantine_reachable(std::uint32_t first_event) {
    std::vector<std::uint32_t> pending = {first_event};
    for (std::size_t steps = 0; !pending.empty() && steps <= events_.size(); ++steps) {
      EventSlot& slot = events_[pending.back()];
      pending.pop_back();
      for (std::uint32_t b : slot.buffers) buffers_[b].quarantined = true;
      if (slot.executable != kNone) quarantine_executable(executables_[slot.executable]);
      for (std::uint32_t e : slot.waited) {
        if (!events_[e].quarantined) {
          events_[e].quarantined = true;
          pending.push_back(e);
        }
      }
    }
  }

  void quarantine_executable(ExecutableSlot& slot) {
    slot.quarantined = true;
    for (std::uint32_t b : slot.buffers) buffers_[b].quarantined = true;
  }

  void cancel() {
    const std::uint32_t index = pick_live_event(true);
    if (index == kNone) return;
    const Status status = backend_.cancel_event(events_[index].handle);
    note(12, status.ok() ? 0 : static_cast<std::uint8_t>(status.error().kind) + 1);
    if (!status.ok()) lost(status.error());
  }

  void synchronize() {
    if (queues_.empty()) return;
    const Status status = backend_.synchronize(queues_[prng_.below(queues_.size())], options_.wait_timeout_ns);
    note(13, status.ok());
    if (!status.ok()) lost(status.error());
  }

  // ---- captured executables ----

  void capture() {
    if (queues_.empty()) return;
    const auto queue_index = static_cast<std::uint32_t>(prng_.below(queues_.size()));
    Plan plan = plan_batch(queue_index, true);
    if (plan.commands.empty() || !programs_loaded(plan)) return;
    std::vector<std::vector<Binding>> bindings;
    const std::vector<Command> commands = encode(plan, bindings);
    const Queue& queue = queues_[queue_index];
    const Status begun = backend_.begin_capture(queue);
    note(14, begun.ok());
    if (!begun.ok()) {
      lost(begun.error());
      return;
    }
    if (mutated(Mutation::SyncInsideCapture)) (void)backend_.synchronize(queue, options_.wait_timeout_ns);
    const Status recorded = backend_.capture(queue, commands);
    note(15, recorded.ok());
    if (!recorded.ok() && lost(recorded.error())) return;  // a lost context takes its capture with it
    if (mutated(Mutation::CaptureNotEnded)) return;  // the bug: the window is never ended
    Result<Executable> executable = backend_.end_capture(queue);  // every begin is ended (R13)
    note(16, executable.ok());
    if (!executable.ok()) {
      lost(executable.error());
      return;
    }
    if (!recorded.ok()) {  // a capture that failed part-way is not replayed
      ReleaseResult<Executable> released = backend_.destroy_executable(std::move(executable).value());
      note(17, static_cast<std::uint8_t>(released.status));
      if (released.status == ReleaseStatus::Rejected) leaked_executables_.push_back(std::move(released.handle));
      return;
    }
    stats_.captures++;
    ExecutableSlot slot;
    slot.handle = std::move(executable).value();
    slot.buffers = std::move(plan.buffers);
    slot.effects = std::move(plan.commands);
    if (!mutated(Mutation::CapturedBuffersUnpinned)) {
      for (std::uint32_t b : slot.buffers) buffers_[b].pins++;
    }
    executables_.push_back(std::move(slot));
  }

  void replay() {
    std::vector<std::uint32_t> candidates;
    for (std::uint32_t i = 0; i < executables_.size(); ++i) {
      const ExecutableSlot& slot = executables_[i];
      if (slot.dead || slot.live_replays != 0) continue;
      bool exclusive = true;
      for (std::uint32_t b : slot.buffers) exclusive = exclusive && buffers_[b].pins == 1;
      if (exclusive) candidates.push_back(i);
    }
    if (candidates.empty() || queues_.empty()) return;
    const std::uint32_t index = candidates[prng_.below(candidates.size())];
    const std::vector<Command> commands = {Command::replay(executables_[index].handle.ref())};
    SubmitOptions options;
    options.invocation = ++invocations_;
    options.admission_timeout_ns = options_.wait_timeout_ns;
    Plan plan;
    plan.buffers = executables_[index].buffers;
    stats_.replays++;
    submit(queues_[prng_.below(queues_.size())], commands, options, std::move(plan), index);
  }

  void destroy_executable() {
    for (auto& slot : executables_) {
      if (slot.dead || slot.live_replays != 0) continue;
      ReleaseResult<Executable> released = backend_.destroy_executable(std::move(slot.handle));
      if (!settle_release(released, slot.handle)) return;
      slot.dead = true;
      if (released.status == ReleaseStatus::Released) {
        if (!mutated(Mutation::CapturedBuffersUnpinned)) {
          for (std::uint32_t b : slot.buffers) buffers_[b].pins--;
        }
      } else {
        quarantine_executable(slot);
      }
      return;
    }
  }

  // ---- the liveness phase: everything retained must be released within a bounded number of rounds ----

  void drain() {
    for (std::uint32_t round = 0; round < options_.liveness_rounds_max; ++round) {
      if (device_lost_) recover();
      for (std::uint32_t i = 0; i < events_.size() && !device_lost_; ++i) {
        if (!events_[i].dead && !events_[i].terminal_seen) wait_for(i);
      }
      destroy_terminal_events();
      for (std::size_t i = 0; i < executables_.size(); ++i) destroy_executable();
      bool leaked_one = false;
      for (auto& slot : buffers_) {
        if (slot.dead || slot.pins != 0) continue;
        if (mutated(Mutation::LeakAtShutdown) && !leaked_one) {
          leaked_one = true;  // the bug: one buffer is forgotten at shutdown
          continue;
        }
        release_buffer(slot);
      }
      if (everything_released()) break;
    }
    close_context();
  }

  bool everything_released() const {
    for (const auto& slot : buffers_) if (!slot.dead) return false;
    for (const auto& slot : events_) if (!slot.dead) return false;
    for (const auto& slot : executables_) if (!slot.dead) return false;
    return true;
  }

  void close_context() {
    std::uint64_t quarantined = 0;
    std::uint64_t leaked_buffers = 0;
    std::uint64_t leaked_events = 0;
    std::uint64_t leaked_executables = leaked_executables_.size();
    for (const auto& slot : buffers_) {
      if (!slot.dead && slot.quarantined) quarantined++;
      else if (!slot.dead) leaked_buffers++;
    }
    for (const auto& slot : events_) {
      if (!slot.dead && slot.quarantined) quarantined++;
      else if (!slot.dead) leaked_events++;
    }
    for (const auto& slot : executables_) {
      if (!slot.dead && slot.quarantined) quarantined++;
      else if (!slot.dead) leaked_executables++;
    }
    stats_.quarantined_handles += quarantined;
    stats_.leaked_handles += leaked_buffers + leaked_events + leaked_executables;
    if (leaked_buffers + leaked_events + leaked_executables != 0) {
      stats_.problems.push_back("the liveness phase ended with " + std::to_string(leaked_buffers) + " buffers, " +
                                std::to_string(leaked_events) + " events and " + std::to_string(leaked_executables) +
                                " executables still live.");
    }
    if (quarantined != 0 || context_tainted_) device_lost_ = true;  // only a discard lets these go
    if (stats_.leaked_handles != 0 || device_lost_) {
      // Whatever is left is abandoned with the context: the one legal way to let it go.
      note(4, backend_.discard_context(std::move(context_)).ok());
      return;
    }
    if (mutated(Mutation::DestroyContextBeforeChildren)) {  // the bug: the parent goes first
      ReleaseResult<Context> released = backend_.destroy_context(std::move(context_));
      if (settle_release(released, context_)) return;
    }
    for (auto& program : programs_) release_with_retries(program, [&](Program&& p) { return backend_.unload_program(std::move(p)); });
    for (auto& queue : queues_) release_with_retries(queue, [&](Queue&& q) { return backend_.destroy_queue(std::move(q)); });
    bool context_released = false;
    for (std::uint32_t round = 0; round < kReleaseRoundsMax && !context_released; ++round) {
      ReleaseResult<Context> released = backend_.destroy_context(std::move(context_));
      context_released = settle_release(released, context_);
    }
    if (!context_released) note(4, backend_.discard_context(std::move(context_)).ok());
  }

  template <class H, class Release>
  void release_with_retries(H& handle, Release release) {
    for (std::uint32_t round = 0; round < kReleaseRoundsMax && handle.valid(); ++round) {
      auto released = release(std::move(handle));
      if (settle_release(released, handle)) return;
    }
    if (handle.valid()) {
      stats_.leaked_handles++;
      stats_.problems.push_back("a release was rejected " + std::to_string(kReleaseRoundsMax) +
                                " times in the liveness phase.");
    }
  }

  void note(std::uint8_t what, std::uint64_t outcome) {
    digest_.add(what);
    digest_.add(outcome);
  }

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

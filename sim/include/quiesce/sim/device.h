// sim::Device: the simulated device, a discrete-event implementation of the whole quiesce::Backend concept.
//
// Deterministic from Config::seed. Every submitted command waits, starts and finishes at virtual times from
// the cost profile, on queues that run concurrently over execution engines (launches) and copy engines
// (copy, upload, zero); commands of a queue run in order. Buffers have host backing and the builtin kernels
// compute on it. Blocking calls pass virtual time through a Waiter. The oracle records ground truth.
//
// The implementation is split by concern: device.cc (identity, contexts, programs, controls),
// device_memory.cc (buffers, transfers, pools), device_submit.cc (queues, validation, staging),
// device_events.cc (poll, wait, cancel, synchronize), device_execution.cc (engines), device_effects.cc
// (what commands do to bytes), device_discard.cc (discarding a context),
// device_capture.cc (capture and executables).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "quiesce/core/backend.h"
#include "quiesce/core/digest.h"
#include "quiesce/core/prng.h"
#include "quiesce/sim/allocator.h"
#include "quiesce/sim/backing.h"
#include "quiesce/sim/clock.h"
#include "quiesce/sim/codes.h"
#include "quiesce/sim/config.h"
#include "quiesce/sim/oracle.h"
#include "quiesce/sim/records.h"
#include "quiesce/sim/slot_table.h"

namespace quiesce::sim {

// Storage retained by every loaded program (R17): load_program fails when it exceeds resident_bytes.
inline constexpr std::uint64_t kProgramResidentBytes = 4096;

class Device {
 public:
  Device();
  explicit Device(const Config& config);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  Device(Device&&) = delete;
  Device& operator=(Device&&) = delete;

  // ---- the Backend concept ----
  Result<DeviceInfo> device_info();
  std::string describe_error(const Error& error) const;

  Result<Context> create_context(const ContextDesc& desc);
  ReleaseResult<Context> destroy_context(Context&& context);
  Status discard_context(Context&& context);

  Result<Buffer> allocate_buffer(const Context& context, const AllocationPermit& permit);
  Result<BufferInfo> buffer_info(const Buffer& buffer);
  Status write_buffer(Buffer& buffer, std::uint64_t offset, ByteSource source);
  Status read_buffer(const Buffer& buffer, std::uint64_t offset, ByteSink sink);
  ReleaseResult<Buffer> free_buffer(Buffer&& buffer);

  Result<Program> load_program(const Context& context, const ArtifactRef& artifact);
  ReleaseResult<Program> unload_program(Program&& program);

  Result<Queue> create_queue(const Context& context, const QueueDesc& desc);
  ReleaseResult<Queue> destroy_queue(Queue&& queue);
  QueueState queue_state(const Queue& queue);
  SubmitResult submit(const Queue& queue, Batch batch, SubmitOptions options);
  Status synchronize(const Queue& queue, std::uint64_t timeout_ns);

  Observation poll_event(const Event& event);
  WaitResult wait_event(const Event& event, std::uint64_t timeout_ns);
  Status cancel_event(const Event& event);
  ReleaseResult<Event> destroy_event(Event&& event);

  Status begin_capture(const Queue& queue);
  Status capture(const Queue& queue, Batch batch);
  Result<Executable> end_capture(const Queue& queue);
  ReleaseResult<Executable> destroy_executable(Executable&& executable);

  Result<MemoryUsage> memory_usage(const Context& context);
  Result<MemoryReport> memory_report(const Context& context);
  Status install_pools(const Context& context, const PoolLayout& layout);
  Status memory_cleanup(const Context& context);

  // ---- simulator controls ----
  const Config& config() const { return config_; }
  VirtualClock& clock() { return clock_; }
  std::uint64_t now_ns() const { return clock_.now_ns(); }
  void advance_to(std::uint64_t time_ns) { clock_.advance_to(time_ns); }
  bool run_next() { return clock_.run_next(); }
  bool run_until_idle(std::uint64_t events_max) { return clock_.run_until_idle(events_max); }
  // Installs the Waiter every blocking call goes through; nullptr restores the default ClockWaiter.
  void set_waiter(Waiter* waiter) { waiter_ = waiter != nullptr ? waiter : &clock_waiter_; }
  Waiter& waiter() { return *waiter_; }

  // ---- ground truth ----
  const std::vector<Finding>& findings() const { return oracle_.findings(); }
  // The layer that reported Rejected to the runtime declares it: an execution of this invocation, before
  // or after, is a finding.
  void note_reported_rejected(std::uint64_t invocation);
  std::uint64_t digest() const { return digest_.value(); }
  std::uint64_t operations() const { return operations_; }
  const AddressAllocator& address_space() const { return allocator_; }

 private:
  class Timer final : public TimerTarget {
   public:
    explicit Timer(Device& device) : device_(&device) {}
    void on_timer(std::uint64_t cookie, std::uint64_t now_ns) override;

   private:
    Device* device_;
  };

  // ---- resolution (device.cc) ----
  ContextRecord* find_context(std::uint64_t id, std::uint32_t epoch);
  // The context of a live child: it exists as long as the child does.
  ContextRecord& context_of(std::uint64_t context_id);
  // Lost, or gone altogether: either way nothing on it completes any more.
  bool context_lost(std::uint64_t context_id) const {
    const ContextRecord* context = contexts_.find(context_id);
    return context == nullptr || context->lost;
  }
  BufferRecord* find_buffer(BufferRef ref);
  ProgramRecord* find_program(ProgramRef ref);
  QueueRecord* find_queue(QueueRef ref);
  EventRecord* find_event(EventRef ref);
  ExecutableRecord* find_executable(ExecutableRef ref);
  bool has_capability(Capability capability) const;
  void charge_host_ns(std::uint64_t cost_ns);
  void note(std::uint32_t call, std::uint64_t subject, const Error* error);

  // ---- memory (device_memory.cc) ----
  void release_buffer_memory(std::uint64_t buffer_id);
  void process_deferred_frees(std::uint64_t queue_id);
  bool running_command_touches(std::uint64_t buffer_id) const;
  Status implicit_device_wait();

  // ---- submission (device_submit.cc) ----
  Status admit(const Queue& queue, std::uint64_t timeout_ns);
  std::uint64_t stage_batch(std::uint64_t queue_id, QueueRecord& queue, Batch batch, SubmitOptions options);
  Status validate_batch(std::uint64_t context_id, const QueueRecord& queue, Batch batch, bool capturing);
  Status validate_command(std::uint64_t context_id, const Command& command, bool capturing);
  Status validate_buffer_range(std::uint64_t context_id, BufferRef ref, BufferUsage needed, std::uint64_t offset,
                               std::uint64_t bytes);
  void stage_command(const Command& command, CommandStore& store, QueueRecord* queue, bool pin);
  ResolvedBuffer resolve_buffer(BufferRef ref);
  void unreference(const StagedCommand& command, const CommandStore& store, bool pinned);

  // ---- execution (device_execution.cc) ----
  void schedule_pump(std::uint64_t queue_id);
  void drain();
  void pump(std::uint64_t queue_id);
  void dispatch_engines();
  enum class ReplayStep : std::uint8_t { Node, Finished, Blocked };
  ReplayStep step_replay(QueueRecord& queue, BatchRecord& batch, const StagedCommand& command,
                         const StagedCommand*& node, const CommandStore*& store);
  bool engine_available(QueueRecord& queue, std::uint8_t engine_class);
  // `stamp` carries the tick and clock: the command itself, or the Replay whose captured node it is.
  bool start_command(std::uint64_t queue_id, QueueRecord& queue, BatchRecord& batch, const StagedCommand& command,
                     const StagedCommand& stamp, const CommandStore& store, bool replayed);
  std::uint64_t apply_command(std::uint64_t queue_id, const QueueRecord& queue, const StagedCommand& command,
                              const StagedCommand& stamp, const CommandStore& store, bool replayed, bool& faulted);
  std::uint64_t apply_launch(std::uint64_t queue_id, const StagedCommand& command, const CommandStore& store,
                             const Accessor& accessor, bool& faulted);
  bool check_alive(const ResolvedBuffer& buffer, std::uint64_t queue_id, const Accessor& accessor);
  void device_read(const ResolvedBuffer& buffer, std::uint64_t offset, std::uint64_t bytes, const Accessor& accessor);
  void device_write(const ResolvedBuffer& buffer, std::uint64_t offset, std::uint64_t bytes, const Accessor& accessor);
  void on_command_finished(std::uint64_t cookie);
  void finish_batch(std::uint64_t queue_id, QueueRecord& queue);
  void retire_head(std::uint64_t queue_id, QueueRecord& queue);
  void wake_blocked(QueueRun reason, std::uint64_t blocked_on_id);
  void lose_context(std::uint64_t context_id);
  void stop_queue(QueueRecord& queue);
  std::uint64_t jitter(std::uint64_t cost_ns);
  bool queue_idle(std::uint64_t queue_id) const;
  bool device_idle() const;

  // ---- capture (device_capture.cc) ----
  void invalidate_capture(QueueRecord& queue);
  void unpin_store(const CommandStore& store);

  Config config_;
  VirtualClock clock_;
  ClockWaiter clock_waiter_;
  Waiter* waiter_;
  Timer timer_;
  Prng cost_prng_;
  Digest digest_;
  Oracle oracle_;
  Backing backing_;
  AddressAllocator allocator_;

  SlotTable<ContextRecord> contexts_;
  SlotTable<BufferRecord> buffers_;
  SlotTable<ProgramRecord> programs_;
  SlotTable<QueueRecord> queues_;
  SlotTable<EventRecord> events_;
  SlotTable<ExecutableRecord> executables_;

  std::uint32_t next_epoch_ = 0;
  std::uint32_t agents_in_use_ = 1;  // bit 0 is the host
  std::array<std::uint32_t, kAgentsMax> agent_ticks_{};
  VectorClock host_clock_;
  std::array<std::uint32_t, 2> engines_free_{};
  std::array<std::uint32_t, 2> engines_waiting_{};
  std::uint64_t ready_order_ = 0;
  std::vector<std::uint64_t> pump_list_;
  bool draining_ = false;
  std::vector<DeferredFree> deferred_frees_;
  std::vector<std::uint64_t> binding_sizes_;             // scratch for one launch
  std::vector<std::span<std::byte>> binding_spans_;     // scratch for one launch
  std::uint64_t operations_ = 0;
};

static_assert(quiesce::Backend<Device>);

}  // namespace quiesce::sim

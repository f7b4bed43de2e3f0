// cuda::Device: the real GPU behind the quiesce::Backend concept, through the CUDA Driver API.
//
// A thin backend (Dawn's shape): it maps each contract call onto driver calls and reports what the driver
// can prove, no more. The decisions that make it honest:
// - Contexts are cuCtxCreate contexts, each with a fresh epoch; a sticky error (700, 702, 714–719, ...) marks
//   the context lost, and from then on every call on it fails closed with DeviceLost without touching the
//   driver, and releases are Indeterminate. Recovery is a new context (discard_context the old one).
// - Buffers come from cuMemAlloc, or cuMemAllocAsync/cuMemFreeAsync on their queue's stream (stream
//   ordered). The memory ledger is the Device's own; cuMemGetInfo is advisory.
// - Each submitted batch ends with one cuEventRecord on the queue's non-blocking stream. Polls map
//   cuEventQuery SUCCESS to Complete, NOT_READY to Pending and anything else to Indeterminate. A batch whose
//   command k > 0 fails to enqueue is a partial submit: Indeterminate with an event for the prefix (which
//   ends FailedButQuiescent once the prefix is done). A failure of the first command is Rejected.
// - Commands are validated before anything is enqueued, so a validation error is always a Rejected submit.
// - Waits poll with backoff until the deadline, then answer FenceIndeterminate{Timeout}.
// - Graphs by stream capture in GLOBAL mode; begin_capture is always paired with cuStreamEndCapture; no
//   memory nodes (allocation and free on a capturing queue are refused); captured buffers stay pinned
//   (free_buffer answers Rejected{Busy}) until the executable is destroyed after its last replay is done.
// - No kernel cancellation exists in CUDA: cancel_event answers Unsupported.
// Not internally synchronized: one thread at a time calls a Device (as with sim::Device).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "quiesce/core/backend.h"
#include "quiesce/cuda/detail/slot_table.h"
#include "quiesce/cuda/driver.h"

namespace quiesce::cuda {

// How a batch's completion is signalled (docs/cuda.md, "Completion signals").
enum class CompletionSignal : std::uint8_t {
  PerBatch,  // one cuEventRecord (pooled, timing disabled) after every batch, at submit
  OnDemand,  // no record at submit: the first poll, wait or cross-queue Wait that needs one records one
             // event at the queue's tail, which then answers for every batch submitted before it
};

struct DeviceOptions {
  int ordinal = 0;
  // QUIESCE_CUDA_COMPLETION=on-demand or per-batch in the environment overrides this at Device::open.
  CompletionSignal completion = CompletionSignal::PerBatch;
  std::uint32_t queue_depth_max = 1024;     // batches in flight per queue before admission waits
  std::uint32_t queues_max = 256;
  std::uint32_t batch_commands_max = 4096;
  std::uint32_t bindings_max = 16;
  std::uint32_t parameter_bytes_max = 4096;
  std::uint32_t objects_max = 1U << 20U;    // live handles of one kind, per Device
  // How a wait paces its polls (docs/cuda.md, "Waits"): it yields between polls for its first
  // poll_spin_ns, then sleeps an eighth of the time waited so far, at most poll_backoff_max_ns.
  std::uint64_t poll_spin_ns = 2'000'000;
  std::uint64_t poll_backoff_max_ns = 200'000;  // the longest sleep between two polls of a wait
};

struct BuiltinKernel;  // quiesce/cuda/kernels.h

namespace detail {

struct ContextSlot {
  CUcontext context = nullptr;
  std::uint32_t epoch = 0;
  bool lost = false;
  Error lost_error = {};
  std::uint32_t children = 0;  // live buffers, programs, queues, events and executables
  MemoryUsage usage = {};
  std::vector<CUevent> idle_events;         // recycled completion events (timing disabled)
  std::vector<CUevent> idle_timing_events;  // recycled timing events
  std::uint32_t capturing_queues = 0;       // GLOBAL-mode captures forbid unsafe calls context-wide
  CUevent origin_event = nullptr;           // the zero of this context's device timeline
  std::uint64_t origin_host_ns = 0;         // host steady-clock time at which origin_event completed
};

struct BufferSlot {
  std::uint64_t context_id = 0;
  CUdeviceptr pointer = 0;
  BufferInfo info = {};
  std::uint64_t queue_id = 0;  // the ordering queue of a stream-ordered buffer
  CUstream stream = nullptr;
  std::uint32_t pins = 0;      // executables whose graphs bake in this address
};

struct ProgramSlot {
  std::uint64_t context_id = 0;
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  const BuiltinKernel* builtin = nullptr;  // its entry in builtin_kernels(), or null for a user artifact
  std::uint64_t parameter_bytes = 0;   // the kernel's whole parameter block, from cuFuncGetParamInfo
  bool parameter_bytes_known = false;
  std::uint64_t resident_bytes = 0;
};

struct CaptureState {
  std::vector<std::uint64_t> pinned_buffers;
  bool failed = false;                                 // a command failed: end_capture yields no graph
  Error failure = {};
};

struct QueueSlot {
  std::uint64_t context_id = 0;
  CUstream stream = nullptr;
  bool capturing = false;
  CaptureState capture;
  // Event ids not yet observed terminal, oldest first. A deque: events are mostly destroyed oldest first,
  // and erasing the front of a vector would move every later id.
  std::deque<std::uint64_t> in_flight;
  // Every batch submitted gets the next sequence number. On-demand completion: batches up to
  // completed_sequence are known complete; `probe` (when not null) was recorded after batch probe_sequence.
  std::uint64_t submitted_sequence = 0;
  std::uint64_t completed_sequence = 0;
  CUevent probe = nullptr;
  std::uint64_t probe_sequence = 0;
};

struct EventSlot {
  std::uint64_t context_id = 0;
  std::uint64_t queue_id = 0;
  CUstream stream = nullptr;
  CUevent done = nullptr;          // recorded after the batch (or its enqueued prefix)
  CUevent timing_start = nullptr;  // recorded before the batch when timing was requested
  bool on_demand = false;          // no event of its own: its queue's probe answers (CompletionSignal::OnDemand)
  std::uint64_t sequence = 0;      // the batch's sequence number on its queue
  bool recorded = false;           // false: the record itself failed; fall back to cuStreamQuery
  bool partial = false;            // a partial submit: terminal is FailedButQuiescent
  Error partial_error = {};
  bool terminal = false;
  Observation observed = {};
  std::uint64_t submitted_ns = 0;
};

struct ExecutableSlot {
  std::uint64_t context_id = 0;
  CUgraphExec graph = nullptr;
  std::vector<std::uint64_t> pinned_buffers;
  std::uint64_t last_replay_event = 0;
};

}  // namespace detail

class Device {
 public:
  // Loads the driver (or reuses `driver`) and opens GPU `options.ordinal`.
  static Result<Device, DriverUnavailable> open(const DeviceOptions& options = {},
                                                const DriverOptions& driver_options = {});
  static Result<Device, DriverUnavailable> open(std::shared_ptr<const Driver> driver,
                                                const DeviceOptions& options = {});

  Device(Device&& other) noexcept = default;
  Device& operator=(Device&& other) noexcept = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  ~Device();

  // ---- the Backend concept ----
  Result<DeviceInfo> device_info();
  std::string describe_error(const Error& error) const;

  Result<Context> create_context(ContextDesc desc);
  ReleaseResult<Context> destroy_context(Context&& context);
  Status discard_context(Context&& context);

  Result<Buffer> allocate_buffer(const Context& context, const AllocationPermit& permit);
  Result<BufferInfo> buffer_info(const Buffer& buffer);
  Status write_buffer(Buffer& buffer, std::uint64_t offset, ByteSource source);
  Status read_buffer(const Buffer& buffer, std::uint64_t offset, ByteSink sink);
  ReleaseResult<Buffer> free_buffer(Buffer&& buffer);

  Result<Program> load_program(const Context& context, const ArtifactRef& artifact);
  ReleaseResult<Program> unload_program(Program&& program);

  Result<Queue> create_queue(const Context& context, QueueDesc desc);
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

  // ---- beyond the concept: for HIL, calibration and benchmarks ----
  const Driver& driver() const { return *driver_; }
  CUdevice native_device() const { return device_; }
  bool context_lost(const Context& context) const;
  // The native objects behind handles (nullptr / 0 when the handle does not resolve).
  CUcontext native_context(const Context& context) const;
  CUstream native_stream(const Queue& queue) const;
  CUfunction native_function(const Program& program) const;
  CUdeviceptr native_pointer(const Buffer& buffer) const;
  CUgraphExec native_executable(const Executable& executable) const;
  CompletionSignal completion() const { return options_.completion; }

 private:
  Device(std::shared_ptr<const Driver> driver, const DeviceOptions& options, CUdevice device);

  const DriverFunctions& api() const { return driver_->api(); }
  detail::ContextSlot* live_context(std::uint64_t id, std::uint32_t epoch);
  // The slot a child handle names, if its id is live and its epoch is its context's (src/device_internal.h).
  template <class Slot>
  Slot* resolve(detail::SlotTable<Slot>& table, std::uint64_t id, std::uint32_t epoch);
  // Resolves the context of a child, checks it is not lost and makes it current.
  Result<detail::ContextSlot*> enter(std::uint64_t context_id);
  // The same for a context already resolved: its lost error, or success with it current.
  Status make_current(detail::ContextSlot& context);
  // Maps a failed call; a sticky code marks the context lost.
  Error fail(detail::ContextSlot& context, CUresult code, std::string_view what);
  void release_child(std::uint64_t context_id);
  void destroy_native_children(std::uint64_t context_id, bool context_usable);

  Result<CUevent> take_event(detail::ContextSlot& context, bool timing);
  void return_event(detail::ContextSlot& context, CUevent event, bool timing);

  // A live child of the queue's context: the slot of `id` when it is live, in the queue's context, and
  // `epoch` is the queue's (which submit resolved against that context, so it stands for the context's).
  template <class Slot>
  Slot* child_of(detail::SlotTable<Slot>& table, const detail::QueueSlot& queue, std::uint32_t queue_epoch,
                 std::uint64_t id, std::uint32_t epoch);
  Status validate_command(const detail::QueueSlot& queue, std::uint32_t queue_epoch, const Command& command,
                          bool capturing);
  Status validate_launch(const detail::QueueSlot& queue, std::uint32_t queue_epoch, const Command& command);
  CUresult enqueue_command(detail::QueueSlot& queue, const Command& command);
  void prune_in_flight(detail::QueueSlot& queue);
  Observation observe(std::uint64_t event_id, detail::EventSlot& event);
  // On-demand completion: makes the queue's probe cover batch `sequence`, recording one at the stream's tail
  // when the current one does not. CUDA_SUCCESS, or the failing call's code.
  CUresult cover_with_probe(detail::ContextSlot& context, detail::QueueSlot& queue, std::uint64_t sequence);
  std::optional<TimingReceipt> timing_of(detail::ContextSlot& context, const detail::EventSlot& event);
  bool admit(detail::QueueSlot& queue, std::uint64_t admission_timeout_ns);

  std::shared_ptr<const Driver> driver_;
  DeviceOptions options_;
  CUdevice device_ = 0;
  std::string name_;
  DeviceInfo info_{};
  std::uint32_t next_epoch_ = 1;
  std::vector<std::byte> launch_parameters_;  // reused scratch for the packed parameter block

  detail::SlotTable<detail::ContextSlot> contexts_;
  detail::SlotTable<detail::BufferSlot> buffers_;
  detail::SlotTable<detail::ProgramSlot> programs_;
  detail::SlotTable<detail::QueueSlot> queues_;
  detail::SlotTable<detail::EventSlot> events_;
  detail::SlotTable<detail::ExecutableSlot> executables_;
};

static_assert(Backend<Device>);

// Host steady-clock nanoseconds: the CUDA backend's timeline for waits and receipts.
std::uint64_t host_now_ns();

}  // namespace quiesce::cuda

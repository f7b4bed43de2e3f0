// TinyBackend: a small, honest, synchronous Backend for the validator's tests, with switchable flaws.
//
// Events stay Pending until the test completes them (complete_all, a wait, or a synchronize), so every
// ordering the validator cares about can be staged by hand. Host-side data is real: uploads, copies and
// zero fills apply to the buffers' bytes when the event completes. A Flaw breaks exactly one provider rule,
// so each provider rule has a backend that the validator must catch. Hooks (reject_next_submit,
// indeterminate_next_submit, lose_context) produce the legal-but-rare outcomes a runtime must handle.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "quiesce/core/backend.h"

namespace quiesce::testing {

enum class Flaw : std::uint8_t {
  None,
  PollContradictsTerminal,     // after Complete was reported, later polls say Pending
  RejectedReleaseOtherHandle,  // a rejected free_buffer returns a different handle
  ReadLeavesTail,              // a successful read leaves the last 16 sink bytes unwritten
  CancelWinsButCompletes,      // cancel answers OK, the event ends Complete
  CancelBusyButCancels,        // cancel answers Busy, the event ends Cancelled
  RejectedSubmitWithEvent,     // a rejected submit still reports one enqueued command
  IndeterminateWithoutEvent,   // an indeterminate submit returns no event
  SubmittedShortCount,         // a submitted batch reports one command fewer than it has
  TimingWhilePending,          // a Pending poll carries a timing receipt
  TimingUnrequested,           // terminals carry timing even when the submit did not ask
  WaitReturnsPending,          // a wait answers a receipt whose state is Pending
  CancelledWithoutCancel,      // events end Cancelled although nobody cancelled them
  CreatedHandleReused,         // the second buffer gets the id of the first, still live
};

class TinyBackend {
 public:
  TinyBackend() = default;
  explicit TinyBackend(Flaw flaw) : flaw_(flaw) {}

  // ---- test hooks ----
  void reject_next_submit() { reject_next_ = true; }
  void indeterminate_next_submit() { indeterminate_next_ = true; }
  void reject_next_free() { reject_next_free_ = true; }
  void lose_context(const Context& context) { contexts_[context.id()].lost = true; }
  void complete_all() {
    for (auto& [id, event] : events_) complete(event);
  }
  std::uint64_t submits_seen() const { return submits_seen_; }

  // ---- the Backend concept ----
  Result<DeviceInfo> device_info() {
    DeviceInfo info;
    info.name = "tiny";
    info.capabilities = Capability::EventCancellation | Capability::ReusableExecutables | Capability::Profiling;
    info.limits.memory_bytes = 1U << 20;
    return info;
  }
  std::string describe_error(const Error& error) const { return quiesce::describe_error(error); }

  Result<Context> create_context(ContextDesc desc) {
    if (desc.flags != 0) return make_error(ErrorKind::Unsupported, "context flags are unsupported");
    const std::uint64_t id = next_id_++;
    const std::uint32_t epoch = next_epoch_++;
    contexts_[id] = ContextState{epoch, false};
    return Context(id, epoch);
  }
  ReleaseResult<Context> destroy_context(Context&& context) {
    for (const auto& [id, buffer] : buffers_) {
      if (buffer.context == context.id()) {
        return ReleaseResult<Context>::rejected(std::move(context), make_error(ErrorKind::Busy, "live children"));
      }
    }
    for (const auto& [id, queue] : queues_) {
      if (queue == context.id()) {
        return ReleaseResult<Context>::rejected(std::move(context), make_error(ErrorKind::Busy, "live children"));
      }
    }
    contexts_.erase(context.id());
    return ReleaseResult<Context>::released();
  }
  Status discard_context(Context&& context) {
    const std::uint64_t id = context.id();
    std::erase_if(buffers_, [id](const auto& entry) { return entry.second.context == id; });
    std::erase_if(events_, [id](const auto& entry) { return entry.second.context == id; });
    std::erase_if(queues_, [id](const auto& entry) { return entry.second == id; });
    contexts_.erase(id);
    return ok_status();
  }

  Result<Buffer> allocate_buffer(const Context& context, const AllocationPermit& permit) {
    if (lost(context.id())) return lost_error();
    std::uint64_t id = next_id_++;
    if (flaw_ == Flaw::CreatedHandleReused && !buffers_.empty()) id = buffers_.begin()->first;
    buffers_[id] = BufferState{context.id(), permit.desc().usage, std::vector<std::byte>(permit.desc().bytes),
                               permit.desc().mode == AllocationMode::StreamOrdered ? permit.desc().queue.id : 0};
    return Buffer(id, context.epoch());
  }
  Result<BufferInfo> buffer_info(const Buffer& buffer) {
    const BufferState& state = buffers_.at(buffer.id());
    return BufferInfo{state.bytes.size(), state.bytes.size(), 256, state.usage, AllocationMode::Direct};
  }
  Status write_buffer(Buffer& buffer, std::uint64_t offset, ByteSource source) {
    BufferState& state = buffers_.at(buffer.id());
    if (lost(state.context)) return lost_error();
    for (const auto& segment : source.segments) {
      std::memcpy(state.bytes.data() + offset, segment.data(), segment.size());
      offset += segment.size();
    }
    return ok_status();
  }
  Status read_buffer(const Buffer& buffer, std::uint64_t offset, ByteSink sink) {
    const BufferState& state = buffers_.at(buffer.id());
    if (lost(state.context)) return lost_error();
    std::uint64_t remaining = sink.size();
    if (flaw_ == Flaw::ReadLeavesTail) remaining = remaining > 16 ? remaining - 16 : 0;
    for (const auto& segment : sink.segments) {
      const std::uint64_t bytes = segment.size() < remaining ? segment.size() : remaining;
      std::memcpy(segment.data(), state.bytes.data() + offset, bytes);
      offset += bytes;
      remaining -= bytes;
    }
    return ok_status();
  }
  ReleaseResult<Buffer> free_buffer(Buffer&& buffer) {
    if (reject_next_free_) {
      reject_next_free_ = false;
      const Error busy = make_error(ErrorKind::Busy, "the free was rejected", true);
      if (flaw_ == Flaw::RejectedReleaseOtherHandle) return ReleaseResult<Buffer>::rejected(Buffer(buffer.id() + 1000, 1), busy);
      return ReleaseResult<Buffer>::rejected(std::move(buffer), busy);
    }
    const std::uint64_t context = buffers_.at(buffer.id()).context;
    if (lost(context)) return ReleaseResult<Buffer>::indeterminate(lost_error());
    // A stream-ordered free is ordered behind its queue's work: that work finishes first.
    const std::uint64_t ordering_queue = buffers_.at(buffer.id()).ordering_queue;
    for (auto& [id, event] : events_) {
      if (ordering_queue != 0 && event.queue == ordering_queue) complete(event);
    }
    buffers_.erase(buffer.id());
    return ReleaseResult<Buffer>::released();
  }

  Result<Program> load_program(const Context& context, const ArtifactRef& artifact) {
    (void)artifact;
    if (lost(context.id())) return lost_error();
    return Program(next_id_++, context.epoch());
  }
  ReleaseResult<Program> unload_program(Program&& program) {
    (void)program;
    return ReleaseResult<Program>::released();
  }

  Result<Queue> create_queue(const Context& context, QueueDesc desc) {
    if (desc.flags != 0) return make_error(ErrorKind::Unsupported, "queue flags are unsupported");
    if (lost(context.id())) return lost_error();
    const std::uint64_t id = next_id_++;
    queues_[id] = context.id();
    return Queue(id, context.epoch());
  }
  ReleaseResult<Queue> destroy_queue(Queue&& queue) {
    queues_.erase(queue.id());
    return ReleaseResult<Queue>::released();
  }
  QueueState queue_state(const Queue& queue) {
    QueueState state;
    state.lost = lost(queues_.at(queue.id()));
    state.capturing = capturing_.contains(queue.id());
    return state;
  }
  SubmitResult submit(const Queue& queue, Batch batch, SubmitOptions options) {
    const std::uint64_t context = queues_.at(queue.id());
    if (lost(context)) return SubmitResult::rejected(lost_error());
    if (reject_next_) {
      reject_next_ = false;
      SubmitResult result = SubmitResult::rejected(make_error(ErrorKind::Timeout, "the queue is full", true));
      if (flaw_ == Flaw::RejectedSubmitWithEvent) result.commands_enqueued = 1;
      return result;
    }
    ++submits_seen_;
    const std::uint64_t id = next_id_++;
    EventRecord event{context, queue.id(), EventState::Pending, options.timing, {}};
    for (const Command& command : batch) event.commands.push_back(Owned::of(command));
    events_[id] = std::move(event);
    const auto count = static_cast<std::uint32_t>(batch.size());
    Event handle(id, contexts_.at(context).epoch);
    if (indeterminate_next_) {
      indeterminate_next_ = false;
      if (flaw_ == Flaw::IndeterminateWithoutEvent) return SubmitResult{SubmitStatus::Indeterminate, Event{}, {}, 0};
      return SubmitResult::indeterminate(std::move(handle), make_error(ErrorKind::Timeout, "admission unknown"), count);
    }
    return SubmitResult::submitted(std::move(handle), flaw_ == Flaw::SubmittedShortCount ? count - 1 : count);
  }
  Status synchronize(const Queue& queue, std::uint64_t timeout_ns) {
    (void)timeout_ns;
    for (auto& [id, event] : events_) {
      if (event.queue == queue.id()) complete(event);
    }
    return ok_status();
  }

  Observation poll_event(const Event& event) {
    EventRecord& state = events_.at(event.id());
    if (lost(state.context)) return Observation{EventState::Indeterminate, lost_error(), std::nullopt};
    Observation observation{state.state, {}, std::nullopt};
    if (flaw_ == Flaw::PollContradictsTerminal && state.state == EventState::Complete && state.reported_terminal) {
      observation.state = EventState::Pending;
    }
    if (is_terminal(state.state)) state.reported_terminal = true;
    if (flaw_ == Flaw::TimingWhilePending && state.state == EventState::Pending) observation.timing = TimingReceipt{1, 2, 3};
    if (is_terminal(observation.state) && (state.timing || flaw_ == Flaw::TimingUnrequested)) {
      observation.timing = TimingReceipt{1, 2, 3};
    }
    return observation;
  }
  WaitResult wait_event(const Event& event, std::uint64_t timeout_ns) {
    (void)timeout_ns;
    EventRecord& state = events_.at(event.id());
    if (lost(state.context)) return FenceIndeterminate{lost_error()};
    if (flaw_ == Flaw::WaitReturnsPending) return Receipt{EventState::Pending, {}, std::nullopt};
    complete(state);
    state.reported_terminal = true;
    return Receipt{state.state, {}, state.timing ? std::optional(TimingReceipt{1, 2, 3}) : std::nullopt};
  }
  Status cancel_event(const Event& event) {
    EventRecord& state = events_.at(event.id());
    if (flaw_ == Flaw::CancelBusyButCancels) {
      state.state = EventState::Cancelled;
      return make_error(ErrorKind::Busy, "completion won");
    }
    if (state.state != EventState::Pending) return make_error(ErrorKind::Busy, "completion won");
    state.state = flaw_ == Flaw::CancelWinsButCompletes ? EventState::Complete : EventState::Cancelled;
    return ok_status();
  }
  ReleaseResult<Event> destroy_event(Event&& event) {
    const EventRecord& state = events_.at(event.id());
    if (state.state == EventState::Pending) {
      return ReleaseResult<Event>::rejected(std::move(event), make_error(ErrorKind::Busy, "the event is pending"));
    }
    events_.erase(event.id());
    return ReleaseResult<Event>::released();
  }

  Status begin_capture(const Queue& queue) {
    capturing_[queue.id()] = {};
    return ok_status();
  }
  Status capture(const Queue& queue, Batch batch) {
    for (const Command& command : batch) capturing_.at(queue.id()).push_back(Owned::of(command));
    return ok_status();
  }
  Result<Executable> end_capture(const Queue& queue) {
    const std::uint64_t context = queues_.at(queue.id());
    capturing_.erase(queue.id());
    return Executable(next_id_++, contexts_.at(context).epoch);
  }
  ReleaseResult<Executable> destroy_executable(Executable&& executable) {
    (void)executable;
    return ReleaseResult<Executable>::released();
  }

  Result<MemoryUsage> memory_usage(const Context& context) {
    if (lost(context.id())) return lost_error();
    return MemoryUsage{};
  }
  Result<MemoryReport> memory_report(const Context& context) {
    (void)context;
    return MemoryReport{};
  }
  Status install_pools(const Context& context, const PoolLayout& layout) {
    (void)context;
    (void)layout;
    return ok_status();
  }
  Status memory_cleanup(const Context& context) {
    (void)context;
    return ok_status();
  }

 private:
  struct ContextState {
    std::uint32_t epoch = 0;
    bool lost = false;
  };
  struct BufferState {
    std::uint64_t context = 0;
    BufferUsage usage = BufferUsage::None;
    std::vector<std::byte> bytes;
    std::uint64_t ordering_queue = 0;  // the queue of a stream-ordered buffer
  };
  // A command with its upload bytes copied: the batch's spans are borrowed only during submit.
  struct Owned {
    Command command;
    std::vector<std::byte> data;
    static Owned of(const Command& command) {
      Owned owned{command, std::vector<std::byte>(command.data.begin(), command.data.end())};
      owned.command.bindings = {};
      owned.command.data = {};
      return owned;
    }
  };
  struct EventRecord {
    std::uint64_t context = 0;
    std::uint64_t queue = 0;
    EventState state = EventState::Pending;
    bool timing = false;
    std::vector<Owned> commands;
    bool reported_terminal = false;
  };

  bool lost(std::uint64_t context) const {
    const auto found = contexts_.find(context);
    return found != contexts_.end() && found->second.lost;
  }
  static Error lost_error() {
    Error error = make_error(ErrorKind::DeviceLost, "the context is lost");
    error.native_code = 700;
    return error;
  }
  void apply(const Owned& owned) {
    const Command& command = owned.command;
    switch (command.kind) {
      case CommandKind::Upload:
        std::memcpy(buffers_.at(command.target.id).bytes.data() + command.target_offset, owned.data.data(),
                    owned.data.size());
        break;
      case CommandKind::Zero:
        std::memset(buffers_.at(command.target.id).bytes.data() + command.target_offset, 0, command.bytes);
        break;
      case CommandKind::Copy:
        std::memcpy(buffers_.at(command.target.id).bytes.data() + command.target_offset,
                    buffers_.at(command.source.id).bytes.data() + command.source_offset, command.bytes);
        break;
      case CommandKind::Launch:
      case CommandKind::Replay:
      case CommandKind::Wait: break;
    }
  }
  void complete(EventRecord& event) {
    if (event.state != EventState::Pending) return;
    for (const Owned& owned : event.commands) apply(owned);
    event.state = flaw_ == Flaw::CancelledWithoutCancel ? EventState::Cancelled : EventState::Complete;
  }

  Flaw flaw_ = Flaw::None;
  std::uint64_t next_id_ = 1;
  std::uint32_t next_epoch_ = 1;
  bool reject_next_ = false;
  bool indeterminate_next_ = false;
  bool reject_next_free_ = false;
  std::uint64_t submits_seen_ = 0;
  std::map<std::uint64_t, ContextState> contexts_;
  std::map<std::uint64_t, BufferState> buffers_;
  std::map<std::uint64_t, std::uint64_t> queues_;  // queue id -> context id
  std::map<std::uint64_t, EventRecord> events_;
  std::map<std::uint64_t, std::vector<Owned>> capturing_;
};

static_assert(Backend<TinyBackend>);

}  // namespace quiesce::testing

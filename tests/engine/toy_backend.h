// A minimal in-memory Backend for the engine's unit tests, independent of the simulator.
//
// It is small but real: buffers hold bytes, commands run on them when their event completes, a "fill"
// kernel writes its parameter byte into its first binding, a "fault" kernel loses the context (sticky).
// Completion is driven by the test (complete_all, or wait_event, which finishes the queue up to the event),
// so every interleaving is chosen by the test. Faults are scripted by counters ("reject the next 2 frees").
// It also checks the caller's obligations and counts each breach in `violations`, so a test can assert that
// the engine never frees a pinned buffer, never destroys a pending event, never runs an invocation twice,
// and never calls a lost context except to discard it.
#pragma once

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "quiesce/core/backend.h"
#include "quiesce/core/env.h"

namespace quiesce::test {

struct ToyFaults {
  std::uint32_t reject_submits = 0;
  std::uint32_t indeterminate_submits = 0;
  std::uint32_t partial_submits = 0;       // indeterminate, and only the first command is enqueued
  std::uint32_t indeterminate_polls = 0;
  std::uint32_t fail_events = 0;           // the next submitted events end FailedButQuiescent
  std::uint32_t reject_frees = 0;
  std::uint32_t indeterminate_frees = 0;
  std::uint32_t reject_event_destroys = 0;
  std::uint32_t indeterminate_event_destroys = 0;
  std::uint32_t fail_captures = 0;
  std::uint32_t fail_allocations_after = UINT32_MAX;  // allocations that succeed before the rest fail
};

class ToyBackend {
 public:
  explicit ToyBackend(Capability capabilities = Capability::EventCancellation | Capability::ReusableExecutables |
                                                Capability::Profiling | Capability::StreamOrderedAllocation)
      : capabilities_(capabilities) {}

  ToyFaults faults;
  std::vector<std::string> violations;
  std::uint64_t executed_commands = 0;

  Result<DeviceInfo> device_info() {
    DeviceInfo info;
    info.name = "toy";
    info.capabilities = capabilities_;
    info.limits.memory_bytes = 1 << 20;
    info.limits.buffer_alignment = 1;
    info.limits.queue_depth_max = 64;
    info.limits.queues_max = 8;
    info.limits.batch_commands_max = 64;
    return info;
  }
  std::string describe_error(const Error& error) const { return quiesce::describe_error(error); }

  Result<Context> create_context(ContextDesc) {
    ++epoch_;
    const std::uint64_t id = ++next_id_;
    contexts_[id] = ContextState{epoch_, false};
    return Context(id, epoch_);
  }
  ReleaseResult<Context> destroy_context(Context&& context) {
    check_live_context(context.id(), "destroy_context");
    for (const auto& [id, buffer] : buffers_) {
      if (buffer.context == context.id()) violations.push_back("destroy_context with a live buffer");
    }
    contexts_.erase(context.id());
    return ReleaseResult<Context>::released();
  }
  Status discard_context(Context&& context) {
    const std::uint64_t id = context.id();
    std::erase_if(buffers_, [&](const auto& entry) { return entry.second.context == id; });
    std::erase_if(events_, [&](const auto& entry) { return entry.second.context == id; });
    std::erase_if(programs_, [&](const auto& entry) { return entry.second == id; });
    std::erase_if(queues_, [&](const auto& entry) { return entry.second == id; });
    std::erase_if(executables_, [&](const auto& entry) { return entry.second.context == id; });
    contexts_.erase(id);
    discards++;
    return ok_status();
  }

  Result<Buffer> allocate_buffer(const Context& context, const AllocationPermit& permit) {
    if (lost(context.id(), "allocate_buffer")) return lost_error();
    if (faults.fail_allocations_after == 0) return make_error(ErrorKind::OutOfMemory, "toy allocation failure");
    if (faults.fail_allocations_after != UINT32_MAX) faults.fail_allocations_after--;
    const std::uint64_t id = ++next_id_;
    buffers_[id] = BufferState{context.id(), permit.desc(), std::vector<std::byte>(permit.desc().bytes)};
    return Buffer(id, context.epoch());
  }
  Result<BufferInfo> buffer_info(const Buffer& buffer) {
    const BufferState& state = buffers_.at(buffer.id());
    return BufferInfo{state.desc.bytes, state.desc.bytes, 1, state.desc.usage, state.desc.mode};
  }
  Status write_buffer(Buffer& buffer, std::uint64_t offset, ByteSource source) {
    BufferState& state = buffers_.at(buffer.id());
    if (lost(state.context, "write_buffer")) return lost_error();
    for (const auto& segment : source.segments) {
      std::memcpy(state.bytes.data() + offset, segment.data(), segment.size());
      offset += segment.size();
    }
    return ok_status();
  }
  Status read_buffer(const Buffer& buffer, std::uint64_t offset, ByteSink sink) {
    const BufferState& state = buffers_.at(buffer.id());
    if (lost(state.context, "read_buffer")) return lost_error();
    for (const auto& segment : sink.segments) {
      std::memcpy(segment.data(), state.bytes.data() + offset, segment.size());
      offset += segment.size();
    }
    return ok_status();
  }
  ReleaseResult<Buffer> free_buffer(Buffer&& buffer) {
    if (!buffers_.contains(buffer.id())) {
      violations.push_back("free of an unknown buffer");
      return ReleaseResult<Buffer>::released();
    }
    if (lost(buffers_.at(buffer.id()).context, "free_buffer")) return ReleaseResult<Buffer>::indeterminate(lost_error());
    if (faults.reject_frees > 0) {
      faults.reject_frees--;
      return ReleaseResult<Buffer>::rejected(std::move(buffer), make_error(ErrorKind::Busy, "toy rejected free", true));
    }
    if (pinned_by_live_event(buffer.id())) violations.push_back("free of a buffer bound to a live event");
    if (faults.indeterminate_frees > 0) {
      faults.indeterminate_frees--;
      return ReleaseResult<Buffer>::indeterminate(make_error(ErrorKind::Internal, "toy indeterminate free"));
    }
    buffers_.erase(buffer.id());
    frees++;
    return ReleaseResult<Buffer>::released();
  }

  Result<Program> load_program(const Context& context, const ArtifactRef& artifact) {
    if (lost(context.id(), "load_program")) return lost_error();
    const std::uint64_t id = ++next_id_;
    programs_[id] = context.id();
    kernel_names_[id] = std::string(artifact.kernel_name);
    return Program(id, context.epoch());
  }
  ReleaseResult<Program> unload_program(Program&& program) {
    if (lost(programs_.at(program.id()), "unload_program")) return ReleaseResult<Program>::indeterminate(lost_error());
    programs_.erase(program.id());
    return ReleaseResult<Program>::released();
  }

  Result<Queue> create_queue(const Context& context, QueueDesc) {
    if (lost(context.id(), "create_queue")) return lost_error();
    const std::uint64_t id = ++next_id_;
    queues_[id] = context.id();
    return Queue(id, context.epoch());
  }
  ReleaseResult<Queue> destroy_queue(Queue&& queue) {
    if (lost(queues_.at(queue.id()), "destroy_queue")) return ReleaseResult<Queue>::indeterminate(lost_error());
    queues_.erase(queue.id());
    return ReleaseResult<Queue>::released();
  }
  QueueState queue_state(const Queue& queue) {
    return QueueState{0, capturing_.contains(queue.id()), contexts_.at(queues_.at(queue.id())).lost};
  }

  SubmitResult submit(const Queue& queue, Batch batch, SubmitOptions options) {
    const std::uint64_t context = queues_.at(queue.id());
    if (lost(context, "submit")) return SubmitResult::rejected(lost_error());
    if (capturing_.contains(queue.id())) violations.push_back("submit on a capturing queue");
    if (options.invocation == 0) violations.push_back("submit without an invocation id");
    for (const Command& command : batch) check_command(command);
    if (faults.reject_submits > 0) {
      faults.reject_submits--;
      rejected_invocations.insert(options.invocation);
      return SubmitResult::rejected(make_error(ErrorKind::Busy, "toy rejected submit", true));
    }
    std::size_t enqueued = batch.size();
    bool indeterminate = false;
    if (faults.partial_submits > 0) {
      faults.partial_submits--;
      enqueued = 1;
      indeterminate = true;
    } else if (faults.indeterminate_submits > 0) {
      faults.indeterminate_submits--;
      indeterminate = true;
    }
    const std::uint64_t id = ++next_id_;
    EventState_ state;
    state.context = context;
    state.queue = queue.id();
    state.invocation = options.invocation;
    state.timing = options.timing && has_capability(capabilities_, Capability::Profiling);
    for (std::size_t index = 0; index < enqueued; ++index) state.commands.push_back(copy_command(batch[index]));
    if (faults.fail_events > 0) {
      faults.fail_events--;
      state.fail = true;
    }
    events_[id] = std::move(state);
    order_[queue.id()].push_back(id);
    submitted_batches++;
    Event event(id, queue.epoch());
    if (indeterminate) {
      return SubmitResult::indeterminate(std::move(event), make_error(ErrorKind::Internal, "toy indeterminate submit"),
                                         static_cast<std::uint32_t>(enqueued));
    }
    return SubmitResult::submitted(std::move(event), static_cast<std::uint32_t>(enqueued));
  }
  Status synchronize(const Queue& queue, std::uint64_t) {
    for (const std::uint64_t event : order_[queue.id()]) complete(event);
    return ok_status();
  }

  Observation poll_event(const Event& event) {
    polls++;
    EventState_& state = events_.at(event.id());
    if (lost(state.context, "poll_event") && !state.done) {
      return Observation{EventState::Indeterminate, lost_error(), std::nullopt};
    }
    if (faults.indeterminate_polls > 0 && !state.done) {
      faults.indeterminate_polls--;
      return Observation{EventState::Indeterminate, make_error(ErrorKind::Internal, "toy poll failed"), std::nullopt};
    }
    if (!state.done) return Observation{EventState::Pending, {}, std::nullopt};
    return Observation{state.result, state.error, timing_of(state)};
  }
  WaitResult wait_event(const Event& event, std::uint64_t) {
    EventState_& state = events_.at(event.id());
    if (lost(state.context, "wait_event") && !state.done) return FenceIndeterminate{lost_error()};
    if (hold_waits) return FenceIndeterminate{make_error(ErrorKind::Timeout, "toy wait timed out")};
    complete(event.id());
    return Receipt{state.result, state.error, timing_of(state)};
  }
  Status cancel_event(const Event&) { return make_error(ErrorKind::Busy, "toy events are never cancelled"); }
  ReleaseResult<Event> destroy_event(Event&& event) {
    EventState_& state = events_.at(event.id());
    if (lost(state.context, "destroy_event")) return ReleaseResult<Event>::indeterminate(lost_error());
    if (!state.done) violations.push_back("destroy of a pending event");
    if (faults.reject_event_destroys > 0) {
      faults.reject_event_destroys--;
      return ReleaseResult<Event>::rejected(std::move(event), make_error(ErrorKind::Busy, "toy rejected destroy", true));
    }
    state.destroyed = true;
    if (faults.indeterminate_event_destroys > 0) {
      faults.indeterminate_event_destroys--;
      return ReleaseResult<Event>::indeterminate(make_error(ErrorKind::Internal, "toy indeterminate destroy"));
    }
    return ReleaseResult<Event>::released();
  }

  Status begin_capture(const Queue& queue) {
    if (lost(queues_.at(queue.id()), "begin_capture")) return lost_error();
    if (!capturing_.insert(queue.id()).second) violations.push_back("begin_capture twice");
    captured_[queue.id()].clear();
    capture_failed_ = false;
    return ok_status();
  }
  Status capture(const Queue& queue, Batch batch) {
    if (!capturing_.contains(queue.id())) violations.push_back("capture outside a window");
    if (faults.fail_captures > 0) {
      faults.fail_captures--;
      capture_failed_ = true;
      return make_error(ErrorKind::Internal, "toy capture failed");
    }
    for (const Command& command : batch) captured_[queue.id()].push_back(copy_command(command));
    return ok_status();
  }
  Result<Executable> end_capture(const Queue& queue) {
    if (capturing_.erase(queue.id()) == 0) violations.push_back("end_capture without begin");
    ends++;
    if (capture_failed_) return make_error(ErrorKind::Internal, "toy capture was invalidated");
    const std::uint64_t id = ++next_id_;
    executables_[id] = ExecutableState{queues_.at(queue.id()), captured_[queue.id()]};
    return Executable(id, queue.epoch());
  }
  ReleaseResult<Executable> destroy_executable(Executable&& executable) {
    for (const auto& [id, event] : events_) {
      if (event.destroyed || event.done) continue;
      for (const StoredCommand& command : event.commands) {
        if (command.command.executable.id == executable.id()) violations.push_back("destroy of a replaying executable");
      }
    }
    executables_.erase(executable.id());
    return ReleaseResult<Executable>::released();
  }

  Result<MemoryUsage> memory_usage(const Context&) {
    MemoryUsage usage;
    for (const auto& [id, buffer] : buffers_) usage.bytes_in_use += buffer.desc.bytes;
    usage.allocations = buffers_.size();
    return usage;
  }
  Result<MemoryReport> memory_report(const Context&) { return MemoryReport{}; }
  Status install_pools(const Context&, const PoolLayout&) {
    if (!buffers_.empty()) violations.push_back("install_pools with live buffers");
    pools_installed++;
    return ok_status();
  }
  Status memory_cleanup(const Context&) { return ok_status(); }

  // ---- test controls ----
  void complete_all() {
    for (auto& [id, event] : events_) complete(id);
  }
  void lose_device() {
    for (auto& [id, context] : contexts_) context.lost = true;
  }
  std::vector<std::byte> bytes_of(std::uint64_t buffer_id) const { return buffers_.at(buffer_id).bytes; }
  std::size_t live_buffers() const { return buffers_.size(); }
  std::size_t live_events() const {
    return static_cast<std::size_t>(std::count_if(events_.begin(), events_.end(),
                                                  [](const auto& entry) { return !entry.second.destroyed; }));
  }
  std::size_t pending_events() const {
    return static_cast<std::size_t>(
        std::count_if(events_.begin(), events_.end(), [](const auto& entry) { return !entry.second.done; }));
  }
  const std::vector<std::uint64_t>& execution_log() const { return executed_invocations_; }

  bool hold_waits = false;  // wait_event answers FenceIndeterminate(Timeout) without completing anything
  std::uint64_t polls = 0;
  std::uint64_t frees = 0;
  std::uint64_t discards = 0;
  std::uint64_t ends = 0;
  std::uint64_t submitted_batches = 0;
  std::uint64_t pools_installed = 0;
  std::set<std::uint64_t> rejected_invocations;

 private:
  struct ContextState {
    std::uint32_t epoch = 0;
    bool lost = false;
  };
  struct BufferState {
    std::uint64_t context = 0;
    BufferDesc desc;
    std::vector<std::byte> bytes;
  };
  struct StoredCommand {
    Command command;
    std::vector<Binding> bindings;
    std::vector<std::byte> data;
  };
  struct EventState_ {
    std::uint64_t context = 0;
    std::uint64_t queue = 0;
    std::uint64_t invocation = 0;
    std::vector<StoredCommand> commands;
    bool timing = false;
    bool fail = false;
    bool done = false;
    bool destroyed = false;
    EventState result = EventState::Pending;
    Error error = {};
    std::uint64_t finished_tick = 0;
  };
  struct ExecutableState {
    std::uint64_t context = 0;
    std::vector<StoredCommand> commands;
  };

  static Error lost_error() { return make_error(ErrorKind::DeviceLost, "toy device lost"); }

  bool lost(std::uint64_t context, const char* call) {
    auto found = contexts_.find(context);
    if (found == contexts_.end()) {
      violations.push_back(std::string(call) + " on a discarded context");
      return true;
    }
    if (found->second.lost) calls_after_loss++;
    return found->second.lost;
  }
  void check_live_context(std::uint64_t context, const char* call) {
    if (!contexts_.contains(context)) violations.push_back(std::string(call) + " on an unknown context");
  }

 public:
  std::uint64_t calls_after_loss = 0;

 private:
  bool pinned_by_live_event(std::uint64_t buffer) const {
    for (const auto& [id, event] : events_) {
      if (event.destroyed) continue;
      for (const StoredCommand& command : event.commands) {
        if (command.command.source.id == buffer || command.command.target.id == buffer) return true;
        for (const Binding& binding : command.bindings) {
          if (binding.buffer.id == buffer) return true;
        }
      }
    }
    return false;
  }

  void check_command(const Command& command) {
    auto check_buffer = [&](BufferRef ref) {
      if (ref.valid() && !buffers_.contains(ref.id)) violations.push_back("a command names a freed buffer");
    };
    check_buffer(command.source);
    check_buffer(command.target);
    for (const Binding& binding : command.bindings) {
      check_buffer(binding.buffer);
      if (buffers_.contains(binding.buffer.id) &&
          !access_allowed(binding.access, buffers_.at(binding.buffer.id).desc.usage)) {
        violations.push_back("a binding's access is not allowed by its usage");
      }
    }
    if (command.kind == CommandKind::Wait) {
      auto found = events_.find(command.event.id);
      if (found == events_.end() || found->second.destroyed) violations.push_back("a wait names a destroyed event");
    }
  }

  StoredCommand copy_command(const Command& command) {
    StoredCommand stored{command, {command.bindings.begin(), command.bindings.end()},
                         {command.data.begin(), command.data.end()}};
    stored.command.bindings = {};
    stored.command.data = {};
    return stored;
  }

  std::optional<TimingReceipt> timing_of(const EventState_& state) const {
    if (!state.timing || !state.done) return std::nullopt;
    return TimingReceipt{state.finished_tick * 100, state.finished_tick * 100 + 10, state.finished_tick * 100 + 60};
  }

  void complete(std::uint64_t event_id) {
    EventState_& state = events_.at(event_id);
    if (state.done) return;
    // In-order queues: everything earlier on the queue finishes first.
    for (const std::uint64_t earlier : order_[state.queue]) {
      if (earlier == event_id) break;
      complete(earlier);
    }
    state.done = true;
    state.finished_tick = ++tick_;
    if (state.fail) {
      state.result = EventState::FailedButQuiescent;
      state.error = make_error(ErrorKind::Internal, "toy kernel failed");
      return;
    }
    if (std::find(executed_invocations_.begin(), executed_invocations_.end(), state.invocation) !=
        executed_invocations_.end()) {
      violations.push_back("an invocation executed twice");
    }
    executed_invocations_.push_back(state.invocation);
    state.result = EventState::Complete;
    for (const StoredCommand& command : state.commands) {
      if (!run(command)) {
        state.result = EventState::FailedButQuiescent;
        state.error = lost_error();
        return;
      }
    }
  }

  bool run(const StoredCommand& stored) {
    const Command& command = stored.command;
    executed_commands++;
    switch (command.kind) {
      case CommandKind::Copy: {
        const auto source = buffers_.at(command.source.id).bytes;
        std::memcpy(buffers_.at(command.target.id).bytes.data() + command.target_offset,
                    source.data() + command.source_offset, command.bytes);
        return true;
      }
      case CommandKind::Upload:
        std::memcpy(buffers_.at(command.target.id).bytes.data() + command.target_offset, stored.data.data(),
                    stored.data.size());
        return true;
      case CommandKind::Zero:
        std::memset(buffers_.at(command.target.id).bytes.data() + command.target_offset, 0, command.bytes);
        return true;
      case CommandKind::Wait:
        complete(command.event.id);
        return true;
      case CommandKind::Replay:
        for (const StoredCommand& inner : executables_.at(command.executable.id).commands) {
          if (!run(inner)) return false;
        }
        return true;
      case CommandKind::Launch: {
        if (command.mode == LaunchMode::DryRun) return true;
        const std::string& name = kernel_names_.at(command.program.id);
        if (name == "fault") {
          lose_device();
          return false;
        }
        if (name == "fill" && !stored.bindings.empty() && !stored.data.empty()) {
          auto& bytes = buffers_.at(stored.bindings[0].buffer.id).bytes;
          std::memset(bytes.data(), static_cast<int>(stored.data[0]), bytes.size());
        }
        return true;
      }
    }
    return false;
  }

  Capability capabilities_;
  std::uint32_t epoch_ = 0;
  std::uint64_t next_id_ = 0;
  std::uint64_t tick_ = 0;
  bool capture_failed_ = false;
  std::map<std::uint64_t, ContextState> contexts_;
  std::map<std::uint64_t, BufferState> buffers_;
  std::map<std::uint64_t, std::uint64_t> programs_;
  std::map<std::uint64_t, std::string> kernel_names_;
  std::map<std::uint64_t, std::uint64_t> queues_;
  std::map<std::uint64_t, EventState_> events_;
  std::map<std::uint64_t, std::deque<std::uint64_t>> order_;
  std::map<std::uint64_t, ExecutableState> executables_;
  std::map<std::uint64_t, std::vector<StoredCommand>> captured_;
  std::set<std::uint64_t> capturing_;
  std::vector<std::uint64_t> executed_invocations_;
};

static_assert(Backend<ToyBackend>);

// A manual clock for the Env concept: time moves only when someone sleeps, so tests are deterministic.
class ManualEnv {
 public:
  using Mutex = RealEnv::Mutex;
  using CondVar = RealEnv::CondVar;
  using Thread = RealEnv::Thread;

  std::uint64_t now_ns() const { return now_ns_; }
  void sleep_until(std::uint64_t time_ns) {
    if (time_ns > now_ns_) now_ns_ = time_ns;
  }
  void yield() {}
  Thread spawn(std::function<void()> body) { return real_.spawn(std::move(body)); }
  void join(Thread& thread) { real_.join(thread); }

 private:
  std::uint64_t now_ns_ = 0;
  RealEnv real_;
};

static_assert(Env<ManualEnv>);

}  // namespace quiesce::test

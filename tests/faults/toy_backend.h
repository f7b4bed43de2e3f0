// ToyBackend: a small, honest in-memory Backend for the fault tests.
//
// It is not a simulator: work takes effect when its event completes, and an event completes after a fixed
// number of polls, at a wait, or at a synchronize of its queue, so a test controls exactly when the inner
// backend turns terminal. It keeps real bytes and real handle tables and refuses what the contract refuses
// (a context with live children, an unknown handle), so the tests can check that the Injector never leaks a
// handle in its inner backend and that data really moved (or did not). Capture is absent: Unsupported.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "quiesce/core/backend.h"

namespace quiesce::faults::testing {

class ToyBackend {
 public:
  std::uint32_t polls_to_complete = 2;  // the poll that turns an event terminal (1: the first poll)
  std::uint64_t capacity_bytes = 1U << 20U;

  // ---- what tests inspect ----
  std::size_t live_buffers() const { return buffers_.size(); }
  std::size_t live_events() const { return events_.size(); }
  std::size_t live_queues() const { return queues_.size(); }
  std::size_t live_programs() const { return programs_.size(); }
  std::size_t live_contexts() const { return contexts_.size(); }
  std::uint64_t submits() const { return submits_; }
  std::uint64_t commands_submitted() const { return commands_submitted_; }
  std::uint64_t inner_calls() const { return inner_calls_; }
  std::vector<std::byte> bytes(BufferRef buffer) const { return buffers_.at(buffer.id).data; }

  Result<DeviceInfo> device_info() {
    DeviceInfo info;
    info.name = "toy";
    info.capabilities = Capability::EventCancellation;
    info.limits.memory_bytes = capacity_bytes;
    info.limits.batch_commands_max = 64;
    return info;
  }
  std::string describe_error(const Error& error) const { return quiesce::describe_error(error); }

  Result<Context> create_context(ContextDesc desc) {
    ++inner_calls_;
    if (desc.flags != 0) return make_error(ErrorKind::Unsupported, "the toy backend has no context flags");
    const std::uint64_t id = next_id_++;
    contexts_[id] = 1;
    return Context(id, 1);
  }
  ReleaseResult<Context> destroy_context(Context&& context) {
    ++inner_calls_;
    if (contexts_.count(context.id()) == 0) return ReleaseResult<Context>::rejected(std::move(context), unknown());
    if (children(context.id()) > 0) {
      return ReleaseResult<Context>::rejected(std::move(context),
                                              make_error(ErrorKind::Busy, "the context still has children", true));
    }
    contexts_.erase(context.id());
    return ReleaseResult<Context>::released();
  }
  Status discard_context(Context&& context) {
    ++inner_calls_;
    const std::uint64_t id = context.id();
    std::erase_if(buffers_, [id](const auto& entry) { return entry.second.context == id; });
    std::erase_if(programs_, [id](const auto& entry) { return entry.second == id; });
    std::erase_if(events_, [this, id](const auto& entry) { return queues_[entry.second.queue] == id; });
    std::erase_if(queues_, [id](const auto& entry) { return entry.second == id; });
    contexts_.erase(id);
    return ok_status();
  }

  Result<Buffer> allocate_buffer(const Context& context, const AllocationPermit& permit) {
    ++inner_calls_;
    if (contexts_.count(context.id()) == 0) return unknown();
    if (used_bytes() + permit.desc().bytes > capacity_bytes) {
      return make_error(ErrorKind::OutOfMemory, "the toy backend is full", true);
    }
    const std::uint64_t id = next_id_++;
    buffers_[id] = BufferState{context.id(), permit.desc(), std::vector<std::byte>(permit.desc().bytes)};
    return Buffer(id, 1);
  }
  Result<BufferInfo> buffer_info(const Buffer& buffer) {
    ++inner_calls_;
    const auto found = buffers_.find(buffer.id());
    if (found == buffers_.end()) return unknown();
    const BufferDesc& desc = found->second.desc;
    return BufferInfo{desc.bytes, desc.bytes, 1, desc.usage, desc.mode};
  }
  Status write_buffer(Buffer& buffer, std::uint64_t offset, ByteSource source) {
    ++inner_calls_;
    const auto found = buffers_.find(buffer.id());
    if (found == buffers_.end()) return unknown();
    if (offset + source.size() > found->second.data.size()) return out_of_range();
    for (const auto& segment : source.segments) {
      std::memcpy(found->second.data.data() + offset, segment.data(), segment.size());
      offset += segment.size();
    }
    return ok_status();
  }
  Status read_buffer(const Buffer& buffer, std::uint64_t offset, ByteSink sink) {
    ++inner_calls_;
    const auto found = buffers_.find(buffer.id());
    if (found == buffers_.end()) return unknown();
    if (offset + sink.size() > found->second.data.size()) return out_of_range();
    for (const auto& segment : sink.segments) {
      std::memcpy(segment.data(), found->second.data.data() + offset, segment.size());
      offset += segment.size();
    }
    return ok_status();
  }
  ReleaseResult<Buffer> free_buffer(Buffer&& buffer) {
    ++inner_calls_;
    if (buffers_.erase(buffer.id()) == 0) return ReleaseResult<Buffer>::rejected(std::move(buffer), unknown());
    return ReleaseResult<Buffer>::released();
  }

  Result<Program> load_program(const Context& context, const ArtifactRef& /*artifact*/) {
    ++inner_calls_;
    if (contexts_.count(context.id()) == 0) return unknown();
    const std::uint64_t id = next_id_++;
    programs_[id] = context.id();
    return Program(id, 1);
  }
  ReleaseResult<Program> unload_program(Program&& program) {
    ++inner_calls_;
    if (programs_.erase(program.id()) == 0) return ReleaseResult<Program>::rejected(std::move(program), unknown());
    return ReleaseResult<Program>::released();
  }

  Result<Queue> create_queue(const Context& context, QueueDesc /*desc*/) {
    ++inner_calls_;
    if (contexts_.count(context.id()) == 0) return unknown();
    const std::uint64_t id = next_id_++;
    queues_[id] = context.id();
    return Queue(id, 1);
  }
  ReleaseResult<Queue> destroy_queue(Queue&& queue) {
    ++inner_calls_;
    for (const auto& [id, event] : events_) {
      if (event.queue == queue.id()) {
        return ReleaseResult<Queue>::rejected(std::move(queue),
                                              make_error(ErrorKind::Busy, "the queue still has events", true));
      }
    }
    if (queues_.erase(queue.id()) == 0) return ReleaseResult<Queue>::rejected(std::move(queue), unknown());
    return ReleaseResult<Queue>::released();
  }
  QueueState queue_state(const Queue& queue) {
    ++inner_calls_;
    QueueState state;
    for (const auto& [id, event] : events_) {
      if (event.queue == queue.id() && !is_terminal(event.state)) state.batches_in_flight++;
    }
    return state;
  }
  SubmitResult submit(const Queue& queue, Batch batch, SubmitOptions /*options*/) {
    ++inner_calls_;
    if (queues_.count(queue.id()) == 0) return SubmitResult::rejected(unknown());
    if (batch.empty()) return SubmitResult::rejected(make_error(ErrorKind::InvalidArgument, "an empty batch"));
    EventState_ event{queue.id(), EventState::Pending, 0, {}};
    for (const Command& command : batch) {
      PendingEffect effect{command.kind, command.target, command.source, command.target_offset,
                           command.source_offset, command.bytes, {command.data.begin(), command.data.end()}, {}};
      for (const Binding& binding : command.bindings) {
        if (access_writes(binding.access)) effect.written.push_back(binding.buffer);
      }
      event.effects.push_back(std::move(effect));
    }
    const std::uint64_t id = next_id_++;
    events_[id] = std::move(event);
    submits_++;
    commands_submitted_ += batch.size();
    return SubmitResult::submitted(Event(id, 1), static_cast<std::uint32_t>(batch.size()));
  }
  Status synchronize(const Queue& queue, std::uint64_t /*timeout_ns*/) {
    ++inner_calls_;
    for (auto& [id, event] : events_) {
      if (event.queue == queue.id()) complete(event);
    }
    return ok_status();
  }

  Observation poll_event(const Event& event) {
    ++inner_calls_;
    const auto found = events_.find(event.id());
    if (found == events_.end()) return Observation{EventState::Indeterminate, unknown(), std::nullopt};
    EventState_& state = found->second;
    if (!is_terminal(state.state) && ++state.polls >= polls_to_complete) complete(state);
    return Observation{state.state, {}, std::nullopt};
  }
  WaitResult wait_event(const Event& event, std::uint64_t /*timeout_ns*/) {
    ++inner_calls_;
    const auto found = events_.find(event.id());
    if (found == events_.end()) return FenceIndeterminate{unknown()};
    complete(found->second);
    return Receipt{found->second.state, {}, std::nullopt};
  }
  Status cancel_event(const Event& event) {
    ++inner_calls_;
    const auto found = events_.find(event.id());
    if (found == events_.end()) return unknown();
    if (found->second.state != EventState::Pending || found->second.polls > 0) {
      return make_error(ErrorKind::Busy, "the work already started: cancellation lost");
    }
    found->second.state = EventState::Cancelled;
    return ok_status();
  }
  ReleaseResult<Event> destroy_event(Event&& event) {
    ++inner_calls_;
    const auto found = events_.find(event.id());
    if (found == events_.end()) return ReleaseResult<Event>::rejected(std::move(event), unknown());
    if (!is_terminal(found->second.state)) {
      return ReleaseResult<Event>::rejected(std::move(event), make_error(ErrorKind::Busy, "the event is pending", true));
    }
    events_.erase(found);
    return ReleaseResult<Event>::released();
  }

  Status begin_capture(const Queue& /*queue*/) { return unsupported(); }
  Status capture(const Queue& /*queue*/, Batch /*batch*/) { return unsupported(); }
  Result<Executable> end_capture(const Queue& /*queue*/) { return unsupported(); }
  ReleaseResult<Executable> destroy_executable(Executable&& executable) {
    return ReleaseResult<Executable>::rejected(std::move(executable), unknown());
  }

  Result<MemoryUsage> memory_usage(const Context& /*context*/) {
    return MemoryUsage{used_bytes(), used_bytes(), buffers_.size(), used_bytes()};
  }
  Result<MemoryReport> memory_report(const Context& /*context*/) { return MemoryReport{}; }
  Status install_pools(const Context& /*context*/, const PoolLayout& /*layout*/) { return unsupported(); }
  Status memory_cleanup(const Context& /*context*/) { return ok_status(); }

 private:
  struct BufferState {
    std::uint64_t context = 0;
    BufferDesc desc;
    std::vector<std::byte> data;
  };
  struct PendingEffect {
    CommandKind kind;
    BufferRef target;
    BufferRef source;
    std::uint64_t target_offset;
    std::uint64_t source_offset;
    std::uint64_t bytes;
    std::vector<std::byte> data;
    std::vector<BufferRef> written;  // launch bindings that write: the toy kernel fills them with data[0]
  };
  struct EventState_ {
    std::uint64_t queue = 0;
    EventState state = EventState::Pending;
    std::uint32_t polls = 0;
    std::vector<PendingEffect> effects;
  };

  static Error unknown() { return make_error(ErrorKind::InvalidArgument, "the toy backend does not know this handle"); }
  static Error unsupported() { return make_error(ErrorKind::Unsupported, "the toy backend has no capture"); }
  static Error out_of_range() { return make_error(ErrorKind::InvalidArgument, "the range exceeds the buffer"); }

  std::uint64_t used_bytes() const {
    std::uint64_t total = 0;
    for (const auto& [id, buffer] : buffers_) total += buffer.data.size();
    return total;
  }
  std::size_t children(std::uint64_t context) const {
    std::size_t count = 0;
    for (const auto& [id, buffer] : buffers_) count += buffer.context == context ? 1 : 0;
    for (const auto& [id, owner] : programs_) count += owner == context ? 1 : 0;
    for (const auto& [id, owner] : queues_) count += owner == context ? 1 : 0;
    return count;
  }
  std::byte* target_bytes(BufferRef buffer, std::uint64_t offset, std::uint64_t bytes) {
    const auto found = buffers_.find(buffer.id);
    if (found == buffers_.end() || offset + bytes > found->second.data.size()) return nullptr;
    return found->second.data.data() + offset;
  }
  void complete(EventState_& event) {
    if (is_terminal(event.state)) return;
    for (const PendingEffect& effect : event.effects) apply(effect);
    event.state = EventState::Complete;
  }
  void apply(const PendingEffect& effect) {
    if (effect.kind == CommandKind::Launch) {
      const std::byte value = effect.data.empty() ? std::byte{0} : effect.data[0];
      for (const BufferRef& written : effect.written) {
        auto& data = buffers_.at(written.id).data;
        std::fill(data.begin(), data.end(), value);
      }
      return;
    }
    std::byte* target = target_bytes(effect.target, effect.target_offset, effect.bytes);
    if (target == nullptr) return;
    if (effect.kind == CommandKind::Upload) std::memcpy(target, effect.data.data(), effect.bytes);
    if (effect.kind == CommandKind::Zero) std::memset(target, 0, effect.bytes);
    if (effect.kind == CommandKind::Copy) {
      const std::byte* source = target_bytes(effect.source, effect.source_offset, effect.bytes);
      if (source != nullptr) std::memmove(target, source, effect.bytes);
    }
  }

  std::uint64_t next_id_ = 1;
  std::uint64_t submits_ = 0;
  std::uint64_t commands_submitted_ = 0;
  std::uint64_t inner_calls_ = 0;
  std::map<std::uint64_t, std::uint32_t> contexts_;
  std::map<std::uint64_t, BufferState> buffers_;
  std::map<std::uint64_t, std::uint64_t> programs_;
  std::map<std::uint64_t, std::uint64_t> queues_;
  std::map<std::uint64_t, EventState_> events_;
};

static_assert(Backend<ToyBackend>);

}  // namespace quiesce::faults::testing

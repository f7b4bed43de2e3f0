// ProviderMutant<B>: a Backend decorator that forwards everything to B, except for the one ProviderBug it was
// given, which breaks a provider-side invariant on purpose. With ProviderBug::None it is a pure forwarder.
// For mutation testing only: it shows that the Validator's provider rules can fail.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>

#include "quiesce/core/backend.h"
#include "quiesce/properties/mutants.h"

namespace quiesce::properties::mutants_detail {

template <Backend B>
class ProviderMutant {
 public:
  template <class... InnerArguments>
  explicit ProviderMutant(ProviderBug bug, InnerArguments&&... inner_arguments)
      : inner_(std::forward<InnerArguments>(inner_arguments)...), bug_(bug) {}
  ProviderMutant(const ProviderMutant&) = delete;
  ProviderMutant& operator=(const ProviderMutant&) = delete;

  B& inner() { return inner_; }

  Result<DeviceInfo> device_info() { return inner_.device_info(); }
  std::string describe_error(const Error& error) const { return inner_.describe_error(error); }
  Result<Context> create_context(ContextDesc desc) { return inner_.create_context(desc); }
  ReleaseResult<Context> destroy_context(Context&& context) { return inner_.destroy_context(std::move(context)); }
  Status discard_context(Context&& context) { return inner_.discard_context(std::move(context)); }
  Result<Buffer> allocate_buffer(const Context& context, const AllocationPermit& permit) {
    return inner_.allocate_buffer(context, permit);
  }
  Result<BufferInfo> buffer_info(const Buffer& buffer) { return inner_.buffer_info(buffer); }
  Status write_buffer(Buffer& buffer, std::uint64_t offset, ByteSource source) {
    return inner_.write_buffer(buffer, offset, source);
  }
  Status read_buffer(const Buffer& buffer, std::uint64_t offset, ByteSink sink) {
    return inner_.read_buffer(buffer, offset, sink);
  }
  ReleaseResult<Buffer> free_buffer(Buffer&& buffer) {
    ReleaseResult<Buffer> result = inner_.free_buffer(std::move(buffer));
    if (bug_ == ProviderBug::RejectedReleaseOther && result.status == ReleaseStatus::Rejected) {
      const BufferRef live = result.handle.ref();
      result.handle = Buffer(live.id + (1ULL << 40U), live.epoch);  // the bug: not the handle it was given
    }
    return result;
  }
  Result<Program> load_program(const Context& context, const ArtifactRef& artifact) {
    return inner_.load_program(context, artifact);
  }
  ReleaseResult<Program> unload_program(Program&& program) { return inner_.unload_program(std::move(program)); }
  Result<Queue> create_queue(const Context& context, QueueDesc desc) { return inner_.create_queue(context, desc); }
  ReleaseResult<Queue> destroy_queue(Queue&& queue) { return inner_.destroy_queue(std::move(queue)); }
  QueueState queue_state(const Queue& queue) { return inner_.queue_state(queue); }
  SubmitResult submit(const Queue& queue, Batch batch, SubmitOptions options) {
    SubmitResult result = inner_.submit(queue, batch, options);
    if (bug_ == ProviderBug::SuccessCountShort && result.status == SubmitStatus::Submitted && batch.size() > 1) {
      result.commands_enqueued = static_cast<std::uint32_t>(batch.size() - 1);  // the bug: a count that lies
    }
    return result;
  }
  Status synchronize(const Queue& queue, std::uint64_t timeout_ns) { return inner_.synchronize(queue, timeout_ns); }

  Observation poll_event(const Event& event) {
    Observation observation = inner_.poll_event(event);
    if (bug_ == ProviderBug::TerminalUnstable && is_terminal(observation.state)) {
      if (!terminal_seen_.insert(event.id()).second) return Observation{};  // the bug: Pending again
    }
    if (bug_ == ProviderBug::TimingWhilePending && observation.state == EventState::Pending) {
      observation.timing = TimingReceipt{1, 2, 3};  // the bug: a receipt for work that has not finished
    }
    return observation;
  }
  WaitResult wait_event(const Event& event, std::uint64_t timeout_ns) { return inner_.wait_event(event, timeout_ns); }
  Status cancel_event(const Event& event) {
    if (bug_ == ProviderBug::CancelWonButRan) return ok_status();  // the bug: "won" without cancelling
    return inner_.cancel_event(event);
  }
  ReleaseResult<Event> destroy_event(Event&& event) {
    ReleaseResult<Event> result = inner_.destroy_event(std::move(event));
    if (bug_ == ProviderBug::RejectedReleaseOther && result.status == ReleaseStatus::Rejected) {
      const EventRef live = result.handle.ref();
      result.handle = Event(live.id + (1ULL << 40U), live.epoch);  // the bug: not the handle it was given
    }
    return result;
  }

  Status begin_capture(const Queue& queue) { return inner_.begin_capture(queue); }
  Status capture(const Queue& queue, Batch batch) { return inner_.capture(queue, batch); }
  Result<Executable> end_capture(const Queue& queue) { return inner_.end_capture(queue); }
  ReleaseResult<Executable> destroy_executable(Executable&& executable) {
    return inner_.destroy_executable(std::move(executable));
  }

  Result<MemoryUsage> memory_usage(const Context& context) { return inner_.memory_usage(context); }
  Result<MemoryReport> memory_report(const Context& context) { return inner_.memory_report(context); }
  Status install_pools(const Context& context, const PoolLayout& layout) {
    return inner_.install_pools(context, layout);
  }
  Status memory_cleanup(const Context& context) { return inner_.memory_cleanup(context); }

 private:
  B inner_;
  ProviderBug bug_;
  std::set<std::uint64_t> terminal_seen_;  // TerminalUnstable only: events already reported terminal
};

}  // namespace quiesce::properties::mutants_detail

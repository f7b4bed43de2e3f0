// The engine mutants' two planting mechanisms (mutants.h, EngineBug), for the mutation campaign and for the
// engine model (tests/properties/engine_model_test.cc):
//   EngineFacing<B>      a layer between the engine and the stack below it, holding a reference to that
//                        stack: it misreports to the engine what the backend answered (the engine's view of
//                        its backend is part of the runtime under test, so the Validator below judges it);
//   MutantEngine<B, E>   quiesce::Engine<B, E> with some calls hidden (flush, sync, launch), for the engine
//                        workload's EngineT (run_engine_workload_on) or any caller that holds this type.
// With EngineBug::None both forward untouched, so the same types run the careful engine.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "quiesce/core/backend.h"
#include "quiesce/core/engine.h"
#include "quiesce/properties/mutants.h"

namespace quiesce::properties {

// EngineFacing<B>: the engine's view of its backend, for the engine bugs that are misreadings of what the
// backend answered. It sits between the engine and the Validator, so the Validator judges what the engine
// does with the misreading. With any other EngineBug it forwards untouched.
template <Backend B>
class EngineFacing {
 public:
  EngineFacing(EngineBug bug, B& inner) : inner_(inner), bug_(bug) {}
  EngineFacing(const EngineFacing&) = delete;
  EngineFacing& operator=(const EngineFacing&) = delete;

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
  ReleaseResult<Buffer> free_buffer(Buffer&& buffer) { return inner_.free_buffer(std::move(buffer)); }
  Result<Program> load_program(const Context& context, const ArtifactRef& artifact) {
    return inner_.load_program(context, artifact);
  }
  ReleaseResult<Program> unload_program(Program&& program) { return inner_.unload_program(std::move(program)); }
  Result<Queue> create_queue(const Context& context, QueueDesc desc) { return inner_.create_queue(context, desc); }
  ReleaseResult<Queue> destroy_queue(Queue&& queue) { return inner_.destroy_queue(std::move(queue)); }
  QueueState queue_state(const Queue& queue) { return inner_.queue_state(queue); }
  SubmitResult submit(const Queue& queue, Batch batch, SubmitOptions options) {
    SubmitResult result = inner_.submit(queue, batch, options);
    if (bug_ == EngineBug::RetryIndeterminateSubmit && result.status == SubmitStatus::Indeterminate) {
      abandoned_.push_back(std::move(result.event));  // the bug: the outcome is read as Rejected
      return SubmitResult::rejected(result.error);
    }
    return result;
  }
  Status synchronize(const Queue& queue, std::uint64_t timeout_ns) { return inner_.synchronize(queue, timeout_ns); }
  Observation poll_event(const Event& event) {
    Observation observation = inner_.poll_event(event);
    if (bug_ == EngineBug::ReleaseBeforeFence && observation.state == EventState::Pending) {
      observation.state = EventState::Complete;  // the bug: a pending fence is read as complete
    }
    return observation;
  }
  WaitResult wait_event(const Event& event, std::uint64_t timeout_ns) { return inner_.wait_event(event, timeout_ns); }
  Status cancel_event(const Event& event) { return inner_.cancel_event(event); }
  ReleaseResult<Event> destroy_event(Event&& event) { return inner_.destroy_event(std::move(event)); }

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
  B& inner_;
  EngineBug bug_;
  std::vector<Event> abandoned_;  // RetryIndeterminateSubmit: events the engine was told never existed
};

// MutantEngine<B, E>: the reference engine with the engine bugs that are its own calls going wrong. The
// engine workload calls it through this type, so the calls it hides replace the engine's.
template <Backend B, Env E>
class MutantEngine : public Engine<B, E> {
 public:
  MutantEngine(B& backend, E& env, EngineOptions options, EngineBug bug)
      : Engine<B, E>(backend, env, options), bug_(bug) {}

  FlushResult flush() { return mutate(Engine<B, E>::flush()); }
  FlushResult sync(std::uint64_t timeout_ns) { return mutate(Engine<B, E>::sync(timeout_ns)); }
  Result<SubmissionId> launch(QueueIndex queue, ProgramId program, LaunchDims dims,
                              std::span<const EngineBinding> bindings, std::span<const std::byte> parameters,
                              LaunchMode mode = LaunchMode::Normal) {
    if (bug_ == EngineBug::DryRunWrites) mode = LaunchMode::Normal;  // the bug: the dry run runs
    return Engine<B, E>::launch(queue, program, dims, bindings, parameters, mode);
  }

 private:
  FlushResult mutate(FlushResult result) {
    if (bug_ == EngineBug::LoseDeferredError) result.failures.clear();  // the bug: surfaced to nobody
    if (bug_ == EngineBug::DeferredErrorTwice) {
      std::vector<AsyncFailure> fresh = result.failures;
      result.failures.insert(result.failures.end(), previous_.begin(), previous_.end());  // the bug: again
      previous_ = std::move(fresh);
    }
    return result;
  }

  EngineBug bug_;
  std::vector<AsyncFailure> previous_;  // DeferredErrorTwice: what the last flush or sync returned
};

}  // namespace quiesce::properties

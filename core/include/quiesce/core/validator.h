// quiesce::Validator<B>: the contract checker, a decorator that is itself a Backend (like a graphics
// validation layer).
//
// It shadows every handle that passes through it and checks, on every call, the caller's obligations (no
// release of a handle a live event or executable still references, parents outlive children, no use of a
// consumed or stale handle, events destroyed only after an observed terminal, no resubmission of
// indeterminate work, access modes allowed by buffer usage, capture windows balanced and free of syncs, no
// use of a lost context) and the provider's (stable terminals, a rejected release returns the same live
// handle, a successful read initialises every sink byte, legal event transitions, cancellation decided once,
// submit outcomes shaped as the contract says, timing only on terminals). docs/validator.md lists every
// rule with its id. The checking state machine is ContractChecker (validator/checker.h); this template only
// forwards. A release it forwards always consumes the caller's handle (the caller's variable is empty
// afterwards, whatever the inner backend does with its rvalue), so a consumed handle cannot be reused by
// accident. Not thread-safe: call it from one thread, or from fibers of one scheduler.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "quiesce/core/backend.h"
#include "quiesce/core/validator/checker.h"
#include "quiesce/core/validator/violation.h"

namespace quiesce {

template <Backend B>
class Validator {
 public:
  using Inner = B;

  // Constructs the wrapped backend in place from `inner_arguments`.
  template <class... InnerArguments>
  explicit Validator(ValidatorOptions options, InnerArguments&&... inner_arguments)
      : inner_(std::forward<InnerArguments>(inner_arguments)...), checker_(options) {}
  Validator()
    requires std::default_initializable<B>
      : Validator(ValidatorOptions{}) {}

  Validator(const Validator&) = delete;
  Validator& operator=(const Validator&) = delete;

  B& inner() { return inner_; }
  const B& inner() const { return inner_; }

  // ---- reports ----
  const std::vector<Violation>& violations() const { return checker_.violations(); }
  std::uint64_t violation_count() const { return checker_.violation_count(); }
  std::uint64_t calls() const { return checker_.calls(); }
  // End-of-run checks (leaks, open capture windows), recorded once; returns violation_count().
  std::uint64_t finish() { return checker_.finish(); }
  // What finish() would add now, without recording it.
  std::vector<Violation> end_of_run() const { return checker_.end_of_run(); }
  std::string describe(const Violation& violation) const { return describe_violation(violation); }
  const ContractChecker& checker() const { return checker_; }

  // ---- identity ----
  Result<DeviceInfo> device_info() {
    checker_.note_call(Call::DeviceInfo);
    return inner_.device_info();
  }
  std::string describe_error(const Error& error) const {
    const std::int32_t rule_number = error.native_code - kRefusalCodeBase;
    if (error.domain == NativeDomain::Core && rule_number >= 0 &&
        rule_number < static_cast<std::int32_t>(kRuleCount)) {
      const RuleInfo& info = rule_info(static_cast<Rule>(rule_number));
      return quiesce::describe_error(error) + " (the validator refused the call: " + std::string(info.summary) + ")";
    }
    return inner_.describe_error(error);
  }

  // ---- contexts ----
  Result<Context> create_context(ContextDesc desc) {
    checker_.note_call(Call::CreateContext);
    Result<Context> result = inner_.create_context(desc);
    checker_.after_create_context(result);
    return result;
  }
  ReleaseResult<Context> destroy_context(Context&& context) {
    const ContextRef ref = context.ref();
    if (!checker_.before_destroy_context(ref)) {
      return ReleaseResult<Context>::rejected(std::move(context), checker_.refusal());
    }
    ReleaseResult<Context> result = inner_.destroy_context(Context(std::move(context)));
    checker_.after_destroy_context(ref, ReleaseAnswer::of(result));
    return result;
  }
  Status discard_context(Context&& context) {
    const ContextRef ref = context.ref();
    if (!checker_.before_discard_context(ref)) return checker_.refusal();
    Status status = inner_.discard_context(Context(std::move(context)));
    checker_.after_discard_context(ref, status);
    return status;
  }

  // ---- buffers ----
  Result<Buffer> allocate_buffer(const Context& context, const AllocationPermit& permit) {
    if (!checker_.before_allocate_buffer(context.ref(), permit.desc())) return checker_.refusal();
    Result<Buffer> result = inner_.allocate_buffer(context, permit);
    checker_.after_allocate_buffer(context.ref(), permit.desc(), result);
    return result;
  }
  Result<BufferInfo> buffer_info(const Buffer& buffer) {
    if (!checker_.before_buffer_info(buffer.ref())) return checker_.refusal();
    Result<BufferInfo> result = inner_.buffer_info(buffer);
    checker_.after_buffer_call(buffer.ref(), result.ok() ? nullptr : &result.error());
    return result;
  }
  Status write_buffer(Buffer& buffer, std::uint64_t offset, ByteSource source) {
    const BufferRef ref = buffer.ref();
    if (!checker_.before_write_buffer(ref, offset, source.size())) return checker_.refusal();
    Status status = inner_.write_buffer(buffer, offset, source);
    checker_.after_buffer_call(ref, status.ok() ? nullptr : &status.error());
    return status;
  }
  Status read_buffer(const Buffer& buffer, std::uint64_t offset, ByteSink sink) {
    if (!checker_.before_read_buffer(buffer.ref(), offset, sink.size())) return checker_.refusal();
    if (checker_.options().check_read_initialised) checker_.poison_read_sink(sink);
    Status status = inner_.read_buffer(buffer, offset, sink);
    checker_.after_read_buffer(buffer.ref(), status, sink);
    return status;
  }
  ReleaseResult<Buffer> free_buffer(Buffer&& buffer) {
    const BufferRef ref = buffer.ref();
    if (!checker_.before_free_buffer(ref)) return ReleaseResult<Buffer>::rejected(std::move(buffer), checker_.refusal());
    ReleaseResult<Buffer> result = inner_.free_buffer(Buffer(std::move(buffer)));
    checker_.after_free_buffer(ref, ReleaseAnswer::of(result));
    return result;
  }

  // ---- programs ----
  Result<Program> load_program(const Context& context, const ArtifactRef& artifact) {
    if (!checker_.before_load_program(context.ref())) return checker_.refusal();
    Result<Program> result = inner_.load_program(context, artifact);
    checker_.after_load_program(context.ref(), result);
    return result;
  }
  ReleaseResult<Program> unload_program(Program&& program) {
    const ProgramRef ref = program.ref();
    if (!checker_.before_unload_program(ref)) {
      return ReleaseResult<Program>::rejected(std::move(program), checker_.refusal());
    }
    ReleaseResult<Program> result = inner_.unload_program(Program(std::move(program)));
    checker_.after_unload_program(ref, ReleaseAnswer::of(result));
    return result;
  }

  // ---- queues and submission ----
  Result<Queue> create_queue(const Context& context, QueueDesc desc) {
    if (!checker_.before_create_queue(context.ref())) return checker_.refusal();
    Result<Queue> result = inner_.create_queue(context, desc);
    checker_.after_create_queue(context.ref(), result);
    return result;
  }
  ReleaseResult<Queue> destroy_queue(Queue&& queue) {
    const QueueRef ref = queue.ref();
    if (!checker_.before_destroy_queue(ref)) return ReleaseResult<Queue>::rejected(std::move(queue), checker_.refusal());
    ReleaseResult<Queue> result = inner_.destroy_queue(Queue(std::move(queue)));
    checker_.after_destroy_queue(ref, ReleaseAnswer::of(result));
    return result;
  }
  QueueState queue_state(const Queue& queue) {
    // A refused query still answers: the state of a queue the validator cannot vouch for is "lost".
    if (!checker_.before_queue_state(queue.ref())) return QueueState{0, false, true};
    const QueueState state = inner_.queue_state(queue);
    checker_.after_queue_state(queue.ref(), state);
    return state;
  }
  SubmitResult submit(const Queue& queue, Batch batch, SubmitOptions options) {
    if (!checker_.before_submit(queue.ref(), batch, options)) return SubmitResult::rejected(checker_.refusal());
    SubmitResult result = inner_.submit(queue, batch, options);
    checker_.after_submit(queue.ref(), batch, options, result);
    return result;
  }
  Status synchronize(const Queue& queue, std::uint64_t timeout_ns) {
    if (!checker_.before_synchronize(queue.ref())) return checker_.refusal();
    Status status = inner_.synchronize(queue, timeout_ns);
    checker_.after_synchronize(queue.ref(), status);
    return status;
  }

  // ---- events ----
  Observation poll_event(const Event& event) {
    if (!checker_.before_poll_event(event.ref())) return Observation{EventState::Indeterminate, checker_.refusal()};
    Observation observation = inner_.poll_event(event);
    checker_.after_poll_event(event.ref(), observation);
    return observation;
  }
  WaitResult wait_event(const Event& event, std::uint64_t timeout_ns) {
    if (!checker_.before_wait_event(event.ref())) return FenceIndeterminate{checker_.refusal()};
    WaitResult result = inner_.wait_event(event, timeout_ns);
    checker_.after_wait_event(event.ref(), result);
    return result;
  }
  Status cancel_event(const Event& event) {
    if (!checker_.before_cancel_event(event.ref())) return checker_.refusal();
    Status status = inner_.cancel_event(event);
    checker_.after_cancel_event(event.ref(), status);
    return status;
  }
  ReleaseResult<Event> destroy_event(Event&& event) {
    const EventRef ref = event.ref();
    if (!checker_.before_destroy_event(ref)) return ReleaseResult<Event>::rejected(std::move(event), checker_.refusal());
    ReleaseResult<Event> result = inner_.destroy_event(Event(std::move(event)));
    checker_.after_destroy_event(ref, ReleaseAnswer::of(result));
    return result;
  }

  // ---- capture windows and executables ----
  Status begin_capture(const Queue& queue) {
    if (!checker_.before_begin_capture(queue.ref())) return checker_.refusal();
    Status status = inner_.begin_capture(queue);
    checker_.after_begin_capture(queue.ref(), status);
    return status;
  }
  Status capture(const Queue& queue, Batch batch) {
    if (!checker_.before_capture(queue.ref(), batch)) return checker_.refusal();
    Status status = inner_.capture(queue, batch);
    checker_.after_capture(queue.ref(), batch, status);
    return status;
  }
  Result<Executable> end_capture(const Queue& queue) {
    if (!checker_.before_end_capture(queue.ref())) return checker_.refusal();
    Result<Executable> result = inner_.end_capture(queue);
    checker_.after_end_capture(queue.ref(), result);
    return result;
  }
  ReleaseResult<Executable> destroy_executable(Executable&& executable) {
    const ExecutableRef ref = executable.ref();
    if (!checker_.before_destroy_executable(ref)) {
      return ReleaseResult<Executable>::rejected(std::move(executable), checker_.refusal());
    }
    ReleaseResult<Executable> result = inner_.destroy_executable(Executable(std::move(executable)));
    checker_.after_destroy_executable(ref, ReleaseAnswer::of(result));
    return result;
  }

  // ---- memory ----
  Result<MemoryUsage> memory_usage(const Context& context) {
    if (!checker_.before_context_call(Call::GetMemoryUsage, context.ref())) return checker_.refusal();
    Result<MemoryUsage> result = inner_.memory_usage(context);
    checker_.after_context_call(context.ref(), result.ok() ? nullptr : &result.error());
    return result;
  }
  Result<MemoryReport> memory_report(const Context& context) {
    if (!checker_.before_context_call(Call::GetMemoryReport, context.ref())) return checker_.refusal();
    Result<MemoryReport> result = inner_.memory_report(context);
    checker_.after_context_call(context.ref(), result.ok() ? nullptr : &result.error());
    return result;
  }
  Status install_pools(const Context& context, const PoolLayout& layout) {
    if (!checker_.before_context_call(Call::InstallPools, context.ref())) return checker_.refusal();
    Status status = inner_.install_pools(context, layout);
    checker_.after_context_call(context.ref(), status.ok() ? nullptr : &status.error());
    return status;
  }
  Status memory_cleanup(const Context& context) {
    if (!checker_.before_context_call(Call::MemoryCleanup, context.ref())) return checker_.refusal();
    Status status = inner_.memory_cleanup(context);
    checker_.after_context_call(context.ref(), status.ok() ? nullptr : &status.error());
    return status;
  }

 private:
  B inner_;
  ContractChecker checker_;
};

}  // namespace quiesce

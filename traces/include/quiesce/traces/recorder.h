// traces::Recorder<B>: a decorator that is itself a Backend and records every call with its result.
//
// It sits at the top of the stack (Recorder<Validator<Injector<Device>>>) and writes one call record per
// backend call into a TraceSink, after the call returns, with the handle ids it passed and got back. The
// records that are not calls come from the layers below through RecorderHooks (or the record_* functions):
// before each call the hooks give virtual time (a clock record when it moved), after each call they append
// the faults injected into it, oracle findings and validator violations. describe_error is a pure function
// of its argument and is not recorded. Not thread-safe, like the layers it wraps.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>

#include "quiesce/core/backend.h"
#include "quiesce/core/digest.h"
#include "quiesce/traces/codec.h"
#include "quiesce/traces/record.h"

namespace quiesce::traces {

class RecorderHooks {
 public:
  RecorderHooks() = default;
  RecorderHooks(const RecorderHooks&) = delete;
  RecorderHooks& operator=(const RecorderHooks&) = delete;
  virtual ~RecorderHooks() = default;
  // Virtual time now (ns). The recorder writes a clock record before a call whenever this moved.
  virtual std::uint64_t now_ns() = 0;
  // Called once the record of call `call_index` is in the sink: append what the call caused below.
  virtual void after_call(std::uint64_t call_index) = 0;
};

namespace detail {
void record_commands(Batch batch, std::vector<CommandRecord>& commands);
std::uint64_t hash_segments(std::span<const std::span<const std::byte>> segments);
std::uint64_t hash_segments(std::span<const std::span<std::byte>> segments);
void copy_segments(std::span<const std::span<const std::byte>> segments, Payload& data);
void record_device_info(const DeviceInfo& info, CallRecord& call);
void record_memory_report(const MemoryReport& report, CallRecord& call);
}  // namespace detail

template <Backend B>
class Recorder {
 public:
  using Inner = B;

  // Constructs the wrapped backend in place from `inner_arguments`; records go to `sink`.
  template <class... InnerArguments>
  explicit Recorder(TraceSink& sink, InnerArguments&&... inner_arguments)
      : inner_(std::forward<InnerArguments>(inner_arguments)...), sink_(&sink) {}
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  B& inner() { return inner_; }
  const B& inner() const { return inner_; }
  void set_hooks(RecorderHooks* hooks) { hooks_ = hooks; }
  std::uint64_t calls() const { return calls_; }

  // ---- records that are not calls ----
  // A fault injected into recorded call `call_index`; `injector_call` and `site_ordinal` are the injector's
  // own numbering, which a replay hands back to it.
  void record_fault(std::uint64_t call_index, std::string_view fault, std::string_view site, std::uint64_t parameter,
                    std::uint64_t injector_call, std::uint64_t site_ordinal) {
    append_note(RecordKind::Fault, call_index, fault, parameter, injector_call, site, site_ordinal);
  }
  void record_schedule(std::string_view strategy, std::uint64_t thread, std::uint64_t runnable) {
    append_note(RecordKind::Schedule, calls_, strategy, thread, runnable, {});
  }
  void record_clock(std::uint64_t now_ns) {
    last_clock_ns_ = now_ns;
    append_note(RecordKind::Clock, calls_, {}, now_ns, 0, {});
  }
  void record_finding(std::uint64_t call_index, std::string_view kind, std::string_view text) {
    append_note(RecordKind::Finding, call_index, kind, 0, 0, text);
  }
  void record_violation(std::uint64_t call_index, std::string_view rule, std::string_view text) {
    append_note(RecordKind::Violation, call_index, rule, 0, 0, text);
  }

  // ---- identity ----
  Result<DeviceInfo> device_info() {
    CallRecord& call = begin(Op::DeviceInfo, 0);
    Result<DeviceInfo> result = inner_.device_info();
    note_plain(call, result);
    if (result.ok()) detail::record_device_info(result.value(), call);
    end();
    return result;
  }
  std::string describe_error(const Error& error) const { return inner_.describe_error(error); }

  // ---- contexts ----
  Result<Context> create_context(ContextDesc desc) {
    CallRecord& call = begin(Op::CreateContext, 0);
    call.flags = desc.flags;
    Result<Context> result = inner_.create_context(desc);
    note_created(call, result);
    end();
    return result;
  }
  ReleaseResult<Context> destroy_context(Context&& context) {
    CallRecord& call = begin(Op::DestroyContext, context.id());
    ReleaseResult<Context> result = inner_.destroy_context(std::move(context));
    note_release(call, result);
    end();
    return result;
  }
  Status discard_context(Context&& context) {
    CallRecord& call = begin(Op::DiscardContext, context.id());
    Status result = inner_.discard_context(std::move(context));
    note_plain(call, result);
    end();
    return result;
  }

  // ---- buffers ----
  Result<Buffer> allocate_buffer(const Context& context, const AllocationPermit& permit) {
    CallRecord& call = begin(Op::AllocateBuffer, context.id());
    call.size = permit.desc().bytes;
    call.flags = static_cast<std::uint32_t>(permit.desc().usage);
    call.mode = static_cast<std::uint8_t>(permit.desc().mode);
    call.queue = permit.desc().queue.id;
    Result<Buffer> result = inner_.allocate_buffer(context, permit);
    note_created(call, result);
    end();
    return result;
  }
  Result<BufferInfo> buffer_info(const Buffer& buffer) {
    CallRecord& call = begin(Op::BufferInfo, buffer.id());
    Result<BufferInfo> result = inner_.buffer_info(buffer);
    note_plain(call, result);
    if (result.ok()) {
      const BufferInfo& info = result.value();
      call.outputs = {info.bytes, info.backing_bytes, info.alignment, static_cast<std::uint64_t>(info.usage),
                      static_cast<std::uint64_t>(info.mode)};
    }
    end();
    return result;
  }
  Status write_buffer(Buffer& buffer, std::uint64_t offset, ByteSource source) {
    CallRecord& call = begin(Op::WriteBuffer, buffer.id());
    call.offset = offset;
    detail::copy_segments(source.segments, call.data);
    Status result = inner_.write_buffer(buffer, offset, source);
    note_plain(call, result);
    end();
    return result;
  }
  Status read_buffer(const Buffer& buffer, std::uint64_t offset, ByteSink sink) {
    CallRecord& call = begin(Op::ReadBuffer, buffer.id());
    call.offset = offset;
    call.size = sink.size();
    Status result = inner_.read_buffer(buffer, offset, sink);
    note_plain(call, result);
    if (result.ok()) call.data_hash = detail::hash_segments(sink.segments);
    end();
    return result;
  }
  ReleaseResult<Buffer> free_buffer(Buffer&& buffer) {
    CallRecord& call = begin(Op::FreeBuffer, buffer.id());
    ReleaseResult<Buffer> result = inner_.free_buffer(std::move(buffer));
    note_release(call, result);
    end();
    return result;
  }

  // ---- programs: by kernel name and payload hash, never the payload ----
  Result<Program> load_program(const Context& context, const ArtifactRef& artifact) {
    CallRecord& call = begin(Op::LoadProgram, context.id());
    call.name = artifact.kernel_name;
    call.mode = static_cast<std::uint8_t>(artifact.format);
    call.payload_hash = detail::hash_segments(artifact.payload.segments);
    call.payload_bytes = artifact.payload.size();
    call.resident_bytes = artifact.resident_bytes;
    Result<Program> result = inner_.load_program(context, artifact);
    note_created(call, result);
    end();
    return result;
  }
  ReleaseResult<Program> unload_program(Program&& program) {
    CallRecord& call = begin(Op::UnloadProgram, program.id());
    ReleaseResult<Program> result = inner_.unload_program(std::move(program));
    note_release(call, result);
    end();
    return result;
  }

  // ---- queues and submission ----
  Result<Queue> create_queue(const Context& context, QueueDesc desc) {
    CallRecord& call = begin(Op::CreateQueue, context.id());
    call.flags = desc.flags;
    call.priority = desc.priority;
    Result<Queue> result = inner_.create_queue(context, desc);
    note_created(call, result);
    end();
    return result;
  }
  ReleaseResult<Queue> destroy_queue(Queue&& queue) {
    CallRecord& call = begin(Op::DestroyQueue, queue.id());
    ReleaseResult<Queue> result = inner_.destroy_queue(std::move(queue));
    note_release(call, result);
    end();
    return result;
  }
  QueueState queue_state(const Queue& queue) {
    CallRecord& call = begin(Op::QueueStateOf, queue.id());
    const QueueState state = inner_.queue_state(queue);
    call.outputs = {state.batches_in_flight, state.capturing ? 1U : 0U, state.lost ? 1U : 0U};
    end();
    return state;
  }
  SubmitResult submit(const Queue& queue, Batch batch, SubmitOptions options) {
    CallRecord& call = begin(Op::Submit, queue.id());
    call.commands.swap(kept_commands_);
    detail::record_commands(batch, call.commands);
    call.admission_timeout_ns = options.admission_timeout_ns;
    call.timing_requested = options.timing;
    call.invocation = options.invocation;
    SubmitResult result = inner_.submit(queue, batch, options);
    call.status = static_cast<std::uint8_t>(result.status);
    note_error(call, result.error);
    note_handle(call, result.event);
    call.commands_enqueued = result.commands_enqueued;
    end();
    return result;
  }
  Status synchronize(const Queue& queue, std::uint64_t timeout_ns) {
    CallRecord& call = begin(Op::Synchronize, queue.id());
    call.timeout_ns = timeout_ns;
    Status result = inner_.synchronize(queue, timeout_ns);
    note_plain(call, result);
    end();
    return result;
  }

  // ---- events ----
  Observation poll_event(const Event& event) {
    CallRecord& call = begin(Op::PollEvent, event.id());
    Observation observation = inner_.poll_event(event);
    call.status = static_cast<std::uint8_t>(observation.state);
    note_error(call, observation.error);
    call.timing = observation.timing;
    end();
    return observation;
  }
  WaitResult wait_event(const Event& event, std::uint64_t timeout_ns) {
    CallRecord& call = begin(Op::WaitEvent, event.id());
    call.timeout_ns = timeout_ns;
    WaitResult result = inner_.wait_event(event, timeout_ns);
    if (result.ok()) {
      call.status = 0;
      call.state = result.value().state;
      note_error(call, result.value().error);
      call.timing = result.value().timing;
    } else {
      call.status = 1;
      note_error(call, result.error().error);
    }
    end();
    return result;
  }
  Status cancel_event(const Event& event) {
    CallRecord& call = begin(Op::CancelEvent, event.id());
    Status result = inner_.cancel_event(event);
    note_plain(call, result);
    end();
    return result;
  }
  ReleaseResult<Event> destroy_event(Event&& event) {
    CallRecord& call = begin(Op::DestroyEvent, event.id());
    ReleaseResult<Event> result = inner_.destroy_event(std::move(event));
    note_release(call, result);
    end();
    return result;
  }

  // ---- reusable executables ----
  Status begin_capture(const Queue& queue) {
    CallRecord& call = begin(Op::BeginCapture, queue.id());
    Status result = inner_.begin_capture(queue);
    note_plain(call, result);
    end();
    return result;
  }
  Status capture(const Queue& queue, Batch batch) {
    CallRecord& call = begin(Op::Capture, queue.id());
    call.commands.swap(kept_commands_);
    detail::record_commands(batch, call.commands);
    Status result = inner_.capture(queue, batch);
    note_plain(call, result);
    end();
    return result;
  }
  Result<Executable> end_capture(const Queue& queue) {
    CallRecord& call = begin(Op::EndCapture, queue.id());
    Result<Executable> result = inner_.end_capture(queue);
    note_created(call, result);
    end();
    return result;
  }
  ReleaseResult<Executable> destroy_executable(Executable&& executable) {
    CallRecord& call = begin(Op::DestroyExecutable, executable.id());
    ReleaseResult<Executable> result = inner_.destroy_executable(std::move(executable));
    note_release(call, result);
    end();
    return result;
  }

  // ---- memory ----
  Result<MemoryUsage> memory_usage(const Context& context) {
    CallRecord& call = begin(Op::MemoryUsageOf, context.id());
    Result<MemoryUsage> result = inner_.memory_usage(context);
    note_plain(call, result);
    if (result.ok()) {
      const MemoryUsage& usage = result.value();
      call.outputs = {usage.bytes_in_use, usage.bytes_reserved, usage.allocations, usage.bytes_in_use_max};
    }
    end();
    return result;
  }
  Result<MemoryReport> memory_report(const Context& context) {
    CallRecord& call = begin(Op::MemoryReportOf, context.id());
    Result<MemoryReport> result = inner_.memory_report(context);
    note_plain(call, result);
    if (result.ok()) detail::record_memory_report(result.value(), call);
    end();
    return result;
  }
  Status install_pools(const Context& context, const PoolLayout& layout) {
    CallRecord& call = begin(Op::InstallPools, context.id());
    call.layout = layout.block_bytes;
    Status result = inner_.install_pools(context, layout);
    note_plain(call, result);
    end();
    return result;
  }
  Status memory_cleanup(const Context& context) {
    CallRecord& call = begin(Op::MemoryCleanup, context.id());
    Status result = inner_.memory_cleanup(context);
    note_plain(call, result);
    end();
    return result;
  }

 private:
  CallRecord& begin(Op op, std::uint64_t subject) {
    if (hooks_ != nullptr) {
      const std::uint64_t now_ns = hooks_->now_ns();
      if (now_ns != last_clock_ns_) record_clock(now_ns);
    }
    // The last batch's commands are put aside with their storage (bindings, payload bytes) for the next
    // batch to reuse, not freed. Then only the call's fields are cleared: the recorder never writes this
    // record's note fields, nor a note's call fields.
    if (!scratch_.call.commands.empty()) scratch_.call.commands.swap(kept_commands_);
    reset_record(scratch_.call);
    scratch_.kind = RecordKind::Call;
    scratch_.call.op = op;
    scratch_.call.subject = subject;
    return scratch_.call;
  }
  void end() {
    sink_->append(scratch_);
    const std::uint64_t index = calls_++;
    if (hooks_ != nullptr) hooks_->after_call(index);
  }
  void append_note(RecordKind kind, std::uint64_t call_index, std::string_view name, std::uint64_t value,
                   std::uint64_t count, std::string_view text, std::uint64_t ordinal = 0) {
    // Every note field is set below, so nothing of the last note is left to clear.
    note_scratch_.kind = kind;
    note_scratch_.note.call_index = call_index;
    note_scratch_.note.name = name;
    note_scratch_.note.value = value;
    note_scratch_.note.count = count;
    note_scratch_.note.ordinal = ordinal;
    note_scratch_.note.detail = text;
    sink_->append(note_scratch_);
  }
  static void note_error(CallRecord& call, const Error& error) {
    if (error == Error{}) return;
    call.has_error = true;
    call.error = to_value(error);
  }
  template <class H>
  static void note_handle(CallRecord& call, const H& handle) {
    call.result_id = handle.id();
    call.result_epoch = handle.epoch();
  }
  template <class T>
  static void note_plain(CallRecord& call, const Result<T>& result) {
    call.status = result.ok() ? 0 : 1;
    if (!result.ok()) {
      call.has_error = true;
      call.error = to_value(result.error());
    }
  }
  template <class H>
  static void note_created(CallRecord& call, const Result<H>& result) {
    note_plain(call, result);
    if (result.ok()) note_handle(call, result.value());
  }
  template <class H>
  static void note_release(CallRecord& call, const ReleaseResult<H>& result) {
    call.status = static_cast<std::uint8_t>(result.status);
    note_error(call, result.error);
    note_handle(call, result.handle);
  }

  B inner_;
  TraceSink* sink_;
  RecorderHooks* hooks_ = nullptr;
  std::uint64_t calls_ = 0;
  std::uint64_t last_clock_ns_ = 0;
  Record scratch_;
  Record note_scratch_;
  std::vector<CommandRecord> kept_commands_;  // the last batch's, for record_commands to write over
};

}  // namespace quiesce::traces

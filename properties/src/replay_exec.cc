// Re-issuing recorded calls: recorded handle ids are mapped to the handles the new stack hands out.
//
// Handles are plain (id, epoch) values and a mapping outlives the handle's release, so a consumed handle
// that a recording used again is passed on stale exactly as it was recorded, and the layers below answer it
// as they did the first time. An id whose creator is not in this run becomes an empty handle.
#include <algorithm>
#include <limits>
#include <string>

#include "replay_internal.h"

namespace quiesce::properties::replay_detail {

using traces::CallRecord;
using traces::HandleKind;
using traces::Op;

constexpr std::size_t kCommandsPrefetchedMax = 4;

CallExecutor::CallExecutor(RecordedStack& top) : top_(&top), budget_(std::numeric_limits<std::uint64_t>::max() / 2) {}

template <class Tag>
Handle<Tag> CallExecutor::handle(HandleKind kind, std::uint64_t recorded) const {
  if (recorded == 0) return Handle<Tag>{};
  const Mapped* found = maps_[static_cast<std::size_t>(kind)].find(recorded);
  if (found == nullptr) return Handle<Tag>{};
  return Handle<Tag>(found->id, found->epoch);
}

void CallExecutor::prefetch(const CallRecord& call) const {
  const HandleKind subject = traces::subject_kind(call.op);
  const HandleKind result = traces::result_kind(call.op);
  if (call.subject != 0 && subject != HandleKind::None) maps_[static_cast<std::size_t>(subject)].prefetch(call.subject);
  if (call.result_id != 0 && result != HandleKind::None) maps_[static_cast<std::size_t>(result)].prefetch(call.result_id);
  // A batch's command records are allocations of their own, apart from the record: the first few are fetched.
  const std::size_t commands = std::min<std::size_t>(call.commands.size(), kCommandsPrefetchedMax);
  for (std::size_t index = 0; index < commands; ++index) {
    const traces::CommandRecord& command = call.commands[index];
    __builtin_prefetch(&command.kind);
    __builtin_prefetch(&command.bindings);
    __builtin_prefetch(&command.data);
  }
}

void CallExecutor::learn(HandleKind kind, std::uint64_t recorded, std::uint64_t id, std::uint32_t epoch) {
  if (recorded == 0 || id == 0 || kind == HandleKind::None) return;
  maps_[static_cast<std::size_t>(kind)].set(recorded, Mapped{id, epoch});
}

void CallExecutor::build_batch(const CallRecord& call) {
  commands_.clear();
  bindings_.resize(call.commands.size());
  data_.resize(call.commands.size());
  for (std::size_t index = 0; index < call.commands.size(); ++index) {
    const traces::CommandRecord& record = call.commands[index];
    std::vector<Binding>& bindings = bindings_[index];
    bindings.clear();
    for (const traces::BindingRecord& binding : record.bindings) {
      bindings.push_back(Binding{ref<BufferTag>(HandleKind::Buffer, binding.buffer), binding.access});
    }
    Command command;
    command.kind = record.kind;
    command.mode = record.mode;
    command.program = ref<ProgramTag>(HandleKind::Program, record.program);
    command.executable = ref<ExecutableTag>(HandleKind::Executable, record.executable);
    command.event = ref<EventTag>(HandleKind::Event, record.event);
    command.source = ref<BufferTag>(HandleKind::Buffer, record.source);
    command.target = ref<BufferTag>(HandleKind::Buffer, record.target);
    command.source_offset = record.source_offset;
    command.target_offset = record.target_offset;
    command.bytes = record.bytes;
    command.dims = record.dims;
    command.bindings = bindings;
    command.data = record.data.view(data_[index]);
    commands_.push_back(command);
  }
}

bool CallExecutor::execute(const CallRecord& call, std::string& problem) {
  if (call.op == Op::ReadBuffer && call.size > traces::kDataBytesMax) {
    problem = "read_buffer asks for " + std::to_string(call.size) + " bytes, above the replay bound " +
              std::to_string(traces::kDataBytesMax);
    return false;
  }
  switch (call.op) {
    case Op::DeviceInfo: (void)top_->device_info(); return true;
    case Op::CreateContext: {
      Result<Context> context = top_->create_context(ContextDesc{call.flags});
      if (context.ok()) learn(HandleKind::Context, call.result_id, context->id(), context->epoch());
      return true;
    }
    case Op::DestroyContext: (void)top_->destroy_context(handle<ContextTag>(HandleKind::Context, call.subject)); return true;
    case Op::DiscardContext: (void)top_->discard_context(handle<ContextTag>(HandleKind::Context, call.subject)); return true;
    case Op::QueueStateOf: (void)top_->queue_state(handle<QueueTag>(HandleKind::Queue, call.subject)); return true;
    case Op::MemoryUsageOf: (void)top_->memory_usage(handle<ContextTag>(HandleKind::Context, call.subject)); return true;
    case Op::MemoryReportOf: (void)top_->memory_report(handle<ContextTag>(HandleKind::Context, call.subject)); return true;
    case Op::InstallPools:
      (void)top_->install_pools(handle<ContextTag>(HandleKind::Context, call.subject), PoolLayout{call.layout});
      return true;
    case Op::MemoryCleanup: (void)top_->memory_cleanup(handle<ContextTag>(HandleKind::Context, call.subject)); return true;
    default: break;
  }
  execute_resources(call);
  execute_queues(call);
  execute_events(call);
  return true;
}

void CallExecutor::execute_resources(const CallRecord& call) {
  switch (call.op) {
    case Op::AllocateBuffer: {
      // A permit comes only from a transaction; its budget never refuses, so the allocation reaches the stack
      // exactly as it did when it was recorded.
      const Context context = handle<ContextTag>(HandleKind::Context, call.subject);
      ResourceTransaction<RecordedStack> transaction(*top_, context, budget_, ++transactions_);
      const BufferDesc desc{call.size, static_cast<BufferUsage>(call.flags), static_cast<AllocationMode>(call.mode),
                            ref<QueueTag>(HandleKind::Queue, call.queue)};
      const Result<BufferRef> allocated = transaction.allocate(desc);
      std::vector<Buffer> buffers = transaction.commit();
      if (allocated.ok() && !buffers.empty()) learn(HandleKind::Buffer, call.result_id, buffers[0].id(), buffers[0].epoch());
      return;
    }
    case Op::BufferInfo: (void)top_->buffer_info(handle<BufferTag>(HandleKind::Buffer, call.subject)); return;
    case Op::WriteBuffer: {
      Buffer buffer = handle<BufferTag>(HandleKind::Buffer, call.subject);
      const std::span<const std::byte> segment = call.data.view(write_bytes_);
      (void)top_->write_buffer(buffer, call.offset, ByteSource{std::span(&segment, 1)});
      return;
    }
    case Op::ReadBuffer: {
      sink_bytes_.assign(call.size, std::byte{0});
      const std::span<std::byte> segment(sink_bytes_);
      (void)top_->read_buffer(handle<BufferTag>(HandleKind::Buffer, call.subject), call.offset, ByteSink{std::span(&segment, 1)});
      return;
    }
    case Op::FreeBuffer: (void)top_->free_buffer(handle<BufferTag>(HandleKind::Buffer, call.subject)); return;
    case Op::LoadProgram: {
      // By name only: a trace never carries code, so nothing of a stranger's payload is ever loaded.
      ArtifactRef artifact;
      artifact.kernel_name = call.name;
      artifact.format = static_cast<ArtifactFormat>(call.mode);
      artifact.resident_bytes = call.resident_bytes;
      Result<Program> program = top_->load_program(handle<ContextTag>(HandleKind::Context, call.subject), artifact);
      if (program.ok()) learn(HandleKind::Program, call.result_id, program->id(), program->epoch());
      return;
    }
    case Op::UnloadProgram: (void)top_->unload_program(handle<ProgramTag>(HandleKind::Program, call.subject)); return;
    default: return;
  }
}

void CallExecutor::execute_queues(const CallRecord& call) {
  const Queue queue = handle<QueueTag>(HandleKind::Queue, call.subject);
  switch (call.op) {
    case Op::CreateQueue: {
      Result<Queue> created = top_->create_queue(handle<ContextTag>(HandleKind::Context, call.subject), QueueDesc{call.flags, call.priority});
      if (created.ok()) learn(HandleKind::Queue, call.result_id, created->id(), created->epoch());
      return;
    }
    case Op::DestroyQueue: (void)top_->destroy_queue(handle<QueueTag>(HandleKind::Queue, call.subject)); return;
    case Op::Submit: {
      build_batch(call);
      SubmitResult submitted =
          top_->submit(queue, commands_, SubmitOptions{call.admission_timeout_ns, call.timing_requested, call.invocation});
      learn(HandleKind::Event, call.result_id, submitted.event.id(), submitted.event.epoch());
      return;
    }
    case Op::Synchronize: (void)top_->synchronize(queue, call.timeout_ns); return;
    case Op::BeginCapture: (void)top_->begin_capture(queue); return;
    case Op::Capture:
      build_batch(call);
      (void)top_->capture(queue, commands_);
      return;
    case Op::EndCapture: {
      Result<Executable> executable = top_->end_capture(queue);
      if (executable.ok()) learn(HandleKind::Executable, call.result_id, executable->id(), executable->epoch());
      return;
    }
    case Op::DestroyExecutable:
      (void)top_->destroy_executable(handle<ExecutableTag>(HandleKind::Executable, call.subject));
      return;
    default: return;
  }
}

void CallExecutor::execute_events(const CallRecord& call) {
  const Event event = handle<EventTag>(HandleKind::Event, call.subject);
  switch (call.op) {
    case Op::PollEvent: (void)top_->poll_event(event); return;
    case Op::WaitEvent: (void)top_->wait_event(event, call.timeout_ns); return;
    case Op::CancelEvent: (void)top_->cancel_event(event); return;
    case Op::DestroyEvent: (void)top_->destroy_event(handle<EventTag>(HandleKind::Event, call.subject)); return;
    default: return;
  }
}

}  // namespace quiesce::properties::replay_detail

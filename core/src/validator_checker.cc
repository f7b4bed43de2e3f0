// ContractChecker, part 1: call bookkeeping, handle use checks, and the lifecycles of contexts, buffers,
// programs and queues. Part 2 (validator_events.cc) holds submission, events and capture windows.
#include <cassert>

#include "quiesce/core/prng.h"
#include "quiesce/core/validator/checker.h"

namespace quiesce {

ContractChecker::ContractChecker(ValidatorOptions options)
    : options_(options),
      contexts_(options.retired_remembered_max),
      buffers_(options.retired_remembered_max),
      programs_(options.retired_remembered_max),
      queues_(options.retired_remembered_max),
      events_(options.retired_remembered_max),
      executables_(options.retired_remembered_max) {
  assert(options_.indeterminate_invocations_max > 0);
  violations_.reserve(options_.violations_stored_max < 256 ? options_.violations_stored_max : 256);
}

// ---- bookkeeping ----

void ContractChecker::start(Call call) {
  assert(call != Call::None);
  call_index_ = calls_++;
  call_ = call;
  caller_violations_in_call_ = 0;
}

void ContractChecker::note_call(Call call) { start(call); }

bool ContractChecker::forward() const {
  return options_.mode == ViolationMode::CollectAll || caller_violations_in_call_ == 0;
}

void ContractChecker::report(Rule rule, HandleName subject, HandleName related, std::string_view observed,
                             std::uint64_t value) {
  const RuleInfo& info = rule_info(rule);
  if (info.party == Party::Caller && call_ != Call::None) {
    if (caller_violations_in_call_ == 0) first_caller_rule_ = rule;
    ++caller_violations_in_call_;
  }
  record(Violation{rule, call_index_, call_, {subject, related}, info.summary, observed, value});
}

void ContractChecker::record(const Violation& violation) {
  ++violation_count_;
  if (violations_.size() >= options_.violations_stored_max) return;  // counted, not stored: the bound
  violations_.push_back(violation);
}

Error ContractChecker::refusal() const {
  assert(caller_violations_in_call_ > 0);
  const ErrorKind kind =
      first_caller_rule_ == Rule::CallerAccessMode ? ErrorKind::PermissionDenied : ErrorKind::InvalidArgument;
  Error error = make_error(kind, rule_info(first_caller_rule_).name);
  error.native_code = kRefusalCodeBase + static_cast<std::int32_t>(first_caller_rule_);
  return error;
}

std::uint64_t ContractChecker::poison_salt() const {
  std::uint64_t state = call_index_ ^ 0x5EEDB0A710ADULL;
  return splitmix64(state);
}

void ContractChecker::poison_read_sink(ByteSink sink) {
  poison_sink(sink, poison_salt(), poison_words_);
  poison_words_call_ = call_index_;
}

void ContractChecker::note_error(std::uint64_t context, const Error& error) {
  if (error.kind != ErrorKind::DeviceLost) return;
  ContextShadow* record = contexts_.find(context);
  if (record != nullptr && record->life == Life::Live) record->lost = true;
}

// ---- handle use ----

ContextShadow* ContractChecker::use_context(ContextRef ref, Use use) {
  const HandleName name{HandleKind::ContextHandle, ref.id, ref.epoch};
  ContextShadow* record = ref.id == 0 ? nullptr : contexts_.find(ref.id);
  if (record == nullptr) {
    report(Rule::CallerUnknownHandle, name, {}, "no context of this id was created through the validator");
    return nullptr;
  }
  if (record->epoch != ref.epoch) {
    report(Rule::CallerStaleEpoch, name, {}, "the context's epoch no longer matches", record->epoch);
    return nullptr;
  }
  if (record->life != Life::Live) {
    report(Rule::CallerUseAfterRelease, name, {},
           record->discarded ? "the context was discarded" : "the context was already released");
    return nullptr;
  }
  if (use == Use::Operate && record->lost) {
    report(Rule::CallerUseAfterDeviceLost, name, {}, "the context reported DeviceLost earlier");
  }
  return record;
}

template <class Record>
Record* ContractChecker::use_child(ShadowTable<Record>& table, HandleKind kind, std::uint64_t id,
                                   std::uint32_t epoch, Use use) {
  const HandleName name{kind, id, epoch};
  Record* record = id == 0 ? nullptr : table.find(id);
  if (record == nullptr) {
    report(Rule::CallerUnknownHandle, name, {}, "no handle of this kind and id was created through the validator");
    return nullptr;
  }
  if (record->life != Life::Live) {
    report(Rule::CallerUseAfterRelease, name, {},
           record->life == Life::Invalidated ? "an indeterminate release invalidated the handle"
                                             : "the handle was already released");
    return nullptr;
  }
  const ContextShadow* context = contexts_.find(record->context);
  const HandleName context_name{HandleKind::ContextHandle, record->context, record->epoch};
  if (record->epoch != epoch || context == nullptr || context->epoch != record->epoch ||
      context->life != Life::Live) {
    report(Rule::CallerStaleEpoch, name, context_name, "the handle's context epoch was discarded or destroyed");
    return nullptr;
  }
  if (use == Use::Operate && context->lost) {
    report(Rule::CallerUseAfterDeviceLost, name, context_name, "the handle's context reported DeviceLost earlier");
  }
  return record;
}

BufferShadow* ContractChecker::use_buffer(BufferRef ref, Use use) {
  return use_child(buffers_, HandleKind::BufferHandle, ref.id, ref.epoch, use);
}
ProgramShadow* ContractChecker::use_program(ProgramRef ref, Use use) {
  return use_child(programs_, HandleKind::ProgramHandle, ref.id, ref.epoch, use);
}
QueueShadow* ContractChecker::use_queue(QueueRef ref, Use use) {
  return use_child(queues_, HandleKind::QueueHandle, ref.id, ref.epoch, use);
}
EventShadow* ContractChecker::use_event(EventRef ref, Use use) {
  return use_child(events_, HandleKind::EventHandle, ref.id, ref.epoch, use);
}
ExecutableShadow* ContractChecker::use_executable(ExecutableRef ref, Use use) {
  return use_child(executables_, HandleKind::ExecutableHandle, ref.id, ref.epoch, use);
}

// A freshly created handle: a nonzero id that is not live already, in its context's epoch.
bool ContractChecker::check_created(HandleKind kind, std::uint64_t id, std::uint32_t epoch, std::uint64_t context) {
  const HandleName name{kind, id, epoch};
  if (id == 0) {
    report(Rule::ProviderInvalidCreatedHandle, name, {}, "a successful creation returned an empty handle");
    return false;
  }
  auto live = [id](const auto& table) {
    const auto* record = table.find(id);
    return record != nullptr && record->life == Life::Live;
  };
  bool live_already = false;
  switch (kind) {
    case HandleKind::BufferHandle: live_already = live(buffers_); break;
    case HandleKind::ProgramHandle: live_already = live(programs_); break;
    case HandleKind::QueueHandle: live_already = live(queues_); break;
    case HandleKind::EventHandle: live_already = live(events_); break;
    case HandleKind::ExecutableHandle: live_already = live(executables_); break;
    case HandleKind::ContextHandle:
    case HandleKind::None: break;
  }
  if (live_already) {
    report(Rule::ProviderInvalidCreatedHandle, name, {}, "the id of a still-live handle was handed out again");
    return false;
  }
  const ContextShadow* parent = contexts_.find(context);
  if (kind != HandleKind::ContextHandle && parent != nullptr && parent->epoch != epoch) {
    report(Rule::ProviderInvalidCreatedHandle, name, HandleName{HandleKind::ContextHandle, context, parent->epoch},
           "the handle's epoch differs from its context's epoch", epoch);
    return false;
  }
  return true;
}

void ContractChecker::check_release_answer(HandleName released, const ReleaseAnswer& answer) {
  if (answer.status == ReleaseStatus::Rejected) {
    if (answer.returned_id != released.id || answer.returned_epoch != released.epoch) {
      report(Rule::ProviderReleaseHandle, released, HandleName{released.kind, answer.returned_id, answer.returned_epoch},
             "a rejected release returned a different handle");
    }
  } else if (answer.returned_id != 0) {
    report(Rule::ProviderReleaseHandle, released, HandleName{released.kind, answer.returned_id, answer.returned_epoch},
           "a release that was not rejected still returned a handle");
  }
}

// ---- contexts ----

void ContractChecker::after_create_context(const Result<Context>& result) {
  if (!result.ok()) return;
  const Context& context = result.value();
  if (!check_created(HandleKind::ContextHandle, context.id(), context.epoch(), context.id())) return;
  ContextShadow* existing = contexts_.find(context.id());
  if (existing != nullptr && existing->life == Life::Live) {
    report(Rule::ProviderInvalidCreatedHandle, HandleName{HandleKind::ContextHandle, context.id(), context.epoch()}, {},
           "the id of a still-live context was handed out again");
    return;
  }
  if (existing != nullptr && existing->epoch == context.epoch()) {
    report(Rule::ProviderInvalidCreatedHandle, HandleName{HandleKind::ContextHandle, context.id(), context.epoch()}, {},
           "a context id came back with the epoch it had before it was released");
  }
  ContextShadow& record = contexts_.create(context.id());
  record.epoch = context.epoch();
  record.life = Life::Live;
}

bool ContractChecker::before_destroy_context(ContextRef ref) {
  start(Call::DestroyContext);
  const ContextShadow* context = use_context(ref, Use::Release);
  if (context != nullptr && context->children_live > 0) {
    report(Rule::CallerDestroyParentWithChildren, HandleName{HandleKind::ContextHandle, ref.id, ref.epoch},
           find_child(ref.id), "the context still has live children", context->children_live);
  }
  return forward();
}

void ContractChecker::after_destroy_context(ContextRef ref, const ReleaseAnswer& answer) {
  check_release_answer(HandleName{HandleKind::ContextHandle, ref.id, ref.epoch}, answer);
  ContextShadow* context = contexts_.find(ref.id);
  if (context == nullptr || context->epoch != ref.epoch || context->life != Life::Live) return;
  if (answer.status == ReleaseStatus::Rejected) {
    note_error(ref.id, answer.error);
    return;
  }
  context->life = answer.status == ReleaseStatus::Released ? Life::Released : Life::Invalidated;
  contexts_.retire(ref.id);
}

bool ContractChecker::before_discard_context(ContextRef ref) {
  start(Call::DiscardContext);
  (void)use_context(ref, Use::Release);
  return forward();
}

void ContractChecker::after_discard_context(ContextRef ref, const Status& status) {
  // The handle was consumed whatever the answer: nothing of this epoch may be used again.
  (void)status;
  ContextShadow* context = contexts_.find(ref.id);
  if (context == nullptr || context->epoch != ref.epoch || context->life != Life::Live) return;
  context->life = Life::Released;
  context->discarded = true;
  contexts_.retire(ref.id);
}

bool ContractChecker::before_context_call(Call call, ContextRef ref) {
  start(call);
  (void)use_context(ref, Use::Operate);
  return forward();
}

void ContractChecker::after_context_call(ContextRef ref, const Error* error) {
  if (error != nullptr) note_error(ref.id, *error);
}

// ---- buffers ----

bool ContractChecker::before_allocate_buffer(ContextRef ref, const BufferDesc& desc) {
  start(Call::AllocateBuffer);
  const ContextShadow* context = use_context(ref, Use::Operate);
  const HandleName context_name{HandleKind::ContextHandle, ref.id, ref.epoch};
  if (context != nullptr && context->capturing_queues > 0) {
    report(Rule::CallerAllocateInsideCapture, context_name, {}, "a queue of this context has a capture window open");
  }
  if (desc.mode == AllocationMode::StreamOrdered) {
    const QueueShadow* queue = use_queue(desc.queue, Use::Operate);
    if (queue != nullptr && queue->context != ref.id) {
      report(Rule::CallerCrossContext, HandleName{HandleKind::QueueHandle, desc.queue.id, desc.queue.epoch}, context_name,
             "the stream-ordered allocation names a queue of another context");
    }
  }
  return forward();
}

void ContractChecker::after_allocate_buffer(ContextRef ref, const BufferDesc& desc, const Result<Buffer>& result) {
  if (!result.ok()) {
    note_error(ref.id, result.error());
    return;
  }
  const Buffer& buffer = result.value();
  ContextShadow* context = contexts_.find(ref.id);
  if (context == nullptr || context->life != Life::Live) return;
  if (!check_created(HandleKind::BufferHandle, buffer.id(), buffer.epoch(), ref.id)) return;
  context->children_live++;
  BufferShadow& record = buffers_.create(buffer.id());
  record = BufferShadow{buffer.epoch(), Life::Live, desc.usage, ref.id, desc.bytes, 0, 0, 0};
  if (desc.mode == AllocationMode::StreamOrdered) record.ordering_queue = desc.queue.id;
}

bool ContractChecker::before_buffer_info(BufferRef ref) {
  start(Call::GetBufferInfo);
  (void)use_buffer(ref, Use::Operate);
  return forward();
}

bool ContractChecker::before_write_buffer(BufferRef ref, std::uint64_t offset, std::uint64_t bytes) {
  start(Call::WriteBuffer);
  const BufferShadow* buffer = use_buffer(ref, Use::Operate);
  const HandleName name{HandleKind::BufferHandle, ref.id, ref.epoch};
  if (buffer == nullptr) return forward();
  if (!has_usage(buffer->usage, BufferUsage::TransferTarget)) {
    report(Rule::CallerAccessMode, name, {}, "write_buffer needs TransferTarget usage");
  }
  if (offset > buffer->bytes || bytes > buffer->bytes - offset) {
    report(Rule::CallerOutOfRange, name, {}, "the write ends past the buffer's size, at byte", offset + bytes);
  }
  return forward();
}

bool ContractChecker::before_read_buffer(BufferRef ref, std::uint64_t offset, std::uint64_t bytes) {
  start(Call::ReadBuffer);
  const BufferShadow* buffer = use_buffer(ref, Use::Operate);
  const HandleName name{HandleKind::BufferHandle, ref.id, ref.epoch};
  if (buffer == nullptr) return forward();
  if (!has_usage(buffer->usage, BufferUsage::TransferSource)) {
    report(Rule::CallerAccessMode, name, {}, "read_buffer needs TransferSource usage");
  }
  if (offset > buffer->bytes || bytes > buffer->bytes - offset) {
    report(Rule::CallerOutOfRange, name, {}, "the read ends past the buffer's size, at byte", offset + bytes);
  }
  return forward();
}

void ContractChecker::after_buffer_call(BufferRef ref, const Error* error) {
  const BufferShadow* buffer = buffers_.find(ref.id);
  if (error != nullptr && buffer != nullptr) note_error(buffer->context, *error);
}

void ContractChecker::after_read_buffer(BufferRef ref, const Status& status, ByteSink sink) {
  if (!status.ok()) {
    after_buffer_call(ref, &status.error());
    return;
  }
  if (options_.check_read_initialised) check_read_initialised(ref, sink);
}

void ContractChecker::check_read_initialised(BufferRef ref, ByteSink sink) {
  // The words poison_read_sink kept are this call's only (another call's salt differs).
  const std::span<const std::uint64_t> kept =
      poison_words_call_ == call_index_ ? std::span<const std::uint64_t>(poison_words_) : std::span<const std::uint64_t>();
  const std::uint64_t run_start = find_poison_run(sink, poison_salt(), kept);
  if (run_start != UINT64_MAX) {
    report(Rule::ProviderReadUninitialised, HandleName{HandleKind::BufferHandle, ref.id, ref.epoch}, {},
           "the read succeeded but left sink bytes unwritten from sink offset", run_start);
  }
}

bool ContractChecker::before_free_buffer(BufferRef ref) {
  start(Call::FreeBuffer);
  const BufferShadow* buffer = use_buffer(ref, Use::Release);
  const HandleName name{HandleKind::BufferHandle, ref.id, ref.epoch};
  if (buffer != nullptr && buffer->event_pins > 0) {
    report(Rule::CallerReleaseWhilePinned, name, find_pinning_event(HandleKind::BufferHandle, ref.id),
           "live events still reference the buffer", buffer->event_pins);
  }
  if (buffer != nullptr && buffer->executable_pins > 0) {
    report(Rule::CallerReleaseWhileCaptured, name, find_pinning_executable(HandleKind::BufferHandle, ref.id),
           "live executables or an open capture still reference the buffer", buffer->executable_pins);
  }
  return forward();
}

void ContractChecker::after_free_buffer(BufferRef ref, const ReleaseAnswer& answer) {
  check_release_answer(HandleName{HandleKind::BufferHandle, ref.id, ref.epoch}, answer);
  BufferShadow* buffer = buffers_.find(ref.id);
  if (buffer == nullptr || buffer->life != Life::Live || buffer->epoch != ref.epoch) return;
  note_error(buffer->context, answer.error);
  if (answer.status == ReleaseStatus::Rejected) return;
  buffer->life = answer.status == ReleaseStatus::Released ? Life::Released : Life::Invalidated;
  ContextShadow* context = contexts_.find(buffer->context);
  if (context != nullptr && context->epoch == ref.epoch && context->children_live > 0) context->children_live--;
  buffers_.retire(ref.id);
}

// ---- programs ----

bool ContractChecker::before_load_program(ContextRef ref) {
  start(Call::LoadProgram);
  (void)use_context(ref, Use::Operate);
  return forward();
}

void ContractChecker::after_load_program(ContextRef ref, const Result<Program>& result) {
  if (!result.ok()) {
    note_error(ref.id, result.error());
    return;
  }
  const Program& program = result.value();
  ContextShadow* context = contexts_.find(ref.id);
  if (context == nullptr || context->life != Life::Live) return;
  if (!check_created(HandleKind::ProgramHandle, program.id(), program.epoch(), ref.id)) return;
  context->children_live++;
  ProgramShadow& record = programs_.create(program.id());
  record = ProgramShadow{program.epoch(), Life::Live, ref.id, 0, 0};
}

bool ContractChecker::before_unload_program(ProgramRef ref) {
  start(Call::UnloadProgram);
  const ProgramShadow* program = use_program(ref, Use::Release);
  const HandleName name{HandleKind::ProgramHandle, ref.id, ref.epoch};
  if (program != nullptr && program->event_pins > 0) {
    report(Rule::CallerReleaseWhilePinned, name, find_pinning_event(HandleKind::ProgramHandle, ref.id),
           "live events still reference the program", program->event_pins);
  }
  if (program != nullptr && program->executable_pins > 0) {
    report(Rule::CallerReleaseWhileCaptured, name, find_pinning_executable(HandleKind::ProgramHandle, ref.id),
           "live executables or an open capture still reference the program", program->executable_pins);
  }
  return forward();
}

void ContractChecker::after_unload_program(ProgramRef ref, const ReleaseAnswer& answer) {
  check_release_answer(HandleName{HandleKind::ProgramHandle, ref.id, ref.epoch}, answer);
  ProgramShadow* program = programs_.find(ref.id);
  if (program == nullptr || program->life != Life::Live || program->epoch != ref.epoch) return;
  note_error(program->context, answer.error);
  if (answer.status == ReleaseStatus::Rejected) return;
  program->life = answer.status == ReleaseStatus::Released ? Life::Released : Life::Invalidated;
  ContextShadow* context = contexts_.find(program->context);
  if (context != nullptr && context->epoch == ref.epoch && context->children_live > 0) context->children_live--;
  programs_.retire(ref.id);
}

// ---- queues ----

bool ContractChecker::before_create_queue(ContextRef ref) {
  start(Call::CreateQueue);
  (void)use_context(ref, Use::Operate);
  return forward();
}

void ContractChecker::after_create_queue(ContextRef ref, const Result<Queue>& result) {
  if (!result.ok()) {
    note_error(ref.id, result.error());
    return;
  }
  const Queue& queue = result.value();
  ContextShadow* context = contexts_.find(ref.id);
  if (context == nullptr || context->life != Life::Live) return;
  if (!check_created(HandleKind::QueueHandle, queue.id(), queue.epoch(), ref.id)) return;
  context->children_live++;
  QueueShadow& record = queues_.create(queue.id());
  record.epoch = queue.epoch();
  record.life = Life::Live;
  record.context = ref.id;
}

bool ContractChecker::before_destroy_queue(QueueRef ref) {
  start(Call::DestroyQueue);
  const QueueShadow* queue = use_queue(ref, Use::Release);
  const HandleName name{HandleKind::QueueHandle, ref.id, ref.epoch};
  if (queue != nullptr && queue->live_events > 0) {
    report(Rule::CallerDestroyParentWithChildren, name, find_pinning_event(HandleKind::QueueHandle, ref.id),
           "the queue still has live events", queue->live_events);
  }
  if (queue != nullptr && queue->capturing) {
    report(Rule::CallerCaptureNotEnded, name, {}, "the queue is destroyed with its capture window open");
  }
  return forward();
}

void ContractChecker::after_destroy_queue(QueueRef ref, const ReleaseAnswer& answer) {
  check_release_answer(HandleName{HandleKind::QueueHandle, ref.id, ref.epoch}, answer);
  QueueShadow* queue = queues_.find(ref.id);
  if (queue == nullptr || queue->life != Life::Live || queue->epoch != ref.epoch) return;
  note_error(queue->context, answer.error);
  if (answer.status == ReleaseStatus::Rejected) return;
  queue->life = answer.status == ReleaseStatus::Released ? Life::Released : Life::Invalidated;
  ContextShadow* context = contexts_.find(queue->context);
  const bool same_epoch = context != nullptr && context->epoch == ref.epoch;
  if (same_epoch && context->children_live > 0) context->children_live--;
  if (queue->capturing) {
    if (same_epoch && context->capturing_queues > 0) context->capturing_queues--;
    queue->capturing = false;
  }
  if (queue->capture_pins != 0) {
    unpin_list(queue->capture_pins, false);
    queue->capture_pins = 0;
  }
  queues_.retire(ref.id);
}

bool ContractChecker::before_queue_state(QueueRef ref) {
  start(Call::GetQueueState);
  (void)use_queue(ref, Use::Release);  // a query that is how a runtime learns of a loss: allowed after it
  return forward();
}

void ContractChecker::after_queue_state(QueueRef ref, const QueueState& state) {
  const QueueShadow* queue = queues_.find(ref.id);
  if (state.lost && queue != nullptr) {
    note_error(queue->context, make_error(ErrorKind::DeviceLost, "queue_state reported the context lost"));
  }
}

}  // namespace quiesce

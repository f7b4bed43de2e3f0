// ContractChecker, part 3: capture windows, executables and the end-of-run checks.
//
// A capture window opens at a successful begin_capture and closes at end_capture whatever it answers (an
// invalidated capture still ends). What capture() records is pinned by the window at once and handed to
// the executable end_capture creates, so a buffer captured into a graph cannot be freed before the graph is
// destroyed; a failed end_capture unpins it.
#include <cassert>

#include "quiesce/core/validator/checker.h"

namespace quiesce {

bool ContractChecker::before_begin_capture(QueueRef ref) {
  start(Call::BeginCapture);
  const QueueShadow* queue = use_queue(ref, Use::Operate);
  if (queue != nullptr && queue->capturing) {
    report(Rule::CallerCaptureNotEnded, HandleName{HandleKind::QueueHandle, ref.id, ref.epoch}, {},
           "begin_capture on a queue whose capture window is still open");
  }
  return forward();
}

void ContractChecker::after_begin_capture(QueueRef ref, const Status& status) {
  QueueShadow* queue = queues_.find(ref.id);
  if (queue == nullptr || queue->life != Life::Live || queue->epoch != ref.epoch) return;
  if (!status.ok()) {
    note_error(queue->context, status.error());
    return;
  }
  if (queue->capturing) return;  // a nested begin the backend accepted: still one window
  queue->capturing = true;
  queue->capture_pins = pin_lists_.acquire();
  ContextShadow* context = contexts_.find(queue->context);
  if (context != nullptr) context->capturing_queues++;
}

bool ContractChecker::before_capture(QueueRef ref, Batch batch) {
  start(Call::Capture);
  const QueueShadow* queue = use_queue(ref, Use::Operate);
  if (queue == nullptr) return forward();
  if (!queue->capturing) {
    report(Rule::CallerCaptureNotBegun, HandleName{HandleKind::QueueHandle, ref.id, ref.epoch}, {},
           "capture on a queue without an open capture window");
  }
  check_batch(*queue, ref, batch);
  return forward();
}

void ContractChecker::after_capture(QueueRef ref, Batch batch, const Status& status) {
  QueueShadow* queue = queues_.find(ref.id);
  if (queue == nullptr || queue->life != Life::Live || queue->epoch != ref.epoch) return;
  if (!status.ok()) {
    note_error(queue->context, status.error());
    return;
  }
  if (queue->capture_pins == 0) return;  // no window in the shadow (a forwarded violation)
  const std::uint32_t list = queue->capture_pins;
  pin_batch(batch, pin_lists_.at(list), 0);
}

bool ContractChecker::before_end_capture(QueueRef ref) {
  start(Call::EndCapture);
  const QueueShadow* queue = use_queue(ref, Use::Operate);
  if (queue != nullptr && !queue->capturing) {
    report(Rule::CallerCaptureNotBegun, HandleName{HandleKind::QueueHandle, ref.id, ref.epoch}, {},
           "end_capture on a queue without an open capture window");
  }
  return forward();
}

void ContractChecker::after_end_capture(QueueRef ref, const Result<Executable>& result) {
  QueueShadow* queue = queues_.find(ref.id);
  if (queue == nullptr || queue->life != Life::Live || queue->epoch != ref.epoch) return;
  const std::uint64_t context_id = queue->context;
  ContextShadow* context = contexts_.find(context_id);
  if (queue->capturing && context != nullptr && context->capturing_queues > 0) context->capturing_queues--;
  queue->capturing = false;
  std::uint32_t captured = queue->capture_pins;
  queue->capture_pins = 0;
  if (!result.ok()) {
    note_error(context_id, result.error());
    if (captured != 0) unpin_list(captured, false);
    return;
  }
  const Executable& executable = result.value();
  if (context == nullptr || !check_created(HandleKind::ExecutableHandle, executable.id(), executable.epoch(), context_id)) {
    if (captured != 0) unpin_list(captured, false);
    return;
  }
  context->children_live++;
  ExecutableShadow& record = executables_.create(executable.id());
  record.epoch = executable.epoch();
  record.life = Life::Live;
  record.context = context_id;
  record.pins = captured;
}

bool ContractChecker::before_destroy_executable(ExecutableRef ref) {
  start(Call::DestroyExecutable);
  const ExecutableShadow* executable = use_executable(ref, Use::Release);
  const HandleName name{HandleKind::ExecutableHandle, ref.id, ref.epoch};
  if (executable != nullptr && executable->event_pins > 0) {
    report(Rule::CallerReleaseWhilePinned, name, find_pinning_event(HandleKind::ExecutableHandle, ref.id),
           "live events still replay the executable", executable->event_pins);
  }
  if (executable != nullptr && executable->executable_pins > 0) {
    report(Rule::CallerReleaseWhileCaptured, name, find_pinning_executable(HandleKind::ExecutableHandle, ref.id),
           "another executable or an open capture still replays it", executable->executable_pins);
  }
  return forward();
}

void ContractChecker::after_destroy_executable(ExecutableRef ref, const ReleaseAnswer& answer) {
  check_release_answer(HandleName{HandleKind::ExecutableHandle, ref.id, ref.epoch}, answer);
  ExecutableShadow* executable = executables_.find(ref.id);
  if (executable == nullptr || executable->life != Life::Live || executable->epoch != ref.epoch) return;
  note_error(executable->context, answer.error);
  if (answer.status == ReleaseStatus::Rejected) return;
  executable->life = answer.status == ReleaseStatus::Released ? Life::Released : Life::Invalidated;
  if (executable->pins != 0) unpin_list(executable->pins, false);
  executable->pins = 0;
  ContextShadow* context = contexts_.find(executable->context);
  if (context != nullptr && context->epoch == ref.epoch && context->children_live > 0) context->children_live--;
  executables_.retire(ref.id);
}

// ---- end of run ----

std::vector<Violation> ContractChecker::end_of_run() const {
  std::vector<Violation> found;
  auto add = [&](Rule rule, HandleName subject, HandleName related, std::string_view observed) {
    found.push_back(Violation{rule, calls_, Call::None, {subject, related}, rule_info(rule).summary, observed, 0});
  };
  auto context_live = [this](std::uint64_t context_id, std::uint32_t epoch) {
    const ContextShadow* context = contexts_.find(context_id);
    return context != nullptr && context->life == Life::Live && context->epoch == epoch;
  };
  contexts_.for_each([&](std::uint64_t id, const ContextShadow& context) {
    if (context.life == Life::Live) {
      add(Rule::CallerLeak, HandleName{HandleKind::ContextHandle, id, context.epoch}, {}, "the context was never released");
    }
  });
  auto leaks = [&](HandleKind kind, std::string_view observed) {
    return [&, kind, observed](std::uint64_t id, const auto& record) {
      if (record.life != Life::Live || !context_live(record.context, record.epoch)) return;
      add(Rule::CallerLeak, HandleName{kind, id, record.epoch},
          HandleName{HandleKind::ContextHandle, record.context, record.epoch}, observed);
    };
  };
  buffers_.for_each(leaks(HandleKind::BufferHandle, "the buffer was never released"));
  programs_.for_each(leaks(HandleKind::ProgramHandle, "the program was never unloaded"));
  queues_.for_each(leaks(HandleKind::QueueHandle, "the queue was never destroyed"));
  events_.for_each(leaks(HandleKind::EventHandle, "the event was never destroyed"));
  executables_.for_each(leaks(HandleKind::ExecutableHandle, "the executable was never destroyed"));
  queues_.for_each([&](std::uint64_t id, const QueueShadow& queue) {
    if (queue.life == Life::Live && queue.capturing && context_live(queue.context, queue.epoch)) {
      add(Rule::CallerCaptureNotEnded, HandleName{HandleKind::QueueHandle, id, queue.epoch}, {},
          "the run ended with the queue's capture window open");
    }
  });
  return found;
}

std::uint64_t ContractChecker::finish() {
  if (finished_) return violation_count_;
  finished_ = true;
  for (const Violation& violation : end_of_run()) record(violation);
  return violation_count_;
}

}  // namespace quiesce

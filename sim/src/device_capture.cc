// sim::Device: stream capture into reusable executables (CUDA graphs).
//
// begin_capture opens a window on a queue; capture() validates and records batches (nothing runs) and pins
// every buffer and program they name; end_capture turns the record into an Executable that keeps the pins
// until it is destroyed. A synchronize of the capturing queue, or a poll or wait of one of its events,
// fails with code 900 and invalidates the capture: end_capture then fails with 901, yields nothing, and
// still ends the capture. Replays of one executable run one at a time, in submission order (pump).
#include "device_internal.h"
#include "quiesce/sim/device.h"

namespace quiesce::sim {

using namespace internal;  // NOLINT(google-build-using-namespace)

namespace {

constexpr Error kNoExecutables =
    sim_error(ErrorKind::Unsupported, Code::NotSupported, "reusable executables are switched off on this device");
constexpr Error kNotCapturing =
    sim_error(ErrorKind::InvalidArgument, Code::InvalidValue, "the queue is not capturing");

}  // namespace

void Device::invalidate_capture(QueueRecord& queue) { queue.capture_invalidated = true; }

void Device::unpin_store(const CommandStore& store) {
  for (const StagedCommand& command : store.commands) unreference(command, store, true);
}

Status Device::begin_capture(const Queue& queue) {
  ++operations_;
  const auto fail = [&](const Error& error) -> Status {
    note(kCallBeginCapture, queue.id(), &error);
    return error;
  };
  if (!has_capability(Capability::ReusableExecutables)) return fail(kNoExecutables);
  QueueRecord* record = find_queue(queue.ref());
  if (record == nullptr) return fail(kInvalidHandle);
  if (context_of(record->context_id).lost) return fail(kDeviceLost);
  if (record->capturing) {
    return fail(sim_error(ErrorKind::InvalidArgument, Code::StreamCaptureUnsupported, "the queue is already capturing"));
  }
  record->capturing = true;
  record->capture_invalidated = false;
  record->capture.clear();
  note(kCallBeginCapture, queue.id(), nullptr);
  return ok_status();
}

Status Device::capture(const Queue& queue, Batch batch) {
  ++operations_;
  const auto fail = [&](const Error& error) -> Status {
    note(kCallCapture, queue.id(), &error);
    return error;
  };
  if (!has_capability(Capability::ReusableExecutables)) return fail(kNoExecutables);
  QueueRecord* record = find_queue(queue.ref());
  if (record == nullptr) return fail(kInvalidHandle);
  if (context_of(record->context_id).lost) return fail(kDeviceLost);
  if (!record->capturing) return fail(kNotCapturing);
  if (record->capture_invalidated) {
    return fail(sim_error(ErrorKind::InvalidArgument, Code::StreamCaptureInvalidated,
                          "the capture was invalidated by a synchronize, poll or wait on its queue"));
  }
  if (const Status valid = validate_batch(record->context_id, *record, batch, true); !valid.ok()) {
    return fail(valid.error());
  }
  for (const Command& command : batch) stage_command(command, record->capture, nullptr, true);
  note(kCallCapture, queue.id(), nullptr);
  return ok_status();
}

Result<Executable> Device::end_capture(const Queue& queue) {
  ++operations_;
  const auto fail = [&](const Error& error) -> Result<Executable> {
    note(kCallEndCapture, queue.id(), &error);
    return error;
  };
  if (!has_capability(Capability::ReusableExecutables)) return fail(kNoExecutables);
  QueueRecord* record = find_queue(queue.ref());
  if (record == nullptr) return fail(kInvalidHandle);
  ContextRecord* context = &context_of(record->context_id);
  if (!record->capturing) return fail(kNotCapturing);
  record->capturing = false;
  if (context->lost || record->capture_invalidated) {
    unpin_store(record->capture);
    record->capture.clear();
    if (context->lost) return fail(kDeviceLost);
    return fail(sim_error(ErrorKind::InvalidArgument, Code::StreamCaptureInvalidated,
                          "the capture was invalidated; it has ended and yields no executable"));
  }
  const std::uint64_t id = executables_.acquire();
  ExecutableRecord& executable = executables_.at(SlotTable<ExecutableRecord>::slot_of(id));
  executable.context_id = record->context_id;
  executable.store.clear();
  std::swap(executable.store, record->capture);  // the pins move with the commands
  executable.tickets_issued = executable.tickets_served = 0;
  executable.cancelled_tickets.clear();
  executable.replays_in_flight = 0;
  executable.last_replay_clock = VectorClock{};
  context->executables++;
  note(kCallEndCapture, id, nullptr);
  return Executable(id, context->epoch);
}

ReleaseResult<Executable> Device::destroy_executable(Executable&& executable) {
  ++operations_;
  if (!has_capability(Capability::ReusableExecutables)) {
    note(kCallDestroyExecutable, executable.id(), &kNoExecutables);
    return ReleaseResult<Executable>::rejected(std::move(executable), kNoExecutables);
  }
  ExecutableRecord* record = find_executable(executable.ref());
  if (record == nullptr) {
    note(kCallDestroyExecutable, executable.id(), &kInvalidHandle);
    return ReleaseResult<Executable>::rejected(std::move(executable), kInvalidHandle);
  }
  ContextRecord* context = &context_of(record->context_id);
  if (context->lost) {
    note(kCallDestroyExecutable, executable.id(), &kDeviceLost);
    Executable consumed = std::move(executable);
    return ReleaseResult<Executable>::indeterminate(kDeviceLost);
  }
  if (record->replays_in_flight != 0) {
    constexpr Error kReplaying = sim_error(ErrorKind::Busy, Code::ResourceBusy,
                                           "a replay of the executable is still in flight", true);
    note(kCallDestroyExecutable, executable.id(), &kReplaying);
    return ReleaseResult<Executable>::rejected(std::move(executable), kReplaying);
  }
  unpin_store(record->store);
  record->store.clear();
  executables_.release(SlotTable<ExecutableRecord>::slot_of(executable.id()));
  context->executables--;
  note(kCallDestroyExecutable, executable.id(), nullptr);
  Executable consumed = std::move(executable);
  return ReleaseResult<Executable>::released();
}

}  // namespace quiesce::sim

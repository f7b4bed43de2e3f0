// The one list of every field of every record, walked by each encoding.
//
// The binary writer, the binary reader, the JSON writer and the JSON reader are four visitors over these
// functions, so the two encodings cannot drift apart and convert is lossless by construction. A visitor
// provides u32/u64/i32/fixed64/flag/enumeration/id/call_index/clock/text/bytes/values/list/object/status
// members; a reading visitor stops touching the record after its first error.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "quiesce/traces/record.h"

// The binary decoder instantiates these functions once per op with the op known at compile time, so that
// every switch on the op below folds away; forcing them inline is what lets the compiler do so.
#define QUIESCE_FIELDS_INLINE [[gnu::always_inline]] inline
// The same for the lambdas that lists and objects call back: a reading visitor whose address reaches no
// out-of-line function can keep its position in registers.
#define QUIESCE_FIELDS_LAMBDA __attribute__((always_inline))

namespace quiesce::traces::detail {

std::string_view name_of(ErrorKind value);
std::string_view name_of(NativeDomain value);
std::string_view name_of(CommandKind value);
std::string_view name_of(LaunchMode value);
std::string_view name_of(Access value);
std::string_view name_of(EventState value);

inline constexpr std::uint8_t kErrorKindCount = 9;
inline constexpr std::uint8_t kNativeDomainCount = 4;
inline constexpr std::uint8_t kCommandKindCount = 6;
inline constexpr std::uint8_t kLaunchModeCount = 2;
inline constexpr std::uint8_t kAccessCount = 3;
inline constexpr std::uint8_t kEventStateCount = 5;

// subject_kind and result_kind as constant tables (the same op list), for the decoder's per-op code.
inline constexpr std::array<HandleKind, kOpCount> kSubjectKinds = {{
#define QUIESCE_TRACE_OP_SUBJECT(name, text, subject, result) HandleKind::subject,
    QUIESCE_TRACE_OPS(QUIESCE_TRACE_OP_SUBJECT)
#undef QUIESCE_TRACE_OP_SUBJECT
}};
inline constexpr std::array<HandleKind, kOpCount> kResultKinds = {{
#define QUIESCE_TRACE_OP_RESULT(name, text, subject, result) HandleKind::result,
    QUIESCE_TRACE_OPS(QUIESCE_TRACE_OP_RESULT)
#undef QUIESCE_TRACE_OP_RESULT
}};
constexpr HandleKind subject_of(Op op) { return kSubjectKinds[static_cast<std::size_t>(op)]; }
constexpr HandleKind result_of(Op op) { return kResultKinds[static_cast<std::size_t>(op)]; }

// Status byte of the binary encoding: the status in the low bits, then presence flags.
inline constexpr std::uint8_t kStatusMask = 0x0F;
inline constexpr std::uint8_t kHasError = 0x10;
inline constexpr std::uint8_t kHasTiming = 0x20;
inline constexpr std::uint8_t kHasResult = 0x40;

// A reading visitor whose status() always sets the presence flags (has_error, has_timing, has_result) from
// what it reads says so with `static constexpr bool kReadsPresence = true;`: visit_call then does not work
// them out of the record first (a few instructions a record that the binary decoder would throw away).
template <class V>
concept ReadsPresence = V::kReadsPresence;

template <class V>
QUIESCE_FIELDS_INLINE void visit_error(V& v, ErrorValue& error) {
  v.enumeration("kind", error.kind, kErrorKindCount);
  v.enumeration("domain", error.domain, kNativeDomainCount);
  v.i32("code", error.native_code);
  v.flag("injected", error.injected);
  v.flag("retryable", error.retryable);
  v.text("what", error.what);
}

template <class V>
QUIESCE_FIELDS_INLINE void visit_dims(V& v, LaunchDims& dims) {
  v.u32("grid_x", dims.grid_x);
  v.u32("grid_y", dims.grid_y);
  v.u32("grid_z", dims.grid_z);
  v.u32("block_x", dims.block_x);
  v.u32("block_y", dims.block_y);
  v.u32("block_z", dims.block_z);
}

template <class V>
QUIESCE_FIELDS_INLINE void visit_command(V& v, CommandRecord& command) {
  v.enumeration("kind", command.kind, kCommandKindCount);
  switch (command.kind) {
    case CommandKind::Launch:
      v.enumeration("mode", command.mode, kLaunchModeCount);
      v.id("program", HandleKind::Program, command.program);
      visit_dims(v, command.dims);
      v.list("bindings", command.bindings, kBindingsMax, [&v](BindingRecord& binding) QUIESCE_FIELDS_LAMBDA {
        v.id("buffer", HandleKind::Buffer, binding.buffer);
        v.enumeration("access", binding.access, kAccessCount);
      });
      v.bytes("data", command.data);
      return;
    case CommandKind::Copy:
      v.id("source", HandleKind::Buffer, command.source);
      v.u64("source_offset", command.source_offset);
      v.id("target", HandleKind::Buffer, command.target);
      v.u64("target_offset", command.target_offset);
      v.u64("bytes", command.bytes);
      return;
    case CommandKind::Upload:
      v.id("target", HandleKind::Buffer, command.target);
      v.u64("target_offset", command.target_offset);
      v.u64("bytes", command.bytes);
      v.bytes("data", command.data);
      return;
    case CommandKind::Zero:
      v.id("target", HandleKind::Buffer, command.target);
      v.u64("target_offset", command.target_offset);
      v.u64("bytes", command.bytes);
      return;
    case CommandKind::Replay:
      v.id("executable", HandleKind::Executable, command.executable);
      return;
    case CommandKind::Wait:
      v.id("event", HandleKind::Event, command.event);
      return;
  }
}

template <class V>
QUIESCE_FIELDS_INLINE void visit_commands(V& v, CallRecord& call) {
  v.list("commands", call.commands, kCommandsMax, [&v](CommandRecord& command) QUIESCE_FIELDS_LAMBDA { visit_command(v, command); });
}

template <class V>
QUIESCE_FIELDS_INLINE void visit_arguments(V& v, CallRecord& call, Op op) {
  switch (op) {
    case Op::CreateContext:
      v.u32("flags", call.flags);
      return;
    case Op::AllocateBuffer:
      v.u64("bytes", call.size);
      v.u32("usage", call.flags);
      v.u8("mode", call.mode, 2);
      v.id("queue", HandleKind::Queue, call.queue);
      return;
    case Op::WriteBuffer:
      v.u64("offset", call.offset);
      v.bytes("data", call.data);
      return;
    case Op::ReadBuffer:
      v.u64("offset", call.offset);
      v.u64("bytes", call.size);
      return;
    case Op::LoadProgram:
      v.text("kernel", call.name);
      v.u8("format", call.mode, 4);
      v.fixed64("payload_hash", call.payload_hash);
      v.u64("payload_bytes", call.payload_bytes);
      v.u64("resident_bytes", call.resident_bytes);
      return;
    case Op::CreateQueue:
      v.u32("flags", call.flags);
      v.i32("priority", call.priority);
      return;
    case Op::Submit:
      visit_commands(v, call);
      v.u64("admission_timeout_ns", call.admission_timeout_ns);
      v.flag("timing_requested", call.timing_requested);
      v.u64("invocation", call.invocation);
      return;
    case Op::Synchronize:
    case Op::WaitEvent:
      v.u64("timeout_ns", call.timeout_ns);
      return;
    case Op::Capture:
      visit_commands(v, call);
      return;
    case Op::InstallPools:
      v.values("layout", call.layout);
      return;
    default:
      return;
  }
}

template <class V>
QUIESCE_FIELDS_INLINE void visit_results(V& v, CallRecord& call, Op op) {
  switch (op) {
    case Op::Submit:
      v.u32("commands_enqueued", call.commands_enqueued);
      return;
    case Op::WaitEvent:
      v.enumeration("state", call.state, kEventStateCount);
      return;
    case Op::ReadBuffer:
      v.fixed64("data_hash", call.data_hash);
      return;
    case Op::DeviceInfo:
      v.text("device", call.output_text);
      v.values("outputs", call.outputs);
      return;
    case Op::BufferInfo:
    case Op::QueueStateOf:
    case Op::MemoryUsageOf:
    case Op::MemoryReportOf:
      v.values("outputs", call.outputs);
      return;
    default:
      return;
  }
}

// Everything of a call after its op (which each encoding writes in its own way). `op` is call.op.
template <class V>
QUIESCE_FIELDS_INLINE void visit_call(V& v, CallRecord& call, Op op) {
  const HandleKind subject = subject_of(op);
  if (subject != HandleKind::None) v.id("subject", subject, call.subject);
  visit_arguments(v, call, op);
  bool has_timing = false;
  bool has_result = false;
  if constexpr (!ReadsPresence<V>) {
    has_timing = call.timing.has_value();
    has_result = call.result_id != 0 || call.result_epoch != 0;
  }
  v.status(op, call.status, call.has_error, has_timing, has_result);
  if (call.has_error) v.object("error", [&v, &call]() QUIESCE_FIELDS_LAMBDA { visit_error(v, call.error); });
  if (has_result) {
    v.id("result", result_of(op), call.result_id);
    v.u32("result_epoch", call.result_epoch);
  }
  if (has_timing) {
    if (!call.timing.has_value()) call.timing.emplace();
    v.u64("submitted_ns", call.timing->submitted_ns);
    v.u64("started_ns", call.timing->started_ns);
    v.u64("finished_ns", call.timing->finished_ns);
  }
  visit_results(v, call, op);
}

template <class V>
void visit_call(V& v, CallRecord& call) {
  visit_call(v, call, call.op);
}

template <class V>
QUIESCE_FIELDS_INLINE void visit_note(V& v, RecordKind kind, NoteRecord& note) {
  v.call_index("call", note.call_index);
  switch (kind) {
    case RecordKind::Fault:
      v.text("fault", note.name);
      v.text("site", note.detail);
      v.u64("parameter", note.value);
      v.u64("injector_call", note.count);
      v.u64("site_ordinal", note.ordinal);
      return;
    case RecordKind::Schedule:
      v.text("strategy", note.name);
      v.u64("thread", note.value);
      v.u64("runnable", note.count);
      return;
    case RecordKind::Clock:
      v.clock("now_ns", note.value);
      return;
    case RecordKind::Finding:
      v.text("finding", note.name);
      v.text("detail", note.detail);
      return;
    case RecordKind::Violation:
      v.text("rule", note.name);
      v.text("detail", note.detail);
      return;
    case RecordKind::Call:
      return;
  }
}

// Puts a record back to its defaults while keeping the capacity of its vectors and strings.
void reset(Record& record);
void reset(ErrorValue& error);

}  // namespace quiesce::traces::detail

// Names, op tables and small helpers of the trace model.
#include "quiesce/traces/record.h"

#include <array>
#include <cassert>
#include <cstring>
#include <string>

#include "fields.h"
#include "quiesce/core/printable.h"
#include "quiesce/core/seeded_bytes.h"

#ifndef QUIESCE_GIT_COMMIT
#define QUIESCE_GIT_COMMIT "unknown"
#endif
#ifndef QUIESCE_VERSION
#define QUIESCE_VERSION "unknown"
#endif

namespace quiesce::traces {
namespace {

struct OpInfo {
  std::string_view name;
  HandleKind subject;
  HandleKind result;
};

constexpr std::array<OpInfo, kOpCount> kOps = {{
#define QUIESCE_TRACE_OP_INFO(name, text, subject, result) {#text, HandleKind::subject, HandleKind::result},
    QUIESCE_TRACE_OPS(QUIESCE_TRACE_OP_INFO)
#undef QUIESCE_TRACE_OP_INFO
}};

const OpInfo& info(Op op) {
  const auto index = static_cast<std::size_t>(op);
  assert(index < kOps.size());
  return kOps[index];
}

}  // namespace

std::byte Payload::operator[](std::size_t index) const {
  assert(index < size());
  if (!seeded_) return bytes_[index];
  const std::uint64_t word = seeded_detail::word(seed_, index / 8);
  return static_cast<std::byte>((word >> (8 * (index % 8))) & 0xFFU);
}

std::span<const std::byte> Payload::view(std::vector<std::byte>& scratch) const {
  if (!seeded_) return bytes_;
  scratch.resize(seeded_size_);
  fill_seeded_bytes(seed_, scratch);
  return scratch;
}

std::vector<std::byte>& Payload::expand() {
  if (seeded_) {
    seeded_ = false;
    bytes_.resize(seeded_size_);
    fill_seeded_bytes(seed_, bytes_);
  }
  return bytes_;
}

void Payload::assign_seeded(std::uint64_t seed, std::size_t size) {
  assert(size >= kSeededBytesMin);
  bytes_.clear();
  seed_ = seed;
  seeded_size_ = size;
  seeded_ = true;
}

// By content, and never by expanding: bytes match a seed when they are that seed's seeded bytes.
bool operator==(const Payload& a, const Payload& b) {
  if (a.size() != b.size()) return false;
  if (a.seeded_ && b.seeded_) return a.seed_ == b.seed_;
  if (a.seeded_) return seed_of_seeded_bytes(b.bytes_) == a.seed_;
  if (b.seeded_) return seed_of_seeded_bytes(a.bytes_) == b.seed_;
  return a.bytes_.empty() || std::memcmp(a.bytes_.data(), b.bytes_.data(), a.bytes_.size()) == 0;
}

std::string_view to_string(Op op) {
  if (static_cast<std::size_t>(op) >= kOps.size()) return "unknown-op";
  return info(op).name;
}

std::string_view to_string(HandleKind kind) {
  switch (kind) {
    case HandleKind::None: return "none";
    case HandleKind::Context: return "context";
    case HandleKind::Buffer: return "buffer";
    case HandleKind::Program: return "program";
    case HandleKind::Queue: return "queue";
    case HandleKind::Event: return "event";
    case HandleKind::Executable: return "executable";
  }
  return "unknown-handle";
}

std::string_view to_string(RecordKind kind) {
  switch (kind) {
    case RecordKind::Call: return "call";
    case RecordKind::Fault: return "fault";
    case RecordKind::Schedule: return "schedule";
    case RecordKind::Clock: return "clock";
    case RecordKind::Finding: return "finding";
    case RecordKind::Violation: return "violation";
  }
  return "unknown-record";
}

HandleKind subject_kind(Op op) { return info(op).subject; }
HandleKind result_kind(Op op) { return info(op).result; }

StatusKind status_kind(Op op) {
  switch (op) {
    case Op::DestroyContext:
    case Op::FreeBuffer:
    case Op::UnloadProgram:
    case Op::DestroyQueue:
    case Op::DestroyEvent:
    case Op::DestroyExecutable:
      return StatusKind::Release;
    case Op::Submit: return StatusKind::Submit;
    case Op::PollEvent: return StatusKind::Poll;
    case Op::WaitEvent: return StatusKind::Wait;
    default: return StatusKind::Plain;
  }
}

std::uint8_t status_count(Op op) {
  switch (status_kind(op)) {
    case StatusKind::Plain: return 2;
    case StatusKind::Release: return 3;
    case StatusKind::Submit: return 3;
    case StatusKind::Poll: return detail::kEventStateCount;
    case StatusKind::Wait: return 2;
  }
  return 0;
}

std::string_view status_name(Op op, std::uint8_t status) {
  if (status >= status_count(op)) return "unknown-status";
  switch (status_kind(op)) {
    case StatusKind::Plain: return status == 0 ? "ok" : "error";
    case StatusKind::Release: return to_string(static_cast<ReleaseStatus>(status));
    case StatusKind::Submit: return to_string(static_cast<SubmitStatus>(status));
    case StatusKind::Poll: return to_string(static_cast<EventState>(status));
    case StatusKind::Wait: return status == 0 ? "receipt" : "fence-indeterminate";
  }
  return "unknown-status";
}

ErrorValue to_value(const Error& error) {
  return ErrorValue{error.kind, error.domain, error.native_code, error.injected, error.retryable,
                    std::string(error.what)};
}

void reset_record(Record& record) { detail::reset(record); }

std::string_view build_version() { return QUIESCE_VERSION; }
std::string_view build_commit() { return QUIESCE_GIT_COMMIT; }

TraceHeader make_header(std::uint64_t seed) {
  TraceHeader header;
  header.quiesce_version = std::string(build_version());
  header.git_commit = std::string(build_commit());
  header.seed = seed;
  return header;
}

std::uint64_t Trace::call_count() const {
  std::uint64_t calls = 0;
  for (const Record& record : records) calls += record.kind == RecordKind::Call ? 1 : 0;
  return calls;
}

std::string TraceError::message() const {
  std::string text;
  switch (where) {
    case Where::Byte: text = "trace byte " + std::to_string(position) + ": "; break;
    case Where::Line: text = "trace line " + std::to_string(position) + ": "; break;
    case Where::Record: text = "trace record " + std::to_string(position) + ": "; break;
    case Where::File: text = "trace file: "; break;
  }
  return text + printable(what);  // `what` may quote the file's own bytes
}

namespace detail {

std::string_view name_of(ErrorKind value) { return to_string(value); }
std::string_view name_of(NativeDomain value) { return to_string(value); }
std::string_view name_of(CommandKind value) { return to_string(value); }
std::string_view name_of(EventState value) { return to_string(value); }
std::string_view name_of(LaunchMode value) { return value == LaunchMode::Normal ? "normal" : "dry-run"; }
std::string_view name_of(Access value) {
  switch (value) {
    case Access::Read: return "read";
    case Access::Write: return "write";
    case Access::ReadWrite: return "read-write";
  }
  return "unknown-access";
}

void reset(ErrorValue& error) {
  error.kind = ErrorKind::Internal;
  error.domain = NativeDomain::None;
  error.native_code = 0;
  error.injected = false;
  error.retryable = false;
  error.what.clear();
}

namespace {

void reset_call(CallRecord& call) {
  call.op = Op::DeviceInfo;
  call.subject = 0;
  call.offset = 0;
  call.size = 0;
  call.timeout_ns = 0;
  call.flags = 0;
  call.priority = 0;
  call.mode = 0;
  call.queue = 0;
  call.name.clear();
  call.payload_hash = 0;
  call.payload_bytes = 0;
  call.resident_bytes = 0;
  call.admission_timeout_ns = 0;
  call.timing_requested = false;
  call.invocation = 0;
  call.commands.clear();
  call.layout.clear();
  call.data.clear();
  call.status = 0;
  call.has_error = false;
  reset(call.error);
  call.result_id = 0;
  call.result_epoch = 0;
  call.commands_enqueued = 0;
  call.state = EventState::Pending;
  call.timing.reset();
  call.data_hash = 0;
  call.outputs.clear();
  call.output_text.clear();
}

}  // namespace

// Field by field rather than `call = CallRecord{}`: decoding calls this once per record, and rebuilding the
// whole struct (and freeing its buffers) was a quarter of the decode time.
void reset(Record& record) {
  record.kind = RecordKind::Call;
  reset_call(record.call);
  NoteRecord& note = record.note;
  note.call_index = 0;
  note.value = 0;
  note.count = 0;
  note.ordinal = 0;
  note.name.clear();
  note.detail.clear();
}

}  // namespace detail

void reset_record(CallRecord& call) { detail::reset_call(call); }

}  // namespace quiesce::traces

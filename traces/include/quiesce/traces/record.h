// The trace model: what one run did, as plain values (DESIGN §5).
//
// A trace is a header (format and build identity, seed, the whole configuration as text), then records,
// then a footer (record count and digest). A record is either a backend call with its arguments and its
// result, or a note: an injected fault, a scheduling decision, a clock advance, an oracle finding or a
// validator violation. Handles appear as ids, never as pointers; programs appear as kernel name plus a
// content hash of the payload, never the payload, so replaying a stranger's trace cannot run their code.
// Upload and write bytes are kept: they are data, not code. Read results are kept as a hash.
//
// Record is one flat struct rather than a variant so that a streaming reader can decode into the same
// object again and again without allocating (decode speed, DESIGN §9).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quiesce/core/command.h"
#include "quiesce/core/outcome.h"
#include "quiesce/core/result.h"
#include "quiesce/core/types.h"

namespace quiesce::traces {

// The newest format this build writes and reads. A reader accepts every version from 1 up to this one and
// refuses a newer one, saying so. Version 2 stores seeded payload bytes as their seed (docs/trace-format.md).
inline constexpr std::uint32_t kFormatVersion = 2;

// Bounds checked before anything is allocated for a size or count read from a trace.
inline constexpr std::uint64_t kRecordsMax = std::uint64_t{1} << 28;
inline constexpr std::uint64_t kTextBytesMax = std::uint64_t{1} << 20;
inline constexpr std::uint64_t kDataBytesMax = std::uint64_t{1} << 26;
inline constexpr std::uint64_t kCommandsMax = 1U << 16;
inline constexpr std::uint64_t kBindingsMax = 1U << 10;
inline constexpr std::uint64_t kValuesMax = 1U << 12;
inline constexpr std::uint64_t kInternedStringsMax = 1U << 16;

enum class HandleKind : std::uint8_t { None, Context, Buffer, Program, Queue, Event, Executable };
inline constexpr std::uint8_t kHandleKindCount = 7;

// One value per member of the Backend concept that changes or observes the device (describe_error is a
// pure function of its argument and is not recorded). New ops are appended at the end only.
#define QUIESCE_TRACE_OPS(X)                                   \
  X(DeviceInfo, device_info, None, None)                       \
  X(CreateContext, create_context, None, Context)              \
  X(DestroyContext, destroy_context, Context, Context)         \
  X(DiscardContext, discard_context, Context, None)            \
  X(AllocateBuffer, allocate_buffer, Context, Buffer)          \
  X(BufferInfo, buffer_info, Buffer, None)                     \
  X(WriteBuffer, write_buffer, Buffer, None)                   \
  X(ReadBuffer, read_buffer, Buffer, None)                     \
  X(FreeBuffer, free_buffer, Buffer, Buffer)                   \
  X(LoadProgram, load_program, Context, Program)               \
  X(UnloadProgram, unload_program, Program, Program)           \
  X(CreateQueue, create_queue, Context, Queue)                 \
  X(DestroyQueue, destroy_queue, Queue, Queue)                 \
  X(QueueStateOf, queue_state, Queue, None)                    \
  X(Submit, submit, Queue, Event)                              \
  X(Synchronize, synchronize, Queue, None)                     \
  X(PollEvent, poll_event, Event, None)                        \
  X(WaitEvent, wait_event, Event, None)                        \
  X(CancelEvent, cancel_event, Event, None)                    \
  X(DestroyEvent, destroy_event, Event, Event)                 \
  X(BeginCapture, begin_capture, Queue, None)                  \
  X(Capture, capture, Queue, None)                             \
  X(EndCapture, end_capture, Queue, Executable)                \
  X(DestroyExecutable, destroy_executable, Executable, Executable) \
  X(MemoryUsageOf, memory_usage, Context, None)                \
  X(MemoryReportOf, memory_report, Context, None)              \
  X(InstallPools, install_pools, Context, None)                \
  X(MemoryCleanup, memory_cleanup, Context, None)

enum class Op : std::uint8_t {
#define QUIESCE_TRACE_OP_ENUM(name, text, subject, result) name,
  QUIESCE_TRACE_OPS(QUIESCE_TRACE_OP_ENUM)
#undef QUIESCE_TRACE_OP_ENUM
};
inline constexpr std::uint8_t kOpCount = 28;

// How the `status` byte of a call is read depends on its op.
enum class StatusKind : std::uint8_t {
  Plain,    // 0 ok, 1 error (Result<T> and Status)
  Release,  // ReleaseStatus
  Submit,   // SubmitStatus
  Poll,     // EventState of the observation
  Wait,     // 0 receipt, 1 fence indeterminate
};

std::string_view to_string(Op op);
std::string_view to_string(HandleKind kind);
HandleKind subject_kind(Op op);  // the kind of the handle the call acts on
HandleKind result_kind(Op op);   // the kind of the handle the call creates or hands back
StatusKind status_kind(Op op);
std::string_view status_name(Op op, std::uint8_t status);  // "ok", "rejected", "complete", ...
std::uint8_t status_count(Op op);

// An Error with its text owned, so that a decoded trace does not point into freed memory.
struct ErrorValue {
  ErrorKind kind = ErrorKind::Internal;
  NativeDomain domain = NativeDomain::None;
  std::int32_t native_code = 0;
  bool injected = false;
  bool retryable = false;
  std::string what;

  friend bool operator==(const ErrorValue&, const ErrorValue&) = default;
};
ErrorValue to_value(const Error& error);

// The bytes of a write, an upload or a launch's parameters. Format version 2 stores seeded bytes
// (core/seeded_bytes.h) as their seed, and the binary reader keeps them so: a payload holds either its bytes
// or a seed and a length, and a seed's bytes are made only when a consumer asks for them (view, expand,
// operator[]), so decoding does not pay for payloads nobody reads (DESIGN §9). Equality is by content: a
// seed equals the bytes it expands to, however either was made.
class Payload {
 public:
  Payload() = default;
  Payload(std::initializer_list<std::byte> bytes) : bytes_(bytes) {}

  std::size_t size() const { return seeded_ ? seeded_size_ : bytes_.size(); }
  bool empty() const { return size() == 0; }
  // The seed while the payload is held as one; nothing while it holds bytes (seeded or not).
  std::optional<std::uint64_t> held_seed() const {
    return seeded_ ? std::optional<std::uint64_t>(seed_) : std::nullopt;
  }
  std::byte operator[](std::size_t index) const;  // byte `index` < size(), made from the seed when one is held
  // The bytes: those held, or a held seed's expanded into `scratch` (the payload itself is not changed).
  std::span<const std::byte> view(std::vector<std::byte>& scratch) const;
  // Turns a held seed into its bytes, then hands the bytes out to be read or changed in place.
  std::vector<std::byte>& expand();

  void clear() {
    bytes_.clear();
    seeded_ = false;
  }
  void assign(std::span<const std::byte> bytes) {
    seeded_ = false;
    bytes_.assign(bytes.begin(), bytes.end());
  }
  // The seeded bytes of `seed`, `size` (at least kSeededBytesMin) of them, held as the seed.
  void assign_seeded(std::uint64_t seed, std::size_t size);

  friend bool operator==(const Payload& a, const Payload& b);

 private:
  std::vector<std::byte> bytes_;  // empty while a seed is held (its storage is kept for reuse)
  std::uint64_t seed_ = 0;
  std::size_t seeded_size_ = 0;
  bool seeded_ = false;
};

struct BindingRecord {
  std::uint64_t buffer = 0;
  Access access = Access::Read;

  friend bool operator==(const BindingRecord&, const BindingRecord&) = default;
};

// One command of a submitted or captured batch; the fields that a kind does not use stay zero.
struct CommandRecord {
  CommandKind kind = CommandKind::Launch;
  LaunchMode mode = LaunchMode::Normal;
  std::uint64_t program = 0;
  std::uint64_t executable = 0;
  std::uint64_t event = 0;
  std::uint64_t source = 0;
  std::uint64_t target = 0;
  std::uint64_t source_offset = 0;
  std::uint64_t target_offset = 0;
  std::uint64_t bytes = 0;
  LaunchDims dims = {};
  std::vector<BindingRecord> bindings;
  Payload data;  // launch parameters or upload bytes

  friend bool operator==(const CommandRecord&, const CommandRecord&) = default;
};

struct CallRecord {
  // The handles, which whole-trace validation reads of every call, come first: with the record's kind they
  // share its first cache line, and a trace is far larger than the caches (DESIGN §9, replay speed).
  Op op = Op::DeviceInfo;
  std::uint32_t result_epoch = 0;       // result: the epoch of result_id
  std::uint64_t subject = 0;            // id of the handle the call acts on (subject_kind(op)); 0 when none
  std::uint64_t result_id = 0;          // result: the created handle, or the live handle a rejected release returns
  std::vector<CommandRecord> commands;  // submit, capture
  std::uint64_t queue = 0;              // allocate_buffer: the ordering queue of a stream-ordered allocation
  // ---- arguments ----
  std::uint64_t offset = 0;      // write_buffer, read_buffer
  std::uint64_t size = 0;        // read_buffer: bytes asked for; allocate_buffer: bytes
  std::uint64_t timeout_ns = 0;  // synchronize, wait_event
  std::uint32_t flags = 0;       // context and queue flags; allocate_buffer: the BufferUsage bits
  std::int32_t priority = 0;     // create_queue
  std::uint8_t mode = 0;         // allocate_buffer: AllocationMode; load_program: ArtifactFormat
  std::string name;              // load_program: the kernel name
  std::uint64_t payload_hash = 0;
  std::uint64_t payload_bytes = 0;
  std::uint64_t resident_bytes = 0;
  std::uint64_t admission_timeout_ns = 0;  // submit options
  bool timing_requested = false;
  std::uint64_t invocation = 0;
  std::vector<std::uint64_t> layout;    // install_pools: block sizes
  Payload data;                         // write_buffer: the bytes written
  // ---- result ----
  std::uint8_t status = 0;  // read by status_kind(op)
  bool has_error = false;
  ErrorValue error;
  std::uint32_t commands_enqueued = 0;            // submit
  EventState state = EventState::Pending;         // wait_event: the state of the receipt
  std::optional<TimingReceipt> timing;            // poll_event, wait_event
  std::uint64_t data_hash = 0;                    // read_buffer: XXH3 of the bytes read
  std::vector<std::uint64_t> outputs;             // query results, flattened (see print.cc for names)
  std::string output_text;                        // device_info: the device name

  friend bool operator==(const CallRecord&, const CallRecord&) = default;
};

enum class RecordKind : std::uint8_t { Call, Fault, Schedule, Clock, Finding, Violation };
inline constexpr std::uint8_t kRecordKindCount = 6;
std::string_view to_string(RecordKind kind);

// A non-call record. Which fields mean what:
//   Fault:     call_index (the recorded call it was injected into), name (fault kind), detail (site),
//              value (parameter), count (the injector's own call index), ordinal (the site's ordinal)
//   Schedule:  call_index (the next call), name (strategy), value (thread chosen), count (threads runnable)
//   Clock:     call_index (the next call), value (virtual now, ns)
//   Finding:   call_index, name (oracle finding kind), detail
//   Violation: call_index, name (rule), detail
struct NoteRecord {
  std::uint64_t call_index = 0;
  std::uint64_t value = 0;
  std::uint64_t count = 0;
  std::uint64_t ordinal = 0;
  std::string name;
  std::string detail;

  friend bool operator==(const NoteRecord&, const NoteRecord&) = default;
};

struct Record {
  RecordKind kind = RecordKind::Call;
  CallRecord call;
  NoteRecord note;

  // Equality looks only at the part the kind uses.
  friend bool operator==(const Record& a, const Record& b) {
    if (a.kind != b.kind) return false;
    return a.kind == RecordKind::Call ? a.call == b.call : a.note == b.note;
  }
};

// Puts a record back to its defaults, keeping the storage of its vectors and strings for reuse.
void reset_record(Record& record);
// The same for a call's fields only (a recorder's call record, whose note fields it never writes).
void reset_record(CallRecord& call);

struct TraceHeader {
  std::uint32_t format_version = kFormatVersion;
  std::string quiesce_version;
  std::string git_commit;
  std::uint64_t seed = 0;
  std::string device;        // the simulated device's configuration as text
  std::string fault_plan;    // the fault plan as text
  std::string cost_profile;  // the simulator's cost profile as text
  std::string schedule;      // the schedule strategy
  std::string workload;      // workload options as text

  friend bool operator==(const TraceHeader&, const TraceHeader&) = default;
};

// The header a run of this build starts from: its version and commit filled in.
TraceHeader make_header(std::uint64_t seed);
std::string_view build_version();
std::string_view build_commit();

struct TraceFooter {
  std::uint64_t record_count = 0;
  std::uint64_t digest = 0;  // XXH3-64 over the binary encoding of the header and the records

  friend bool operator==(const TraceFooter&, const TraceFooter&) = default;
};

struct Trace {
  TraceHeader header;
  std::vector<Record> records;
  TraceFooter footer;

  std::uint64_t call_count() const;
};

// A problem with a trace: what is wrong and where. `where` names the unit of `position`.
struct TraceError {
  enum class Where : std::uint8_t { Byte, Line, Record, File };
  std::string what;
  Where where = Where::Byte;
  std::uint64_t position = 0;

  std::string message() const;  // "trace byte 1284: record 12 is truncated: ..."
};

template <class T>
using TraceResult = Result<T, TraceError>;

}  // namespace quiesce::traces

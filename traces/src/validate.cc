// Whole-trace sequence checks: handles exist before use, notes name real calls, time moves forward.
#include "quiesce/traces/validate.h"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "quiesce/traces/codec.h"

namespace quiesce::traces {
namespace {

// The ids of one handle kind created so far (never 0): open addressing in a power-of-two table, half full
// at most. Looked up, never iterated, so no order can leak into a result.
class IdSet {
 public:
  bool contains(std::uint64_t id) const {
    for (std::size_t at = slot_of(id);; at = (at + 1) & (slots_.size() - 1)) {
      if (slots_[at] == id) return true;
      if (slots_[at] == 0) return false;
    }
  }
  void insert(std::uint64_t id) {
    if (2 * (used_ + 1) > slots_.size()) grow();
    std::size_t at = slot_of(id);
    while (slots_[at] != 0 && slots_[at] != id) at = (at + 1) & (slots_.size() - 1);
    if (slots_[at] == 0) ++used_;
    slots_[at] = id;
  }

 private:
  std::size_t slot_of(std::uint64_t id) const { return static_cast<std::size_t>((id * 0x9E3779B97F4A7C15ULL) >> shift_); }
  void grow() {
    std::vector<std::uint64_t> old(slots_.size() * 2);
    old.swap(slots_);
    --shift_;
    used_ = 0;
    for (const std::uint64_t id : old) {
      if (id != 0) insert(id);
    }
  }
  std::vector<std::uint64_t> slots_ = std::vector<std::uint64_t>(64);
  unsigned shift_ = 58;  // 64 - log2(slots_.size())
  std::size_t used_ = 0;
};

class Sequence {
 public:
  // Checks one call's handles, then learns the handle it created. False with `error` set on a bad name.
  bool call(std::uint64_t index, const CallRecord& call, TraceError& error) {
    index_ = index;
    op_ = call.op;
    if (!known(subject_kind(call.op), call.subject, "its subject", error)) return false;
    if (call.op == Op::AllocateBuffer && !known(HandleKind::Queue, call.queue, "its ordering queue", error)) return false;
    for (std::size_t position = 0; position < call.commands.size(); ++position) {
      if (!command(call.commands[position], position, error)) return false;
    }
    if (call.result_id != 0 && result_kind(call.op) != HandleKind::None) {
      created_[static_cast<std::size_t>(result_kind(call.op))].insert(call.result_id);
    }
    return true;
  }

 private:
  // The role's text ("command 3's source") is built only for the error.
  bool command(const CommandRecord& command, std::size_t position, TraceError& error) {
    return known(HandleKind::Program, command.program, position, "'s program", error) &&
           known(HandleKind::Executable, command.executable, position, "'s executable", error) &&
           known(HandleKind::Event, command.event, position, "'s event", error) &&
           known(HandleKind::Buffer, command.source, position, "'s source", error) &&
           known(HandleKind::Buffer, command.target, position, "'s target", error) &&
           std::all_of(command.bindings.begin(), command.bindings.end(), [&](const BindingRecord& binding) {
             return known(HandleKind::Buffer, binding.buffer, position, "'s binding", error);
           });
  }
  bool known(HandleKind kind, std::uint64_t id, std::size_t command, const char* role, TraceError& error) const {
    if (id == 0 || kind == HandleKind::None || created_[static_cast<std::size_t>(kind)].contains(id)) return true;
    return unknown(kind, id, "command " + std::to_string(command) + role, error);
  }
  bool known(HandleKind kind, std::uint64_t id, const char* role, TraceError& error) const {
    if (id == 0 || kind == HandleKind::None || created_[static_cast<std::size_t>(kind)].contains(id)) return true;
    return unknown(kind, id, role, error);
  }
  bool unknown(HandleKind kind, std::uint64_t id, const std::string& role, TraceError& error) const {
    error = TraceError{std::string(to_string(op_)) + " names " + std::string(to_string(kind)) + " " + std::to_string(id) +
                           " as " + role + ", but no earlier record created it: an impossible sequence",
                       TraceError::Where::Record, index_};
    return false;
  }

  std::array<IdSet, kHandleKindCount> created_;
  std::uint64_t index_ = 0;
  Op op_ = Op::DeviceInfo;
};

bool check_note(std::uint64_t index, RecordKind kind, const NoteRecord& note, std::uint64_t calls, std::uint64_t& clock_ns,
                TraceError& error) {
  const auto refuse = [&](const std::string& what) {
    error = TraceError{std::string(to_string(kind)) + " " + what, TraceError::Where::Record, index};
    return false;
  };
  switch (kind) {
    case RecordKind::Fault:
      if (note.call_index >= calls) {
        return refuse("names call " + std::to_string(note.call_index) + ", but only " + std::to_string(calls) + " calls came before it");
      }
      return true;
    case RecordKind::Finding:
    case RecordKind::Violation:
      if (note.call_index > calls) {
        return refuse("names call " + std::to_string(note.call_index) + ", but only " + std::to_string(calls) + " calls came before it");
      }
      return true;
    case RecordKind::Clock:
      if (note.value < clock_ns) {
        return refuse("goes back in time from " + std::to_string(clock_ns) + " ns to " + std::to_string(note.value) + " ns");
      }
      clock_ns = note.value;
      [[fallthrough]];
    case RecordKind::Schedule:
      if (note.call_index != calls) {
        return refuse("names call " + std::to_string(note.call_index) + " as the next call, but the next call is " + std::to_string(calls));
      }
      return true;
    case RecordKind::Call:
      return true;
  }
  return true;
}

// A record spans several cache lines and a trace is far larger than the caches, so the lines the checks read
// of a record some records ahead are fetched while this one is checked.
constexpr std::uint64_t kPrefetchAhead = 8;
void prefetch_checked_lines(const Record& record) {
  __builtin_prefetch(&record.kind);
  __builtin_prefetch(&record.call.commands);
  __builtin_prefetch(&record.call.result_id);
  __builtin_prefetch(&record.note.value);
}

}  // namespace

TraceResult<void> validate_trace(const Trace& trace) {
  Sequence sequence;
  TraceError error;
  std::uint64_t calls = 0;
  std::uint64_t clock_ns = 0;
  for (std::uint64_t index = 0; index < trace.records.size(); ++index) {
    const Record& record = trace.records[index];
    if (index + kPrefetchAhead < trace.records.size()) prefetch_checked_lines(trace.records[index + kPrefetchAhead]);
    if (record.kind == RecordKind::Call) {
      if (!sequence.call(index, record.call, error)) return error;
      ++calls;
    } else if (!check_note(index, record.kind, record.note, calls, clock_ns, error)) {
      return error;
    }
  }
  if (trace.footer.record_count != trace.records.size()) {
    return TraceError{"the footer counts " + std::to_string(trace.footer.record_count) + " records but the trace holds " +
                          std::to_string(trace.records.size()),
                      TraceError::Where::Record, trace.records.size()};
  }
  return {};
}

TraceResult<Trace> load_trace(const std::string& path) {
  TraceResult<Trace> trace = read_trace_file(path);
  if (!trace.ok()) return trace;
  TraceResult<void> valid = validate_trace(trace.value());
  if (!valid.ok()) return valid.error();
  return trace;
}

}  // namespace quiesce::traces

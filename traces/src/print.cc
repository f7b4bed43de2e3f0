// One readable line per record.
#include "quiesce/traces/print.h"

#include <string>

#include "fields.h"
#include "quiesce/core/digest.h"
#include "quiesce/core/printable.h"

namespace quiesce::traces {
namespace {

std::string handle(HandleKind kind, std::uint64_t id) { return std::string(to_string(kind)) + " " + std::to_string(id); }

std::string describe_command(const CommandRecord& command) {
  std::string text(to_string(command.kind));
  switch (command.kind) {
    case CommandKind::Launch:
      text += " program " + std::to_string(command.program);
      if (command.mode == LaunchMode::DryRun) text += " dry-run";
      text += " grid " + std::to_string(command.dims.grid_x) + "x" + std::to_string(command.dims.grid_y) + "x" +
              std::to_string(command.dims.grid_z) + " block " + std::to_string(command.dims.block_x) + "x" +
              std::to_string(command.dims.block_y) + "x" + std::to_string(command.dims.block_z);
      for (const BindingRecord& binding : command.bindings) {
        text += " " + handle(HandleKind::Buffer, binding.buffer) + ":" + std::string(detail::name_of(binding.access));
      }
      text += " params " + std::to_string(command.data.size()) + " B";
      break;
    case CommandKind::Copy:
      text += " buffer " + std::to_string(command.source) + "+" + std::to_string(command.source_offset) + " -> buffer " +
              std::to_string(command.target) + "+" + std::to_string(command.target_offset) + " " +
              std::to_string(command.bytes) + " B";
      break;
    case CommandKind::Upload:
    case CommandKind::Zero:
      text += " buffer " + std::to_string(command.target) + "+" + std::to_string(command.target_offset) + " " +
              std::to_string(command.bytes) + " B";
      break;
    case CommandKind::Replay: text += " executable " + std::to_string(command.executable); break;
    case CommandKind::Wait: text += " event " + std::to_string(command.event); break;
  }
  return text;
}

std::string describe_arguments(const CallRecord& call) {
  std::string text;
  switch (call.op) {
    case Op::AllocateBuffer: text = " " + std::to_string(call.size) + " B usage " + std::to_string(call.flags); break;
    case Op::WriteBuffer: text = " +" + std::to_string(call.offset) + " " + std::to_string(call.data.size()) + " B"; break;
    case Op::ReadBuffer: text = " +" + std::to_string(call.offset) + " " + std::to_string(call.size) + " B"; break;
    case Op::LoadProgram: text = " kernel " + call.name + " hash " + to_hex(call.payload_hash); break;
    case Op::Synchronize:
    case Op::WaitEvent: text = " timeout " + std::to_string(call.timeout_ns) + " ns"; break;
    case Op::Submit:
    case Op::Capture: {
      text = " [";
      for (std::size_t index = 0; index < call.commands.size(); ++index) {
        text += (index == 0 ? "" : "; ") + describe_command(call.commands[index]);
      }
      text += "]";
      if (call.op == Op::Submit && call.invocation != 0) text += " invocation " + std::to_string(call.invocation);
      break;
    }
    default: break;
  }
  return text;
}

std::string describe_call(const CallRecord& call) {
  std::string text(to_string(call.op));
  if (call.subject != 0) text += " " + handle(subject_kind(call.op), call.subject);
  text += describe_arguments(call);
  text += " -> ";
  text += status_name(call.op, call.status);
  if (call.op == Op::WaitEvent && call.status == 0) text += " " + std::string(to_string(call.state));
  if (call.result_id != 0) text += " " + handle(result_kind(call.op), call.result_id);
  if (call.op == Op::Submit) text += " enqueued " + std::to_string(call.commands_enqueued);
  if (call.op == Op::ReadBuffer && call.status == 0) text += " data " + to_hex(call.data_hash);
  if (call.timing.has_value()) {
    text += " timing " + std::to_string(call.timing->started_ns) + ".." + std::to_string(call.timing->finished_ns) + " ns";
  }
  if (!call.outputs.empty()) {
    text += " outputs";
    for (const std::uint64_t value : call.outputs) text += " " + std::to_string(value);
  }
  if (call.has_error) {
    text += " error " + std::string(to_string(call.error.kind)) + (call.error.injected ? " (injected)" : "");
    if (!call.error.what.empty()) text += ": " + call.error.what;
  }
  return text;
}

std::string describe_record_text(const Record& record) {
  const NoteRecord& note = record.note;
  switch (record.kind) {
    case RecordKind::Call: return describe_call(record.call);
    case RecordKind::Fault:
      return "fault " + note.name + " at " + note.detail + " (call " + std::to_string(note.call_index) + ", parameter " +
             std::to_string(note.value) + ")";
    case RecordKind::Schedule:
      return "schedule " + note.name + " thread " + std::to_string(note.value) + " of " + std::to_string(note.count);
    case RecordKind::Clock: return "clock " + std::to_string(note.value) + " ns";
    case RecordKind::Finding: return "finding " + note.name + " (call " + std::to_string(note.call_index) + "): " + note.detail;
    case RecordKind::Violation:
      return "violation " + note.name + " (call " + std::to_string(note.call_index) + "): " + note.detail;
  }
  return "unknown record";
}

}  // namespace

// A record's strings come from the file: shown through printable(), so a crafted trace cannot send control
// sequences to the terminal that prints it.
std::string describe_record(const Record& record) { return printable(describe_record_text(record)); }

std::string describe_header(const TraceHeader& header) {
  std::string text = "# quiesce trace, format version " + std::to_string(header.format_version) + ", written by quiesce " +
                     printable(header.quiesce_version) + " (commit " + printable(header.git_commit) + ")\n# seed " +
                     std::to_string(header.seed) + "\n";
  const auto block = [&text](std::string_view name, const std::string& value) {
    if (value.empty()) return;
    text += "# " + std::string(name) + ":\n";
    std::size_t start = 0;
    while (start < value.size()) {
      const std::size_t end = value.find('\n', start);
      text += "#   " + printable(std::string_view(value).substr(start, end == std::string::npos ? std::string::npos : end - start)) +
              "\n";
      if (end == std::string::npos) break;
      start = end + 1;
    }
  };
  block("device", header.device);
  block("fault plan", header.fault_plan);
  block("cost profile", header.cost_profile);
  block("schedule", header.schedule);
  block("workload", header.workload);
  return text;
}

void print_trace(const Trace& trace, std::ostream& out) {
  out << describe_header(trace.header);
  std::uint64_t calls = 0;
  for (std::size_t index = 0; index < trace.records.size(); ++index) {
    const Record& record = trace.records[index];
    out << "#" << index;
    if (record.kind == RecordKind::Call) out << " call " << calls++;
    out << ": " << describe_record(record) << "\n";
  }
  out << "# " << trace.footer.record_count << " records, digest " << to_hex(trace.footer.digest) << "\n";
}

}  // namespace quiesce::traces

// The trace subcommands: load and validate the whole trace, then print, convert or export it.
#include "quiesce/traces/commands.h"

#include <sstream>

#include "quiesce/core/files.h"
#include "quiesce/traces/print.h"
#include "quiesce/traces/validate.h"

namespace quiesce::traces {
namespace {

// Loads and validates `path`, or reports why not on `err`.
std::optional<Trace> load_or_report(const std::string& path, std::ostream& err) {
  TraceResult<Trace> trace = load_trace(path);
  if (!trace.ok()) {
    err << "quiesce: " << path << ": " << trace.error().message() << "\n";
    return std::nullopt;
  }
  return std::move(trace).value();
}

}  // namespace

std::optional<Encoding> encoding_from_string(std::string_view name) {
  if (name == "binary") return Encoding::Binary;
  if (name == "jsonl" || name == "json") return Encoding::JsonLines;
  return std::nullopt;
}

Encoding encoding_for_path(std::string_view path) {
  return path.ends_with(".jsonl") || path.ends_with(".json") ? Encoding::JsonLines : Encoding::Binary;
}

int print_command(const std::string& path, std::ostream& out, std::ostream& err) {
  const std::optional<Trace> trace = load_or_report(path, err);
  if (!trace.has_value()) return kExitBadInput;
  print_trace(*trace, out);
  return kExitDone;
}

int convert_command(const std::string& input_path, const std::string& output_path, Encoding encoding, std::ostream& out,
                    std::ostream& err) {
  const std::optional<Trace> trace = load_or_report(input_path, err);
  if (!trace.has_value()) return kExitBadInput;
  TraceResult<void> written = write_trace_file(output_path, *trace, encoding);
  if (!written.ok()) {
    err << "quiesce: " << written.error().message() << "\n";
    return kExitBadInput;
  }
  out << "wrote " << trace->records.size() << " records to " << output_path << " ("
      << (encoding == Encoding::Binary ? "binary" : "JSON Lines") << ")\n";
  return kExitDone;
}

int timeline_command(const std::string& input_path, const std::string& output_path, std::ostream& out, std::ostream& err) {
  // The timeline cannot be turned back into a trace: written over its own input, the trace would be lost.
  if (is_one_of(output_path, {input_path})) {
    err << "quiesce: the timeline's output '" << output_path << "' is the input trace; name another file\n";
    return kExitBadInput;
  }
  const std::optional<Trace> trace = load_or_report(input_path, err);
  if (!trace.has_value()) return kExitBadInput;
  std::ostringstream timeline;
  write_timeline(*trace, timeline);
  Result<void, FileError> written = write_file_atomically(output_path, timeline.str(), "timeline");
  if (!written.ok()) {
    err << "quiesce: " << written.error().message << "\n";
    return kExitBadInput;
  }
  out << "wrote the timeline of " << trace->records.size() << " records to " << output_path
      << " (open it in ui.perfetto.dev or chrome://tracing)\n";
  return kExitDone;
}

}  // namespace quiesce::traces

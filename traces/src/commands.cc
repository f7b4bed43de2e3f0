// The trace subcommands: load and validate the whole trace, then print, convert or export it.
#include "quiesce/traces/commands.h"

#include <fstream>

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
  const std::optional<Trace> trace = load_or_report(input_path, err);
  if (!trace.has_value()) return kExitBadInput;
  std::ofstream file(output_path, std::ios::trunc);
  if (!file) {
    err << "quiesce: cannot open '" << output_path << "' for writing\n";
    return kExitBadInput;
  }
  write_timeline(*trace, file);
  file.close();
  if (!file) {
    err << "quiesce: cannot write '" << output_path << "'\n";
    return kExitBadInput;
  }
  out << "wrote the timeline of " << trace->records.size() << " records to " << output_path
      << " (open it in ui.perfetto.dev or chrome://tracing)\n";
  return kExitDone;
}

}  // namespace quiesce::traces

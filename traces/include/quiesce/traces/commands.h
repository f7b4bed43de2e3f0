// The trace subcommands of the quiesce CLI, as library functions: each returns the exit status and writes
// to the streams it is given. 0: done; 2: bad input (an unreadable, malformed or impossible trace) or an
// output that cannot be written. Every trace is decoded and validated whole before anything is written.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "quiesce/traces/codec.h"

namespace quiesce::traces {

inline constexpr int kExitDone = 0;
inline constexpr int kExitBadInput = 2;

// quiesce trace print FILE: the header, then one readable line per record.
int print_command(const std::string& path, std::ostream& out, std::ostream& err);

// quiesce trace convert IN OUT [--to binary|jsonl]: either encoding to either, losslessly (OUT may be IN:
// the whole trace is read first and the new file replaces it at once).
int convert_command(const std::string& input_path, const std::string& output_path, Encoding encoding, std::ostream& out,
                    std::ostream& err);

// quiesce trace timeline IN OUT: Chrome trace-event JSON for Perfetto (ui.perfetto.dev) or chrome://tracing.
// OUT naming the input trace is refused: the timeline cannot be turned back into a trace.
int timeline_command(const std::string& input_path, const std::string& output_path, std::ostream& out, std::ostream& err);

// "binary" or "jsonl" (also "json"); anything else is nullopt.
std::optional<Encoding> encoding_from_string(std::string_view name);

// The encoding a trace file's name asks for when none is given: JSON Lines for a name ending in .jsonl or
// .json, binary for any other.
Encoding encoding_for_path(std::string_view path);

}  // namespace quiesce::traces

// Readable forms of a trace: one line per record, and the Chrome trace-event timeline Perfetto opens.
#pragma once

#include <ostream>
#include <string>

#include "quiesce/traces/record.h"

namespace quiesce::traces {

// One line, no newline: "#17 submit queue 3 [launch fill grid 1x1x1 block 64x1x1 ...] -> submitted event 5".
std::string describe_record(const Record& record);
std::string describe_header(const TraceHeader& header);  // several lines, each starting with "# "
void print_trace(const Trace& trace, std::ostream& out);

// Chrome trace-event JSON (the "JSON object format"): one track per queue (tid = queue id, tid 0 = host),
// each batch as a complete ("X") slice from its submit to its first observed terminal in virtual time (or
// the timing receipt when the trace has one) with its commands as slices nested inside it (their bounds
// apportioned by the header's cost profile: timeline.cc), faults, findings and violations as instant ("i") events,
// buffer, program, queue and executable lifetimes as async ("b"/"e") spans, and metadata naming the tracks.
void write_timeline(const Trace& trace, std::ostream& out);

}  // namespace quiesce::traces
